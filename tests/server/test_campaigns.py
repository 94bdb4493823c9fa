"""Campaigns against SQLite and PostgreSQL: a fleet's uploads of one benchmark, one row a board,
the fleet's median and quartiles, the outliers by median +- 3 MAD with the reason in words,
every figure beside the card model's results; the results a campaign refuses; its page and
CSV. Bad campaign names and board labels: hostile/cases.py."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import statistics
from typing import Any

import pytest

from flashmark.server.campaign import MAD_SCALE
from flashmark.server.storage import open_storage
from tests.server.conftest import Service, partial, recorded, variant
from tests.server.test_api import problem

CAMPAIGN = "lab-2026.11_a"
RAND_WRITE = ("rand-write-4k", "write")


def board(document: dict[str, Any], label: str, campaign: str = CAMPAIGN) -> dict[str, Any]:
    return {**document, "campaign": campaign, "board_label": label}


def slowed(document: dict[str, Any], test: tuple[str, str], factor: float) -> dict[str, Any]:
    """The same card with one test's figures times `factor` (a worn or counterfeit unit)."""
    changed = copy.deepcopy(document)
    for result in changed["tests"]:
        if result["name"] == test[0]:
            result[test[1]]["iops"] *= factor
            result[test[1]]["bw_bytes"] *= factor
    return changed


def fleet(service: Service, card: dict[str, Any]) -> dict[str, int]:
    """Four boards of the same card, one of them slow at random 4K writes, and one whose
    card failed mid-run; their result ids by label."""
    uploads = {
        "board-1": variant(card, 1),
        "board-2": variant(card, 2),
        "board-3": variant(card, 3),
        "board-10": slowed(variant(card, 4), RAND_WRITE, 0.5),
        "board-5": partial(variant(card, 5), 2),
    }
    ids = {}
    for label, document in uploads.items():
        answer = service.upload(board(document, label))
        assert answer.status_code == 201, answer.text
        ids[label] = answer.json()["id"]
    return ids


def campaign_json(service: Service, name: str = CAMPAIGN) -> dict[str, Any]:
    answer = service.client.get(f"/api/v1/campaigns/{name}")
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_a_campaign_has_one_row_a_board_and_flags_the_slow_card(service: Service):
    card = recorded("quick-a1-card")
    ids = fleet(service, card)
    body = campaign_json(service)
    assert [b["label"] for b in body["boards"]] == [
        "board-1", "board-2", "board-3", "board-5", "board-10",
    ]  # fmt: skip
    by_label = {b["label"]: b for b in body["boards"]}
    assert {label: b["result"] for label, b in by_label.items()} == ids
    assert [label for label, b in by_label.items() if b["outlier"]] == ["board-10"]
    slow = by_label["board-10"]
    assert slow["flagged"] == ["rand_write_4k_iops"]
    assert len(slow["reasons"]) == 1
    assert slow["reasons"][0].startswith("random 4K write 50% below the fleet median (")
    for label in ("board-1", "board-2", "board-3"):
        assert by_label[label]["reasons"] == [] and by_label[label]["complete"]
    failed = by_label["board-5"]
    assert failed["complete"] is False and failed["outlier"] is False
    assert failed["failed_step"] == "rand-read-4k" and failed["failed_status"] == 5
    assert failed["status"] == "incomplete: the run stopped at rand-read-4k (exit 5)"
    assert failed["figures"]["rand_write_4k_iops"]["value"] is None

    # The fleet's figures are those of the four complete boards, the incomplete one left out.
    complete = [by_label[label] for label in ("board-1", "board-2", "board-3", "board-10")]
    figures = {f["column"]: f for f in body["figures"]}
    values = sorted(b["figures"]["rand_write_4k_iops"]["value"] for b in complete)
    write = figures["rand_write_4k_iops"]
    median = statistics.median(values)
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    mad = statistics.median(abs(v - median) for v in values)
    assert write["boards"] == 4
    assert write["median"] == pytest.approx(median)
    assert (write["q1"], write["q3"]) == (pytest.approx(q1), pytest.approx(q3))
    assert write["iqr"] == pytest.approx(q3 - q1)
    half = max(3 * MAD_SCALE * mad, 0.1 * median)
    assert (write["low"], write["high"]) == (pytest.approx(median - half), median + half)
    assert "median" in body["rule"] and "MAD" in body["rule"]
    assert body["verdict"].startswith("5 boards, 1 outlier (board-10: random 4K write 50% below")
    assert "1 incomplete (board-5: the run stopped at rand-read-4k (exit 5))" in body["verdict"]
    assert body["verdict"].endswith("the other 3 within the fleet's band")
    assert body["job_hash"] and body["job"]["profile"] == "quick"


def test_each_figure_stands_beside_every_result_of_its_card_model(service: Service):
    card = recorded("quick-a1-card")
    # Results of the same model outside the campaign count too.
    for index in range(10, 16):
        assert service.upload(variant(card, index)).status_code == 201
    fleet(service, card)
    everything = service.client.get("/api/v1/results", params={"limit": 200}).json()["results"]
    reads = sorted(result["headlines"]["seq_read_bps"] for result in everything)
    writes = sorted(
        w for result in everything if (w := result["headlines"]["rand_write_4k_iops"]) is not None
    )
    assert len(reads) == 11 and len(writes) == 10  # board-5 measured 2 tests: no random write
    body = campaign_json(service)
    for shown in body["boards"]:
        read = shown["figures"]["seq_read_bps"]
        assert read["model_count"] == 11
        assert read["model_median"] == pytest.approx(statistics.median(reads))
        below = sum(value < read["value"] for value in reads)
        equal = sum(value == read["value"] for value in reads)
        assert read["model_percentile"] == pytest.approx(100 * (below + equal / 2) / 11)
    slow = next(b for b in body["boards"] if b["label"] == "board-10")
    assert slow["figures"]["rand_write_4k_iops"]["model_percentile"] == pytest.approx(5.0)
    assert slow["figures"]["rand_write_4k_iops"]["model_count"] == 10


def test_results_of_another_benchmark_or_token_do_not_join_a_campaign(service: Service):
    card = recorded("quick-a1-card")
    assert service.upload(board(variant(card, 1), "board-1")).status_code == 201
    other = variant(card, 2)
    other["settings"] = {**other["settings"], "runtime_s": 3}
    refused = problem(service.upload(board(other, "board-2")), 409, "campaign-job-differs")
    assert "runtime_s 3, not 8" in refused["detail"]
    assert refused["errors"][0]["pointer"] == "#/campaign"
    newer = variant(card, 3)
    newer["flashmark_version"] = "9.9.9"
    detail = problem(service.upload(board(newer, "board-3")), 409, "campaign-job-differs")
    assert "flashmark_version '9.9.9', not" in detail["detail"]

    with contextlib.closing(open_storage(service.database)) as storage:
        stranger = storage.create_token("stranger")
    answer = service.upload(board(variant(card, 4), "board-4"), token=stranger)
    problem(answer, 403, "campaign-of-another-token")
    assert [b["label"] for b in campaign_json(service)["boards"]] == ["board-1"]
    assert service.count() == 1
    # The same benchmark in another campaign of the stranger's own is fine.
    assert service.upload(board(other, "board-2", "mine"), token=stranger).status_code == 201


def test_a_board_run_again_replaces_its_row_and_keeps_the_earlier_result(service: Service):
    card = recorded("quick-a1-card")
    ids = fleet(service, card)
    again = service.upload(board(variant(card, 9), "board-5"))
    assert again.status_code == 201
    body = campaign_json(service)
    rerun = next(b for b in body["boards"] if b["label"] == "board-5")
    assert rerun["result"] == again.json()["id"] and rerun["earlier"] == [ids["board-5"]]
    assert rerun["complete"] and not rerun["outlier"]
    assert "incomplete" not in body["verdict"]
    assert body["verdict"].startswith("5 boards, 1 outlier (board-10")


def test_a_few_boards_are_too_few_to_judge(service: Service):
    card = recorded("quick-a1-card")
    service.upload(board(variant(card, 1), "board-1"))
    service.upload(board(slowed(variant(card, 2), RAND_WRITE, 0.2), "board-2"))
    body = campaign_json(service)
    assert not any(b["outlier"] for b in body["boards"])
    assert "too few complete boards to find outliers (2; at least 3)" in body["verdict"]
    assert {f["low"] for f in body["figures"]} == {None}


def test_the_campaign_page_and_csv_show_every_board(service: Service):
    card = recorded("quick-a1-card")
    fleet(service, card)
    page = service.client.get(f"/campaigns/{CAMPAIGN}", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    text = page.text
    for label in ("board-1", "board-2", "board-3", "board-5", "board-10"):
        assert f">{label}</a>" in text
    assert text.count('class="outlier"') == 1 and text.count('class="incomplete"') == 1
    assert text.count("n flagged") == 1
    assert "fleet median" in text and "interquartile range" in text
    assert "random 4K write 50% below the fleet median" in text

    export = service.client.get(f"/api/v1/campaigns/{CAMPAIGN}/export.csv")
    assert export.status_code == 200 and export.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(export.text)))
    assert [row["board"] for row in rows] == [
        "board-1", "board-2", "board-3", "board-5", "board-10",
        "fleet median", "fleet Q1", "fleet Q3",
    ]  # fmt: skip
    slow = rows[4]
    assert slow["outlier"] == "true" and slow["reasons"].startswith("random 4K write 50% below")
    body = campaign_json(service)
    assert float(rows[5]["rand_write_4k_iops"]) == pytest.approx(
        body["figures"][3]["median"], abs=1e-3
    )


@pytest.mark.parametrize(
    "path",
    ["/campaigns/nothing-here", "/api/v1/campaigns/nothing-here", "/campaigns/..%2F..",
     "/api/v1/campaigns/%00", "/api/v1/campaigns/" + "x" * 65 + "/export.csv"],
)  # fmt: skip
def test_a_campaign_that_is_not_there_is_not_found(service: Service, path):
    problem(service.client.get(path), 404, "not-found")


def test_a_database_of_the_version_before_campaigns_is_migrated(
    database: str, monkeypatch: pytest.MonkeyPatch
):
    """A service database made before campaigns existed (migrations 0001 and 0002, with a
    result) gets the campaign tables and columns; its result stays, outside any campaign."""
    from flashmark.server import migrations
    from flashmark.server import storage as storage_module
    from flashmark.server.intake import accept

    card = recorded("quick-a1-card")
    with monkeypatch.context() as patched:
        patched.setattr(storage_module, "MIGRATIONS", migrations.MIGRATIONS[:2])
        storage = open_storage(database)
        token = storage.create_token("old")
        with storage._transaction() as run:  # the row as that version wrote it
            run(
                "INSERT INTO results (content_hash, uploaded_at, token_id, schema, started_at, "
                "model_key, profile, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                ("old-hash", "2026-01-01T00:00:00", 1, card["schema"], card["started_at"],
                 "sd-old", "quick", b"x\x9c\x03\x00\x00\x00\x00\x01"),
            )  # fmt: skip
        storage.close()
    with contextlib.closing(open_storage(database)) as storage:
        with storage._transaction() as run:
            names = [row[0] for row in run("SELECT name FROM schema_migrations ORDER BY name")]
            assert names == [name for name, _ in migrations.MIGRATIONS]
            kept = run("SELECT campaign, board_label, job_hash FROM results").fetchall()
            assert [tuple(row) for row in kept] == [(None, None, None)]
        # The token made before still uploads, now into a campaign.
        assert storage.token_for(token) is not None
        stored = storage.add_result(accept(board(variant(card, 1), "board-1")), 1)
        assert stored.created
        record = storage.campaign(CAMPAIGN)
        assert record is not None and [r.board_label for r in record.results] == ["board-1"]


def test_what_the_report_reads_back_is_the_campaign_the_service_built(service: Service):
    from flashmark.server.campaign import NotACampaign, build_campaign, campaign_from_json
    from flashmark.server.campaign import campaign_to_json as to_json
    from flashmark.server.campaign_page import campaign_page

    fleet(service, recorded("quick-a1-card"))
    body = campaign_json(service)
    read = campaign_from_json(body)
    assert to_json(read, "http://results.test") == body
    with contextlib.closing(open_storage(service.database)) as storage:
        record = storage.campaign(CAMPAIGN)
        assert record is not None
        groups = {(r.row.model_key, r.row.profile) for r in record.results}
        built = build_campaign(record, {g: storage.group_figures(*g) for g in groups})
    assert read == built
    # The file and the service's page show the same body.
    page = service.client.get(f"/campaigns/{CAMPAIGN}").text
    standalone = campaign_page(read, standalone=True)
    start, end = page.index("<h1>"), page.index("</table>")
    assert page[start:end] in standalone
    other_column = {**body["figures"][0], "column": "seq_trim_bps"}
    broken: list[Any] = [
        {**body, "boards": [{"label": 7}]}, {**body, "figures": "x"}, [], None,
        {**body, "figures": [other_column, *body["figures"][1:]]},
        {**body, "campaign": "lab\u001b[2J"},
    ]  # fmt: skip
    for answer in broken:
        with pytest.raises(NotACampaign):
            campaign_from_json(answer)
