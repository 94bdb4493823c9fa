"""The API against SQLite and PostgreSQL: uploads, reading, searching, bulk downloads, and every
kind of bad input answered with a JSON problem and nothing stored."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sqlite3
from typing import Any

import pytest

from flashmark.server.intake import accept
from flashmark.server.ranking import standings
from flashmark.server.storage import Search, Stored, open_storage
from tests.server.conftest import Service, variant

PROBLEM = "application/problem+json"


def problem(response: Any, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["type"] == f"/api/v1/problems/{kind}", body
    assert body["title"] and body["detail"]
    return body


def test_an_upload_is_kept_and_the_same_document_gets_the_same_id(service: Service, documents):
    first = service.upload(documents[0])
    assert first.status_code == 201, first.text
    answer = first.json()
    assert answer["url"] == f"http://results.test/api/v1/results/{answer['id']}"
    assert first.headers["location"] == answer["url"]
    again = service.upload(documents[0])
    assert again.status_code == 200 and again.json()["id"] == answer["id"]
    # the uploader's local id is not part of the result: another id, the same result
    renumbered = {**documents[0], "id": 999}
    assert service.upload(renumbered).json()["id"] == answer["id"]
    other = service.upload(documents[1])
    assert other.status_code == 201 and other.json()["id"] != answer["id"]

    stored = service.client.get(f"/api/v1/results/{answer['id']}").json()
    assert stored["id"] == answer["id"]
    assert {k: v for k, v in stored.items() if k != "id"} == {
        k: v for k, v in documents[0].items() if k != "id"
    }


def test_search_by_maker_name_capacity_model_medium_board_and_profile(service: Service, documents):
    card, virtio = documents
    for index in range(3):
        assert service.upload(variant(card, index)).status_code == 201
    assert service.upload(virtio).status_code == 201

    def ids(**params: str) -> int:
        response = service.client.get("/api/v1/results", params=params)
        assert response.status_code == 200, response.text
        return len(response.json()["results"])

    assert ids() == 4
    assert ids(maker="KINGSTON") == 3  # case does not matter
    assert ids(name="sd64") == 3
    assert ids(capacity="64G") == 3  # 62.3e9 bytes usable on a 64 GB card
    assert ids(capacity="32G") == 0
    assert ids(capacity="64000000000") == 3  # bytes
    assert ids(capacity="0.064T") == 3
    assert ids(model="sd-9f-0x5449-sd64g-6.1") == 3
    assert ids(medium="virtio") == 1
    assert ids(board="raspberry pi 5") == 3
    assert ids(profile="standard") == 1
    assert ids(maker="kingston", profile="standard") == 0
    page = service.client.get("/api/v1/results", params={"limit": "2"}).json()
    assert len(page["results"]) == 2 and page["next"]
    following = service.client.get(page["next"].removeprefix("http://results.test")).json()
    assert len(following["results"]) == 2 and following["next"] is None
    first = page["results"][0]
    assert first["headlines"]["seq_read_bps"] is not None and first["page"].endswith(
        f"/results/{first['id']}"
    )


def test_bulk_downloads_hold_every_result(service: Service, documents):
    for index in range(3):
        service.upload(variant(documents[0], index))
    service.upload(documents[1])
    lines = service.client.get("/api/v1/export.jsonl").text.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [1, 2, 3, 4]
    assert json.loads(lines[3])["settings"]["profile"] == "standard"
    response = service.client.get("/api/v1/export.csv")
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [row["id"] for row in rows] == ["1", "2", "3", "4"]
    assert rows[0]["maker"] == "Kingston" and float(rows[0]["seq_read_bps"]) > 1e7


def test_downloads_stream_in_batches_past_one_query(database, documents):
    with contextlib.closing(open_storage(database)) as storage:
        token = storage.token_for(storage.create_token("seed"))
        assert token is not None
        for index in range(7):
            storage.add_result(accept(variant(documents[0], index)), token.id)
        batches = list(storage.export_batches(batch=3))
        assert [len(batch) for batch in batches] == [3, 3, 1]
        assert [row.id for batch in batches for row, _ in batch] == list(range(1, 8))


# -- bad input ------------------------------------------------------------------------------------


def test_wrong_schema_or_version_is_refused_naming_the_accepted_ones(service: Service, documents):
    newer = {**documents[0], "schema": "flashmark.result/2"}
    body = problem(service.upload(newer), 422, "unsupported-schema")
    assert "flashmark.result/1" in body["detail"]
    problem(service.upload({"schema": "flashmark.result/1"}), 422, "invalid-document")
    assert service.client.get("/api/v1").json()["accepted_schemas"] == [
        "flashmark.result/1",
        "flashmark.health/1",
    ]
    assert service.count() == 0


def test_huge_bodies_are_refused_before_being_read_whole(make_service, documents):
    service = make_service(max_upload_bytes=64 * 1024)
    big = json.dumps({**documents[0], "padding": "x" * 200_000}).encode()
    problem(service.upload(big), 413, "too-large")

    def chunks():  # no Content-Length: the limit holds while reading
        for _ in range(100):
            yield b" " * 10_000

    response = service.client.post(
        "/api/v1/results",
        content=chunks(),
        headers={"Authorization": f"Bearer {service.token}", "Content-Type": "application/json"},
    )
    problem(response, 413, "too-large")
    assert service.count() == 0


def test_uploads_are_rate_limited_per_token(make_service, documents):
    service = make_service(uploads_per_minute=1, upload_burst=2)
    assert service.upload(variant(documents[0], 1)).status_code == 201
    assert service.upload(variant(documents[0], 2)).status_code == 201
    response = service.upload(variant(documents[0], 3))
    problem(response, 429, "rate-limited")
    assert 1 <= int(response.headers["retry-after"]) <= 60
    assert service.count() == 2


def test_other_bad_requests_are_problems_not_crashes(service: Service, documents):
    problem(
        service.upload(documents[0], **{"Content-Type": "text/plain"}),
        415,
        "unsupported-media-type",
    )
    problem(service.client.get("/api/v1/results/0"), 404, "not-found")
    problem(service.client.get("/api/v1/results/99"), 404, "not-found")
    problem(service.client.get("/api/v1/results/99999999999999999999"), 404, "not-found")
    problem(service.client.get("/api/v1/results/-1"), 404, "not-found")
    problem(service.client.get("/api/v1/nothing"), 404, "not-found")
    problem(service.client.delete("/api/v1/results"), 405, "method-not-allowed")
    problem(service.client.get("/api/v1/results", params={"limit": "0"}), 400, "bad-query")
    problem(service.client.get("/api/v1/results", params={"limit": "1e9"}), 400, "bad-query")
    problem(service.client.get("/api/v1/results", params={"before": "x"}), 400, "bad-query")
    for size in ("0", "99999999999999999", "64X", "9999999999999999T"):
        problem(service.client.get("/api/v1/results", params={"capacity": size}), 400, "bad-query")
    problem(service.client.get("/api/v1/results", params={"capacity": "lots"}), 400, "bad-query")
    problem(service.client.get("/api/v1/results", params={"maker": "k" * 500}), 400, "bad-query")
    problem(service.client.get("/compare", params={"id": "1"}), 400, "bad-query")
    problem(service.client.get("/compare?id=1&id=99"), 404, "not-found")
    problem(service.client.get("/devices/NOT%20A%20KEY"), 404, "not-found")
    problem(service.client.get("/devices/sd-none"), 404, "not-found")
    # a browser gets the same message as a page
    page = service.client.get("/results/7", headers={"Accept": "text/html"})
    assert page.status_code == 404 and "no result 7" in page.text
    assert page.headers["content-type"].startswith("text/html")


def test_sql_in_search_parameters_is_only_text(service: Service, documents):
    service.upload(documents[0])
    for value in ("' OR '1'='1", "%", "_", "\\", "kingston'; DROP TABLE results; --"):
        for name in ("maker", "name", "board", "model", "medium", "profile"):
            response = service.client.get("/api/v1/results", params={name: value})
            assert response.status_code == 200, response.text
            assert response.json()["results"] == [], (name, value)
    assert service.count() == 1


def test_a_device_page_ranks_a_result_among_the_same_model_and_profile(service, documents):
    card, virtio = documents
    ids = [service.upload(variant(card, index)).json()["id"] for index in range(5)]
    service.upload(virtio)  # another model: not counted
    quick_a2 = {**variant(card, 9), "settings": {**card["settings"], "profile": "a1"}}
    service.upload(quick_a2)  # another profile: not counted
    with contextlib.closing(open_storage(service.database)) as storage:
        row = storage.summary(ids[3])
        assert row is not None
        figures = storage.group_figures(row.model_key, "quick")
        ranked = {s.column: s for s in standings(figures, row.headlines)}
    seq = ranked["seq_read_bps"]
    # variants 0..4 grow with the index: the fourth has 3 below it, none equal besides itself
    assert (seq.count, seq.below, seq.equal) == (5, 3, 1)
    assert seq.percentile == 70.0
    assert sum(seq.bins) == 5 and seq.bins[0] == 1 and seq.bins[-1] == 1
    page = service.client.get(f"/devices/{row.model_key}?result={ids[3]}")
    assert page.status_code == 200, page.text
    assert "percentile <strong>70</strong> of 5" in page.text
    assert page.text.count("<rect") == 6 * 20
    listing = service.client.get(f"/devices/{row.model_key}")
    assert listing.status_code == 200 and "quick</a> (5)" in listing.text
    assert "a1</a> (1)" in listing.text
    problem(service.client.get(f"/devices/{row.model_key}?result=99"), 404, "not-found")


def test_bulk_adding_skips_documents_already_there(database, documents):
    with contextlib.closing(open_storage(database)) as storage:
        token = storage.token_for(storage.create_token("seed"))
        assert token is not None
        first = storage.add_result(accept(variant(documents[0], 0)), token.id)
        batch = [accept(variant(documents[0], index)) for index in range(4)]
        storage.add_results(batch, token.id)
        rows = storage.search(Search(limit=10))[::-1]
        assert len(rows) == 4 and rows[0].id == first.id  # the first one is not added again
        # (a skipped insert may use up a number: ids are unique and growing, not dense)
        assert storage.add_result(batch[2], token.id) == Stored(rows[2].id, created=False)


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)  # the row is rewritten in SQLite
def test_an_internal_error_is_a_problem_with_every_security_header(make_service, documents):
    """A stored document the service cannot unpack (written into the file behind its back): a
    500 problem, secured like every other answer."""
    service = make_service(raise_errors=False)
    result_id = service.upload(documents[0]).json()["id"]
    with contextlib.closing(sqlite3.connect(service.database)) as connection, connection:
        broken = b'{"schema": "flashmark.result/1"}'  # not compressed
        connection.execute("UPDATE results SET document = ? WHERE id = ?", (broken, result_id))
    answer = service.client.get(f"/results/{result_id}")
    problem(answer, 500, "internal-error")
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
