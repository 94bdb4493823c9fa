"""Hostile text in every field of an upload: stored as text, shown escaped on every page, and
neutralised in the CSV download (a spreadsheet would run a cell starting with '=')."""

from __future__ import annotations

import json
from typing import Any

from tests.server.conftest import Service
from tests.server.hostile.checks import formula_cells

# SQL, HTML and a spreadsheet formula in one string, in every text field.
PAYLOAD = (
    '=HYPERLINK("http://evil.invalid","x") <script>alert(\'x\')</script>'
    "<img src=x onerror=alert(1)> '; DROP TABLE results; -- \" ' & "
)
# Values the reader checks against a list (enums) or that the service needs to read as kinds.
KEEP = {"schema", "kind", "pattern", "verdict"}


def poisoned(value: Any, key: str = "") -> Any:
    if isinstance(value, str):
        return value if key in KEEP else PAYLOAD + value
    if isinstance(value, list):
        return [poisoned(item, key) for item in value]
    if isinstance(value, dict):
        return {k: poisoned(v, k) for k, v in value.items()}
    return value


def assert_escaped(page: str) -> None:
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(" in page  # the payload is there, as text


def test_every_page_shows_hostile_text_escaped(service: Service, documents):
    document = poisoned(documents[0])
    response = service.upload(document)
    assert response.status_code == 201, response.text
    first = response.json()["id"]
    second = service.upload(documents[1]).json()["id"]
    row = service.client.get("/api/v1/results", params={"limit": "1"}).json()["results"]
    assert row and row[0]["id"] == second
    hostile = service.client.get(f"/api/v1/results/{first}").json()
    assert hostile["host"]["hostname"].startswith(PAYLOAD)
    model = service.client.get("/api/v1/results", params={"maker": hostile_maker(hostile)})
    model_key = model.json()["results"][0]["model_key"]
    assert all(c.isalnum() or c in "._-" for c in model_key)  # a slug, whatever the upload said

    pages = [
        "/",
        "/?maker=" + PAYLOAD,
        f"/results/{first}",
        f"/devices/{model_key}",
        f"/devices/{model_key}?result={first}",
        f"/compare?id={first}&id={second}",
    ]
    for path in pages:
        page = service.client.get(path)
        assert page.status_code == 200, (path, page.text[:500])
        assert_escaped(page.text)
    error = service.client.get("/results/" + PAYLOAD, headers={"Accept": "text/html"})
    assert error.status_code == 404 and "<script>alert" not in error.text


def hostile_maker(document: dict[str, Any]) -> str:
    maker: str = document["probe"]["devices"][-1]["card"]["manufacturer"]
    return maker


def test_csv_cells_cannot_start_a_formula(service: Service, documents):
    service.upload(poisoned(documents[0]))
    faults = formula_cells(service.client.get("/api/v1/export.csv").text, PAYLOAD.strip())
    assert not faults, faults
    lines = service.client.get("/api/v1/export.jsonl").text.splitlines()
    assert json.loads(lines[0])["host"]["hostname"].startswith(PAYLOAD)


def test_sql_in_every_field_is_stored_as_text(service: Service, documents):
    document = poisoned(documents[0])
    assert service.upload(document).status_code == 201
    assert service.upload(documents[1]).status_code == 201
    assert service.count() == 2  # the table is still there, with both
    stored = service.client.get("/api/v1/results/1").json()
    assert {k: v for k, v in stored.items() if k != "id"} == {
        k: v for k, v in document.items() if k != "id"
    }
