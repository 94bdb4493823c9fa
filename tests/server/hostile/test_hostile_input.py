"""Hostile input to the results service in this process: Starlette's test client against the
real application on a real SQLite file and on a throwaway PostgreSQL (marker `postgres`):
numbers, Unicode and control characters, sizes, unknown keys and wrong types, bad tokens,
hostile Host headers, framing, CSV injection, and campaign names and board labels.

Cases come from tests/server/hostile/cases.py and are judged by checks.py. What needs a real
`flashmark serve` (the socket, its processes, its database under it, its output) is in
test_hostile_service.py (marker `hostile`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import flashmark
from tests.conftest import DATA
from tests.server.conftest import empty_database, imported
from tests.server.hostile import cases as c
from tests.server.hostile.checks import (
    PAGE_LIMIT_BYTES,
    Answer,
    Client,
    formula_cells,
    problem_faults,
    safe_json,
)

pytest.importorskip("starlette", reason="the server extra is not installed")

from starlette.testclient import TestClient

from flashmark.server.app import ServerConfig, create_app
from flashmark.server.outgoing import outgoing
from flashmark.server.storage import open_storage

MODEL_PAGE = "/devices/sd-9f-0x5449-sd64g-6.1"  # the recorded card's model


@dataclass
class InProcess(Client):
    """The application over Starlette's test client, as a real server is reached: the Host
    it is sent for is loopback's (no --base-url, no --trusted-host)."""

    http: Any = None  # starlette.testclient.TestClient

    def ask(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        headers: Sequence[tuple[str, str]] = (),
    ) -> Answer:
        content = body if body or method in ("POST", "PUT") else None
        response = self.http.request(method, target, content=content, headers=dict(headers))
        return Answer(
            response.status_code,
            {name.lower(): value for name, value in response.headers.items()},
            response.content,
        )

    def at(self, address: str) -> InProcess:
        """The same service asked from another client address (its own failed tokens)."""
        http = TestClient(
            self.http.app,
            base_url="http://127.0.0.1",
            raise_server_exceptions=False,
            client=(address, 50000),
        )
        return InProcess(self.token, self.revoked_token, self.kept, http)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def make_lab(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[], InProcess]]:
    """`make_lab()`: the application on a new database of this engine, with a token and a
    revoked one; every one is closed when the module's tests on this engine are done."""
    with contextlib.ExitStack() as stack:

        def make() -> InProcess:
            url = empty_database(request, tmp_path_factory.mktemp("hostile"))
            with contextlib.closing(open_storage(url)) as storage:
                token = storage.create_token("hostile")
                revoked = storage.create_token("revoked")
                storage.revoke_token("revoked")
            # The upload rate limit is the API tests' (tests/server): here it would only get
            # in the way of the hundreds of uploads the cases make.
            app = create_app(ServerConfig(database=url, uploads_per_minute=1e6))
            http = stack.enter_context(
                TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)
            )
            return InProcess(token, revoked, [], http)

        yield make


@pytest.fixture(scope="module")
def lab(make_lab: Callable[[], InProcess]) -> InProcess:
    """One service for the module's cases on this engine (each case's results are its own)."""
    return make_lab()


@pytest.mark.parametrize("case", c.uploads(), ids=lambda case: case.id)
def test_an_upload_is_refused_naming_the_field_or_kept_and_shown(lab: InProcess, case: c.Upload):
    faults = lab.upload_faults(case)
    assert not faults, faults


@pytest.mark.parametrize("case", c.requests(), ids=lambda case: case.id)
def test_a_hostile_target_query_or_header_is_answered_below_500(lab: InProcess, case: c.Request):
    faults = lab.request_faults(case)
    assert not faults, faults


# -- bad tokens ------------------------------------------------------------------------------


# (name, the Authorization header, the problem's type): {token} and {revoked} are the lab's
BAD_TOKENS = (
    ("missing-token", None, "missing-token"),
    ("wrong-token", "Bearer fmk_not-a-real-token", "invalid-token"),
    ("basic-scheme", "Basic {token}", "invalid-token"),
    ("sql-in-token", "Bearer ' OR 1=1 --", "invalid-token"),
    ("token-10k", "Bearer " + "a" * 10_000, "invalid-token"),
    ("revoked-token", "Bearer {revoked}", "revoked-token"),
)


@pytest.mark.parametrize(
    ("name", "authorization", "kind"), BAD_TOKENS, ids=[f"{n}-{k}" for n, _, k in BAD_TOKENS]
)
def test_a_bad_token_is_refused_with_a_challenge(
    lab: InProcess, name: str, authorization: str | None, kind: str
):
    client = lab.at(f"198.51.100.{10 + len(name)}")  # a client of its own
    headers = [("Content-Type", "application/json")]
    if authorization is not None:
        value = authorization.format(token=lab.token, revoked=lab.revoked_token)
        headers.append(("Authorization", value))
    before = lab.count()
    answer = client.ask("POST", "/api/v1/results", json.dumps(c.distinct(900)).encode(), headers)
    assert not problem_faults(answer, 401)
    assert safe_json(answer).get("type") == f"/api/v1/problems/{kind}"
    if kind == "revoked-token":
        assert "'revoked'" in safe_json(answer)["detail"], "the revoked token is not named"
    assert answer.headers.get("www-authenticate", "").startswith("Bearer"), "no challenge"
    assert lab.count() == before, "stored with a bad token"


def test_uploads_without_a_token_do_not_slow_their_address(lab: InProcess):
    client = lab.at("198.51.100.200")
    for _ in range(15):
        answer = client.upload(902, "")
        assert answer.status == 401
    kept = client.upload(902)
    assert kept.status == 201, "uploads without a token slowed the address"


# -- headers -----------------------------------------------------------------------------------


def test_an_upload_for_an_untrusted_host_stores_nothing_and_links_nowhere(lab: InProcess):
    before = lab.count()
    answer = lab.upload(903, Host="evil.example")
    assert not problem_faults(answer, 400)
    assert "//evil" not in answer.text and "evil" not in answer.headers.get("location", "")
    assert lab.count() == before, "stored although the Host was refused"


def test_every_answer_refuses_framing(lab: InProcess):
    first, second = (int(lab.upload(n).json()["id"]) for n in (904, 905))
    html = [("Accept", "text/html")]
    answers = {
        "/": lab.ask("GET", "/"),
        "/?maker=x": lab.ask("GET", "/?maker=x"),
        "result": lab.ask("GET", f"/results/{first}"),
        "compare": lab.ask("GET", f"/compare?id={first}&id={second}"),
        "device": lab.ask("GET", MODEL_PAGE),
        "css": lab.ask("GET", "/static/server.css"),
        "api": lab.ask("GET", "/api/v1"),
        "api list": lab.ask("GET", "/api/v1/results"),
        "api result": lab.ask("GET", f"/api/v1/results/{first}"),
        "csv": lab.ask("GET", "/api/v1/export.csv"),
        "jsonl": lab.ask("GET", "/api/v1/export.jsonl"),
        "404 page": lab.ask("GET", "/results/999999", headers=html),
        "404 api": lab.ask("GET", "/nothing"),
        "405": lab.ask("DELETE", "/api/v1/results"),
        "400 host": lab.ask("GET", "/", headers=[("Host", "evil.example"), *html]),
    }
    for name, answer in answers.items():
        policy = answer.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy, f"{name}: CSP {policy!r}"
        assert answer.headers.get("x-frame-options") == "DENY", f"{name}: no X-Frame-Options"
        assert answer.status < 500, f"{name}: HTTP {answer.status}"


# -- sizes ---------------------------------------------------------------------------------------


def test_pages_stay_bounded(make_lab: Callable[[], InProcess]):
    """60 results of one model with the longest texts allowed, each with its own profile name:
    the front page, the API page and the model's page stay bounded."""
    fresh = make_lab()
    long_text = "W" * 4096
    for index in range(60):
        document = c.distinct(1000 + index)
        document["host"]["hostname"] = long_text
        device = document["probe"]["devices"][0]
        device["card"]["manufacturer"] = long_text
        device["model"] = long_text
        document["probe"]["environment"]["board"] = long_text
        document["settings"]["profile"] = f"p{index:03d}" + "P" * 196
        document["target"]["given"] = long_text
        answer = fresh.upload(document)
        assert answer.status == 201, f"upload {index}: HTTP {answer.status} {answer.text[:200]}"
    for target in ("/", "/api/v1/results?limit=200", MODEL_PAGE):
        answer = fresh.ask("GET", target)
        assert answer.status == 200, f"GET {target}: HTTP {answer.status}"
        assert len(answer.body) <= PAGE_LIMIT_BYTES, f"GET {target}: {len(answer.body)} bytes"
    assert "and 10 more" in fresh.ask("GET", MODEL_PAGE).text, "more than 50 profiles listed"


# A result page draws a document of at most --max-upload-bytes; its charts thin long series.
RESULT_PAGE_LIMIT_BYTES = 4 * 1024 * 1024
RESULT_PAGE_LIMIT_S = 15.0


def test_a_long_series_draws_a_bounded_page(lab: InProcess):
    """Nearly 4 MB of one test's per-second samples (300,000 of them): kept, and its page is
    drawn in bounded time and size (each chart line is thinned to its extremes)."""
    document = c.distinct(1200)
    document["tests"] = document["tests"][:1]
    side = document["tests"][0]["write"] or document["tests"][0]["read"]
    side["bw_per_second"]["samples"] = [float(i % 1000) * 1e6 for i in range(300_000)]
    body = json.dumps(document).encode()
    assert len(body) < c.MAX_UPLOAD_BYTES
    answer = lab.upload(body)
    assert answer.status == 201, f"HTTP {answer.status} {answer.text[:200]}"
    lab.kept.append(int(answer.json()["id"]))
    started = time.monotonic()
    page = lab.ask("GET", f"/results/{answer.json()['id']}")
    seconds = time.monotonic() - started
    assert page.status == 200
    assert len(page.body) <= RESULT_PAGE_LIMIT_BYTES, f"the page has {len(page.body)} bytes"
    assert seconds <= RESULT_PAGE_LIMIT_S, f"the page took {seconds:.1f} s"


# -- CSV injection -------------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(len(c.CSV_TEXTS)), ids=lambda n: f"text-{n}")
def test_no_csv_cell_of_the_download_starts_a_formula(lab: InProcess, index: int):
    """A hostile text in every searchable field: kept, and no CSV cell a spreadsheet would run,
    whichever separator it splits at (the download holds every result of the module's
    service)."""
    text = c.CSV_TEXTS[index]
    document = c.distinct(2000 + index)
    device = document["probe"]["devices"][0]
    device["card"]["manufacturer"] = text
    device["card"]["cid"]["product_name"] = text
    document["probe"]["environment"]["board"] = text
    answer = lab.upload(document)
    assert answer.status == 201, f"HTTP {answer.status} {answer.text[:200]}"
    lab.kept.append(int(answer.json()["id"]))
    faults = formula_cells(lab.ask("GET", "/api/v1/export.csv").text, text)
    assert not faults, faults


def test_no_csv_cell_of_a_local_export_starts_a_formula(tmp_path: Path):
    document = c.distinct(2100)
    document["probe"]["devices"][0]["card"]["manufacturer"] = "a;=1+1"
    document["target"]["filesystem"] = "=cmd|' /C calc'!A0"
    path = tmp_path / "csv-import.json"
    path.write_text(json.dumps(document))
    env = imported(tmp_path, path)  # added as 1
    done = flashmark("export", "1", "-o", "-", "--format", "csv", env=env)
    assert done.returncode == 0, done.stderr
    faults = formula_cells(done.stdout, "=cmd|' /C calc'!A0")
    assert not faults, faults


# -- campaigns -----------------------------------------------------------------------------------


def test_hostile_texts_on_a_campaign_page_are_escaped_and_run_nothing(lab: InProcess):
    """Hostile HTML and formulas in every text of a campaign's result (its maker, product,
    board...): kept, escaped on the campaign page, no CSV cell a spreadsheet would run."""
    from tests.server.test_injection import PAYLOAD, assert_escaped, poisoned

    document = poisoned(c.distinct(3220))
    document.update({"campaign": "poisoned", "board_label": "board-1"})
    answer = lab.upload(document)
    assert answer.status == 201, f"HTTP {answer.status} {answer.text[:200]}"
    lab.kept.append(int(answer.json()["id"]))
    page = lab.ask("GET", "/campaigns/poisoned")
    assert page.status == 200
    assert_escaped(page.text)
    exported = lab.ask("GET", "/api/v1/campaigns/poisoned/export.csv")
    assert exported.status == 200
    # Figures against the fleet's median may be negative numbers: a number is not a formula.
    texts = io.StringIO()
    csv.writer(texts).writerows(
        [["" if _number(cell) else cell for cell in row]
         for row in csv.reader(io.StringIO(exported.text))]
    )  # fmt: skip
    faults = formula_cells(texts.getvalue(), PAYLOAD)
    assert not faults, faults


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


# -- health readings ---------------------------------------------------------------------------


def health_reading() -> dict[str, Any]:
    """What `flashmark upload` sends of a recorded eMMC health reading."""
    saved = json.loads((DATA / "upload" / "health-emmc.json").read_text(encoding="utf-8"))
    return outgoing(saved)


def _set(document: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    place = document
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = value
    return document


# (name, field, value, status, the pointer the problem names)
HEALTH_REFUSED = (
    ("readings-as-text", ("readings",), "many", 422, "/readings"),
    ("wear-as-list", ("forecast", "wear_low"), [0.1], 422, "/forecast/wear_low"),
    ("percentage-as-text", ("health", "percentage_used"), "5%", 422, "/health/percentage_used"),
    ("counter-as-number", ("counter",), 7, 422, "/counter"),
    ("capacity-beyond-64-bits", ("capacity_bytes",), 2**70, 422, "/capacity_bytes"),
    ("span-beyond-any-figure", ("span_days",), 1e300, 422, "/span_days"),
    ("model-of-100k-characters", ("model",), "M" * 100_000, 422, "/model"),
    ("red-flag-of-a-megabyte", ("red_flags",), ["x" * 1_000_000], 422, "/red_flags/0"),
    ("in-a-campaign", ("campaign",), "hostile", 422, "/campaign"),
)


@pytest.mark.parametrize(
    ("field", "value", "status", "pointer"),
    [case[1:] for case in HEALTH_REFUSED],
    ids=[case[0] for case in HEALTH_REFUSED],
)
def test_a_hostile_health_reading_is_refused_naming_the_field(
    lab: InProcess, field: tuple[str, ...], value: Any, status: int, pointer: str
):
    document = _set(health_reading(), field, value)
    if field == ("campaign",):
        document["board_label"] = "board-1"
    answer = lab.upload(document)
    assert not problem_faults(answer, status)
    pointers = [error.get("pointer", "") for error in safe_json(answer).get("errors", [])]
    assert any(named.startswith("#" + pointer) for named in pointers), pointers


def test_a_health_reading_drops_unknown_keys_and_is_shown(lab: InProcess):
    document = health_reading()
    document["from_the_future"] = {"x": 1}
    document["forecast"]["tomorrow"] = "sunny"
    answer = lab.upload(document)
    assert answer.status == 201, answer.text[:300]
    kept = answer.json()
    assert sorted(kept["dropped"]) == ["/forecast/tomorrow", "/from_the_future"]
    assert kept["url"].endswith(f"/api/v1/health/{kept['id']}")
    stored = lab.ask("GET", f"/api/v1/health/{kept['id']}").json()
    assert "from_the_future" not in stored and "tomorrow" not in stored["forecast"]
    page = lab.ask("GET", f"/health/{kept['id']}")
    assert page.status == 200 and "M8G1GC" in page.text
    for missing in (f"/health/{kept['id'] + 1000}", "/api/v1/health/999999", "/health/x%00"):
        assert not problem_faults(lab.ask("GET", missing), 404), missing


def test_every_read_answers_after_the_hostile_cases(lab: InProcess):
    """Last of the module: after every hostile case on the service (and at least every upload
    case that is kept), its pages, lists and downloads answer, bounded, and every result it
    kept is shown."""
    for case in c.uploads():
        if not case.refused:
            answer = lab.upload(case.body)
            assert answer.status in (200, 201), f"{case.id}: HTTP {answer.status}"
            lab.kept.append(int(answer.json()["id"]))
    faults = lab.reads_hold()
    for result_id in dict.fromkeys(lab.kept):
        faults += lab.shows(result_id)
    assert not faults, faults
