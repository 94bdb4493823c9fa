"""Runs the hostile cases of cases.py against real `flashmark serve` processes on one engine
(SQLite, or a throwaway PostgreSQL) and judges what happened.

Every process started carries an environment marker (HOSTILE_MARKER_ENV, with the lab's own
value) so that whatever a case leaves running is found and killed when the lab closes. Requests
go over loopback with http.client, headers as the case gives them (Host included). Each case
gets an `Outcome`: the sentences of what did not hold; none means held.

Besides its own expectation, every request of every case must be answered below 500, every 4xx
as an RFC 9457 problem (application/problem+json); after the request cases the service must
still show everything it stored: the front page, the API list, both bulk downloads and the
page of every result it kept.
"""

from __future__ import annotations

import contextlib
import csv
import http.client
import io
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from tests.server.hostile import cases as c
from tests.server.throwaway_pg import ThrowawayPostgres

HOSTILE_MARKER_ENV = "FLASHMARK_HOSTILE_LAB"
PROBLEM = "application/problem+json"
START_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 30.0
# A front page or API page larger than this would mean a page's cost is not bounded (50 rows
# of at most 200-character texts are about 100 kB).
PAGE_LIMIT_BYTES = 512 * 1024


@dataclass
class Outcome:
    case_id: str
    category: str
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""

    @property
    def held(self) -> bool:
        return not self.problems

    def report(self) -> str:
        return "\n".join([f"{self.case_id}: {self.note}"] + [f"  - {p}" for p in self.problems])


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    host: str
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


class CaseFailed(Exception):
    """A scenario step that did not hold (the scenario stops there)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def request(
    server: Server,
    method: str,
    target: str,
    body: bytes = b"",
    headers: Sequence[tuple[str, str]] = (),
    *,
    chunked: bool = False,
) -> Answer:
    """One request on its own connection, the headers exactly as given (a Host among them
    replaces the usual one; ("Host", "") sends none)."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=REQUEST_TIMEOUT_S)
    try:
        names = {name.lower() for name, _ in headers}
        connection.putrequest(method, target, skip_host="host" in names, skip_accept_encoding=True)
        for name, value in headers:
            if name.lower() == "host" and value == "":
                continue
            connection.putheader(name, value)
        if chunked:
            connection.putheader("Transfer-Encoding", "chunked")
        elif body or method in ("POST", "PUT"):
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders()
        try:
            if chunked:
                for start in range(0, len(body), 65536):
                    piece = body[start : start + 65536]
                    connection.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                connection.send(b"0\r\n\r\n")
            elif body:
                connection.send(body)
        except OSError:
            pass  # refused before the whole body was read: the answer is still there
        response = connection.getresponse()
        return Answer(
            response.status,
            {name.lower(): value for name, value in response.getheaders()},
            response.read(),
        )
    finally:
        connection.close()


class Lab:
    """One engine's service: a database, `flashmark serve` processes, tokens; closed, it
    leaves nothing running (every process of the lab is found by its marker and killed)."""

    def __init__(self, engine: str, postgres: ThrowawayPostgres | None = None) -> None:
        self.engine = engine
        self.marker = uuid.uuid4().hex
        self.folder = Path(tempfile.mkdtemp(prefix=f"flashmark-hostile-{engine}-"))
        self._own_postgres: ThrowawayPostgres | None = None
        self.postgres = postgres
        self._databases = 0
        self.processes: list[subprocess.Popen[bytes]] = []
        self.main: Server | None = None
        self.main_database = ""
        self.token = ""
        self.revoked_token = ""
        self.kept: list[int] = []  # ids the main service acknowledged
        # Client addresses for the bad-token cases (RFC 5737 documentation range: headers
        # only, no packet goes there), given by X-Forwarded-For, which the service believes
        # from 127.0.0.1 only (uvicorn's --forwarded-allow-ips): each case its own client.
        self._addresses = iter(f"198.51.100.{n}" for n in range(1, 255))

    def client(self) -> str:
        return next(self._addresses)

    # -- set-up ----------------------------------------------------------------------------
    def __enter__(self) -> Lab:
        try:
            if self.engine == "postgres" and self.postgres is None:
                self._own_postgres = ThrowawayPostgres(["fsync=off"]).__enter__()
                self.postgres = self._own_postgres
            self.main_database = self.database("main")
            self.token = self.create_token(self.main_database, "hostile")
            revoked = self.create_token(self.main_database, "revoked")
            self.flashmark("token", "revoke", "revoked", "--database", self.main_database)
            self.revoked_token = revoked
            # The upload rate limit is the API tests' (tests/server): here it would only get
            # in the way of the hundreds of uploads a category makes.
            self.main = self.serve(self.main_database, "--uploads-per-minute", "1000000")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill_lab_processes()
        if self._own_postgres is not None:
            self._own_postgres.__exit__(None, None, None)
        shutil.rmtree(self.folder, ignore_errors=True)

    def database(self, name: str) -> str:
        self._databases += 1
        if self.engine == "sqlite":
            folder = self.folder / f"{name}-{self._databases}"
            folder.mkdir()
            return str(folder / "server.sqlite3")
        assert self.postgres is not None
        return self.postgres.create(f"hostile_{os.getpid()}_{self._databases}_{name}")

    def environment(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            HOSTILE_MARKER_ENV: self.marker,
            "XDG_DATA_HOME": str(self.folder / "data"),
            "XDG_STATE_HOME": str(self.folder / "state"),
            "FLASHMARK_DB": str(self.folder / "history.sqlite3"),
            **extra,
        }

    def flashmark(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flashmark", *args],
            capture_output=True,
            text=True,
            env=self.environment(),
            timeout=timeout,
            check=False,
        )

    def create_token(self, database: str, name: str) -> str:
        done = self.flashmark("token", "create", name, "--database", database)
        if done.returncode != 0:
            raise RuntimeError(f"token create failed: {done.stderr}")
        return done.stdout.strip()

    def start(self, *args: str, log: Path) -> subprocess.Popen[bytes]:
        with log.open("ab") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "flashmark", *args],
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=self.environment(),
            )
        self.processes.append(process)
        return process

    def serve(self, database: str, *options: str, port: int | None = None) -> Server:
        """`flashmark serve` on loopback, answering /api/v1 (or RuntimeError with its log)."""
        port = port or free_port()
        log = self.folder / f"serve-{port}-{len(self.processes)}.log"
        process = self.start(
            "serve",
            "--database",
            database,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            *options,
            log=log,
        )
        server = Server(process, "127.0.0.1", port, log)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(OSError, http.client.HTTPException):
                request(server, "GET", "/api/v1")  # any answer: some refuse the Host sent
                return server
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"flashmark serve did not start: {server.output()[-2000:]}")
            time.sleep(0.05)

    def lab_processes(self) -> list[psutil.Process]:
        found = []
        needle = f"{HOSTILE_MARKER_ENV}={self.marker}".encode()
        for pid in psutil.pids():
            with contextlib.suppress(OSError, psutil.Error):
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    if needle not in handle.read().split(b"\0"):
                        continue
                process = psutil.Process(pid)
                if process.status() != psutil.STATUS_ZOMBIE:
                    found.append(process)
        return found

    def kill_lab_processes(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        for _ in range(3):
            left = self.lab_processes()
            if not left:
                break
            for leftover in left:
                with contextlib.suppress(psutil.Error):
                    leftover.kill()
            psutil.wait_procs(left, timeout=5)
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)

    # -- running ---------------------------------------------------------------------------
    def run(
        self, selected: Sequence[c.Case], on_done: Callable[[Outcome], None] | None = None
    ) -> dict[str, Outcome]:
        """Request cases first (on the main service), then the reads every stored result must
        pass, then the scenarios (each on its own service where it needs one)."""
        outcomes: dict[str, Outcome] = {}
        ordered = sorted(selected, key=lambda case: isinstance(case, c.Scenario))
        for case in ordered:
            outcome = Outcome(case.id, case.category)
            started = time.monotonic()
            try:
                if isinstance(case, c.Upload):
                    self.judge_upload(case, outcome)
                elif isinstance(case, c.Request):
                    self.judge_request(case, outcome)
                else:
                    SCENARIOS[case.name.split("-")[0] if case.category == c.CSV else case.name](
                        self, case, outcome
                    )
            except CaseFailed as failed:
                outcome.problems.append(str(failed))
            except Exception as error:  # a case that broke is a case that did not hold
                outcome.problems.append(f"{type(error).__name__}: {error}")
            outcome.seconds = time.monotonic() - started
            outcomes[case.id] = outcome
            if on_done is not None:
                on_done(outcome)
        return outcomes

    def ask(self, *args: Any, **kwargs: Any) -> Answer:
        assert self.main is not None
        return request(self.main, *args, **kwargs)

    def upload_headers(self, token: str | None = None, **extra: str) -> list[tuple[str, str]]:
        headers = [("Content-Type", "application/json")]
        if token != "":
            headers.append(("Authorization", f"Bearer {token or self.token}"))
        return headers + list(extra.items())

    def count(self) -> int:
        return len(self.ask("GET", "/api/v1/export.jsonl").body.splitlines())

    def judge_upload(self, case: c.Upload, outcome: Outcome) -> None:
        before = self.count()
        answer = self.ask(
            "POST",
            "/api/v1/results",
            case.body,
            [("Content-Type", case.content_type), ("Authorization", f"Bearer {self.token}")],
        )
        outcome.note = f"HTTP {answer.status}"
        problems = outcome.problems
        if case.refused:
            problems += problem_faults(answer, case.status)
            if case.pointer is not None and answer.status == 422:
                pointers = [e.get("pointer", "") for e in safe_json(answer).get("errors", [])]
                if not any(p.startswith("#" + case.pointer) for p in pointers):
                    problems.append(f"the problem names {pointers}, not {case.pointer}")
            if self.count() != before:
                problems.append("a refused upload was stored")
            return
        if answer.status != 201:
            problems.append(f"not kept: HTTP {answer.status} {answer.text[:300]}")
            return
        kept = answer.json()
        self.kept.append(int(kept["id"]))
        if tuple(kept.get("dropped", ())) != case.dropped:
            problems.append(f"dropped {kept.get('dropped')}, not {list(case.dropped)}")
        stored = self.ask("GET", f"/api/v1/results/{kept['id']}").json()
        for pointer in case.dropped:
            if _at(stored, pointer) is not None:
                problems.append(f"the unknown key {pointer} was stored")
        problems += self.shows(int(kept["id"]))

    def shows(self, result_id: int) -> list[str]:
        """What must answer 200 for a stored result: its pages, its JSON, its device page."""
        faults = []
        summary = self.ask("GET", f"/api/v1/results?before={result_id + 1}&limit=1").json()
        model = summary["results"][0]["model_key"] if summary.get("results") else "unknown"
        for target in (
            f"/results/{result_id}",
            f"/api/v1/results/{result_id}",
            f"/devices/{model}?result={result_id}",
            f"/compare?id={result_id}&id={self.kept[0]}"
            if self.kept[0] != result_id
            else f"/results/{result_id}",
        ):
            answer = self.ask("GET", target)
            if answer.status != 200:
                faults.append(f"GET {target}: HTTP {answer.status} {answer.text[:200]}")
        # A result of a campaign: every view of its campaign too.
        document = safe_json(self.ask("GET", f"/api/v1/results/{result_id}"))
        campaign = document.get("campaign")
        if isinstance(campaign, str):
            for target in (
                f"/campaigns/{campaign}",
                f"/api/v1/campaigns/{campaign}",
                f"/api/v1/campaigns/{campaign}/export.csv",
            ):
                answer = self.ask("GET", target)
                if answer.status != 200:
                    faults.append(f"GET {target}: HTTP {answer.status} {answer.text[:200]}")
                elif str(document.get("board_label")) not in answer.text:
                    faults.append(f"GET {target} does not show the board label")
        return faults

    def judge_request(self, case: c.Request, outcome: Outcome) -> None:
        answer = self.ask(case.method, case.target, case.body, case.headers)
        outcome.note = f"HTTP {answer.status}"
        if answer.status not in case.statuses:
            outcome.problems.append(
                f"HTTP {answer.status}, not {sorted(case.statuses)}: {answer.text[:200]}"
            )
        if answer.status >= 400:
            outcome.problems += problem_faults(answer, answer.status)
        if case.never_in_answer:
            shown = answer.text + json.dumps(answer.headers)
            if case.never_in_answer in shown:
                outcome.problems.append(f"the answer holds {case.never_in_answer!r}")

    def reads_hold(self) -> list[str]:
        """After the request cases: every page and download of the main service answers."""
        faults = []
        for target in ("/", "/api/v1/results", "/api/v1/results?limit=200"):
            answer = self.ask("GET", target)
            if answer.status != 200:
                faults.append(f"GET {target}: HTTP {answer.status}")
            elif len(answer.body) > PAGE_LIMIT_BYTES:
                faults.append(f"GET {target}: {len(answer.body)} bytes")
        for target in ("/api/v1/export.csv", "/api/v1/export.jsonl"):
            answer = self.ask("GET", target)
            if answer.status != 200:
                faults.append(f"GET {target}: HTTP {answer.status}")
        return faults


def problem_faults(answer: Answer, status: int) -> list[str]:
    faults = []
    if answer.status != status:
        faults.append(f"HTTP {answer.status}, not {status}: {answer.text[:200]}")
    if answer.status >= 500 and status < 500:
        faults.append(f"a server error for client input: {answer.text[:200]}")
    if answer.headers.get("content-type", "").split(";")[0] not in (PROBLEM, "text/html"):
        faults.append(f"not a problem document: {answer.headers.get('content-type')}")
    elif answer.headers.get("content-type") == PROBLEM:
        body = safe_json(answer)
        if body.get("status") != answer.status or not body.get("detail"):
            faults.append(f"a problem without status or detail: {answer.text[:200]}")
    return faults


def safe_json(answer: Answer) -> dict[str, Any]:
    try:
        value = answer.json()
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _at(document: Any, pointer: str) -> Any:
    for part in pointer.split("/")[1:]:
        if isinstance(document, dict):
            document = document.get(part)
        elif isinstance(document, list) and part.isdigit() and int(part) < len(document):
            document = document[int(part)]
        else:
            return None
    return document


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CaseFailed(message)


# -- scenarios -----------------------------------------------------------------------------------
Scenario = Callable[[Lab, c.Scenario, Outcome], None]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(function: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = function
        return function

    return register


@scenario(
    "missing-token", "wrong-token", "basic-scheme", "sql-in-token", "token-10k", "revoked-token"
)
def _one_bad_token(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    authorization = {
        "missing-token": None,
        "wrong-token": "Bearer fmk_not-a-real-token",
        "basic-scheme": f"Basic {lab.token}",
        "sql-in-token": "Bearer ' OR 1=1 --",
        "token-10k": "Bearer " + "a" * 10_000,
        "revoked-token": f"Bearer {lab.revoked_token}",
    }[case.name]
    kind = {"missing-token": "missing-token", "revoked-token": "revoked-token"}.get(
        case.name, "invalid-token"
    )
    headers = [("Content-Type", "application/json"), ("X-Forwarded-For", lab.client())]
    if authorization is not None:
        headers.append(("Authorization", authorization))
    before = lab.count()
    answer = lab.ask("POST", "/api/v1/results", json.dumps(c.distinct(900)).encode(), headers)
    outcome.note = f"HTTP {answer.status}"
    outcome.problems += problem_faults(answer, 401)
    expect(safe_json(answer).get("type") == f"/api/v1/problems/{kind}", f"not {kind}")
    expect(answer.headers.get("www-authenticate", "").startswith("Bearer"), "no challenge")
    expect(lab.count() == before, "stored with a bad token")


@scenario("bad-tokens-are-slowed")
def _slowed(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    guesser, other = lab.client(), lab.client()
    body = json.dumps(c.distinct(901)).encode()
    statuses = []
    for attempt in range(12):
        token = f"fmk_guess-{attempt}"
        answer = lab.ask(
            "POST",
            "/api/v1/results",
            body,
            lab.upload_headers(token, **{"X-Forwarded-For": guesser}),
        )
        statuses.append(answer.status)
    outcome.note = f"statuses {statuses}"
    expect(statuses[:10] == [401] * 10, "the first 10 wrong tokens were not each a 401")
    expect(statuses[10:] == [429, 429], "the 11th and 12th wrong token were not slowed (429)")
    right = lab.ask(
        "POST", "/api/v1/results", body, lab.upload_headers(**{"X-Forwarded-For": guesser})
    )
    expect(right.status == 429, f"a right token from the slowed address: HTTP {right.status}")
    wait = int(right.headers.get("retry-after", "0"))
    expect(1 <= wait <= 60, f"Retry-After {wait}")
    expect(safe_json(right).get("type") == "/api/v1/problems/too-many-bad-tokens", "type")
    elsewhere = lab.ask(
        "POST", "/api/v1/results", body, lab.upload_headers(**{"X-Forwarded-For": other})
    )
    expect(elsewhere.status == 201, f"another address was slowed too: HTTP {elsewhere.status}")
    lab.kept.append(int(elsewhere.json()["id"]))


@scenario("missing-tokens-are-not-counted")
def _missing_not_counted(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    client = lab.client()
    body = json.dumps(c.distinct(902)).encode()
    for _ in range(15):
        answer = lab.ask(
            "POST", "/api/v1/results", body, lab.upload_headers("", **{"X-Forwarded-For": client})
        )
        expect(answer.status == 401, f"no token: HTTP {answer.status}")
    kept = lab.ask(
        "POST", "/api/v1/results", body, lab.upload_headers(**{"X-Forwarded-For": client})
    )
    expect(kept.status == 201, f"uploads without a token slowed the address: {kept.status}")
    lab.kept.append(int(kept.json()["id"]))


@scenario("chunked-over-limit")
def _chunked(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    body = b" " * (c.MAX_UPLOAD_BYTES + 1)
    answer = lab.ask("POST", "/api/v1/results", body, lab.upload_headers(), chunked=True)
    outcome.note = f"HTTP {answer.status}"
    outcome.problems += problem_faults(answer, 413)


@scenario("content-length-not-a-number")
def _content_length(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    assert lab.main is not None
    with socket.create_connection((lab.main.host, lab.main.port), timeout=10) as raw:
        raw.sendall(
            b"POST /api/v1/results HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Authorization: Bearer " + lab.token.encode() + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 12abc\r\n\r\n{}"
        )
        reply = raw.recv(65536)
    status = int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/") else 0
    outcome.note = f"HTTP {status}"
    expect(400 <= status < 500, f"a malformed Content-Length: {reply[:100]!r}")


@scenario("pages-stay-bounded")
def _bounded_pages(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """60 results of one model with the longest texts allowed, each with its own profile name:
    the front page, the API page and the model's page stay bounded."""
    database = lab.database("bounded")
    token = lab.create_token(database, "bounded")
    server = lab.serve(database, "--uploads-per-minute", "100000")
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
        answer = request(
            server,
            "POST",
            "/api/v1/results",
            json.dumps(document).encode(),
            lab.upload_headers(token),
        )
        expect(answer.status == 201, f"upload {index}: HTTP {answer.status} {answer.text[:200]}")
    sizes = {}
    for target in ("/", "/api/v1/results?limit=200", "/devices/sd-9f-0x5449-sd64g-6.1"):
        answer = request(server, "GET", target)
        expect(answer.status == 200, f"GET {target}: HTTP {answer.status}")
        sizes[target] = len(answer.body)
        expect(len(answer.body) <= PAGE_LIMIT_BYTES, f"GET {target}: {len(answer.body)} bytes")
    device = request(server, "GET", "/devices/sd-9f-0x5449-sd64g-6.1").text
    expect("and 10 more" in device, "the model's page lists more than 50 profiles")
    outcome.note = ", ".join(f"{target} {size // 1024} kB" for target, size in sizes.items())


@scenario("every-read-answers")
def _reads(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """After every hostile upload: the pages, lists and downloads of the service answer, and
    every result it kept is shown."""
    outcome.problems += lab.reads_hold()
    for result_id in lab.kept:
        outcome.problems += lab.shows(result_id)
    outcome.note = f"{len(lab.kept)} kept results shown"


# A result page draws a document of at most --max-upload-bytes; its charts thin long series.
RESULT_PAGE_LIMIT_BYTES = 4 * 1024 * 1024
RESULT_PAGE_LIMIT_S = 15.0


@scenario("a-long-series-draws-a-bounded-page")
def _long_series(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """Nearly 4 MB of one test's per-second samples (300,000 of them): kept, and its page is
    drawn in bounded time and size (each chart line is thinned to its extremes)."""
    document = c.distinct(1200)
    document["tests"] = document["tests"][:1]
    side = document["tests"][0]["write"] or document["tests"][0]["read"]
    side["bw_per_second"]["samples"] = [float(i % 1000) * 1e6 for i in range(300_000)]
    body = json.dumps(document).encode()
    expect(len(body) < c.MAX_UPLOAD_BYTES, f"{len(body)} bytes")
    answer = lab.ask("POST", "/api/v1/results", body, lab.upload_headers())
    expect(answer.status == 201, f"HTTP {answer.status} {answer.text[:200]}")
    result_id = int(answer.json()["id"])
    lab.kept.append(result_id)
    started = time.monotonic()
    page = lab.ask("GET", f"/results/{result_id}")
    seconds = time.monotonic() - started
    outcome.note = (
        f"{len(body) // 1024} kB document, page {len(page.body) // 1024} kB in {seconds:.1f} s"
    )
    expect(page.status == 200, f"HTTP {page.status}")
    expect(len(page.body) <= RESULT_PAGE_LIMIT_BYTES, f"the page has {len(page.body)} bytes")
    expect(seconds <= RESULT_PAGE_LIMIT_S, f"the page took {seconds:.1f} s")


@scenario("host-evil-upload-stores-nothing")
def _evil_upload(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    before = lab.count()
    answer = lab.ask(
        "POST",
        "/api/v1/results",
        json.dumps(c.distinct(903)).encode(),
        lab.upload_headers(Host="evil.example"),
    )
    outcome.problems += problem_faults(answer, 400)
    expect(
        "//evil" not in answer.text and "evil" not in answer.headers.get("location", ""),
        "the answer links to the Host sent",
    )
    expect(lab.count() == before, "stored although the Host was refused")


@scenario("no-host-header")
def _no_host(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    assert lab.main is not None
    with socket.create_connection((lab.main.host, lab.main.port), timeout=10) as raw:
        raw.sendall(b"GET /api/v1 HTTP/1.0\r\n\r\n")
        reply = b""
        while chunk := raw.recv(65536):
            reply += chunk
    status = int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/") else 0
    outcome.note = f"HTTP {status}"
    expect(status == 400, f"a request naming no host: {reply[:120]!r}")


@scenario("trusted-host-links")
def _trusted_links(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    assert lab.main is not None
    answer = lab.ask("GET", "/api/v1", headers=[("Host", f"localhost:{lab.main.port}")])
    expect(answer.status == 200, f"HTTP {answer.status}")
    expect(
        answer.json()["results"] == f"http://localhost:{lab.main.port}/api/v1/results",
        f"links: {answer.json()['results']}",
    )
    database = lab.database("base-url")
    server = lab.serve(database, "--base-url", "https://results.example")
    for host in ("127.0.0.1", "evil.example"):
        answer = request(server, "GET", "/api/v1", headers=[("Host", host)])
        expect(answer.status == 200, f"--base-url, Host {host}: HTTP {answer.status}")
        expect(
            answer.json()["results"] == "https://results.example/api/v1/results",
            f"--base-url ignored: {answer.json()['results']}",
        )
    server = lab.serve(lab.database("trusted"), "--trusted-host", "results.example")
    answer = request(server, "GET", "/api/v1", headers=[("Host", "results.example")])
    expect(answer.status == 200 and "http://results.example/" in answer.text, answer.text[:200])
    answer = request(server, "GET", "/api/v1", headers=[("Host", "127.0.0.1")])
    expect(answer.status == 400, f"a host not in --trusted-host: HTTP {answer.status}")


@scenario("every-answer-refuses-framing")
def _framing(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    first = lab.kept[0] if lab.kept else 1
    second = lab.kept[1] if len(lab.kept) > 1 else 2
    html = [("Accept", "text/html")]
    answers = {
        "/": lab.ask("GET", "/"),
        "/?maker=x": lab.ask("GET", "/?maker=x"),
        "result": lab.ask("GET", f"/results/{first}"),
        "compare": lab.ask("GET", f"/compare?id={first}&id={second}"),
        "device": lab.ask("GET", "/devices/sd-9f-0x5449-sd64g-6.1"),
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
        expect("frame-ancestors 'none'" in policy, f"{name}: CSP {policy!r}")
        expect(answer.headers.get("x-frame-options") == "DENY", f"{name}: no X-Frame-Options")
        expect(answer.status < 500, f"{name}: HTTP {answer.status}")
    outcome.note = f"{len(answers)} answers"


@scenario("text")
def _csv_text(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """A hostile text in every searchable field: kept, and no CSV cell a spreadsheet would run,
    whichever separator it splits at."""
    text = dict(case.options)["text"]
    document = c.distinct(2000 + int(case.name.split("-")[1]))
    device = document["probe"]["devices"][0]
    device["card"]["manufacturer"] = text
    device["card"]["cid"]["product_name"] = text
    document["probe"]["environment"]["board"] = text
    answer = lab.ask("POST", "/api/v1/results", json.dumps(document).encode(), lab.upload_headers())
    expect(answer.status == 201, f"HTTP {answer.status} {answer.text[:200]}")
    lab.kept.append(int(answer.json()["id"]))
    exported = lab.ask("GET", "/api/v1/export.csv").text
    outcome.problems += formula_cells(exported, text)


def formula_cells(exported: str, text: str) -> list[str]:
    rows = list(csv.reader(io.StringIO(exported)))
    cells = [cell for row in rows[1:] for cell in row]
    faults = []
    if not any(text.strip(" ").replace("'", "") in cell.replace("'", "") for cell in cells):
        faults.append(f"the text {text!r} is not in the download")
    for cell in cells:
        parts = [cell]
        for boundary in c.CSV_BOUNDARIES:
            parts += [part for piece in parts for part in piece.split(boundary)[1:]]
        for part in parts:
            if part.lstrip(" ").startswith(c.FORMULA_SIGNS):
                faults.append(f"a cell a spreadsheet would run: {cell!r} ({part[:20]!r})")
                break
    return faults


@scenario("local")
def _local_export(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    document = c.distinct(2100)
    document["probe"]["devices"][0]["card"]["manufacturer"] = "a;=1+1"
    document["target"]["filesystem"] = "=cmd|' /C calc'!A0"
    path = lab.folder / "csv-import.json"
    path.write_text(json.dumps(document))
    done = lab.flashmark("import", str(path))
    expect(done.returncode == 0, f"import: {done.stderr}")
    result_id = done.stdout.split("added as ")[1].split()[0]
    done = lab.flashmark("export", result_id, "-o", "-", "--format", "csv")
    expect(done.returncode == 0, f"export: {done.stderr}")
    outcome.problems += formula_cells(done.stdout, "=cmd|' /C calc'!A0")


# -- storage ---------------------------------------------------------------------------------------


def _upload_to(lab: Lab, server: Server, token: str, index: int) -> Answer:
    return request(
        server,
        "POST",
        "/api/v1/results",
        json.dumps(c.distinct(index)).encode(),
        lab.upload_headers(token),
    )


def _started(index: int) -> str:
    return str(c.distinct(index)["started_at"])


def _sqlite_starts(path: Path, *, alone: bool = False) -> set[str]:
    """The start times of the results in an SQLite file; `alone`: of the file without the WAL
    beside it (a copy read on its own: the WAL at a path is the file's that the path names)."""
    if alone:
        copy = path.with_name(path.name + "-alone")
        shutil.copy(path, copy)
        path = copy
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        return {str(row[0]) for row in connection.execute("SELECT started_at FROM results")}


def _sqlite_ids(path: Path) -> set[int]:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        return {int(row[0]) for row in connection.execute("SELECT id FROM results")}


def _backup(source: Path, target: Path) -> None:
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def _unavailable(answer: Answer) -> list[str]:
    faults = problem_faults(answer, 503)
    if not answer.headers.get("retry-after"):
        faults.append("a 503 without Retry-After")
    return faults


def _stamp(*paths: Path) -> list[tuple[int, int]]:
    stamps = []
    for path in paths:
        try:
            status = path.stat()
            stamps.append((status.st_size, status.st_mtime_ns))
        except FileNotFoundError:
            stamps.append((-1, -1))
    return stamps


@scenario("folder-removed-then-restored")
def _folder_removed(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    database = Path(lab.database("removed"))
    token = lab.create_token(str(database), "storage")
    server = lab.serve(str(database), "--uploads-per-minute", "100000")
    acknowledged = set()
    for index in range(3):
        answer = _upload_to(lab, server, token, 3000 + index)
        expect(answer.status == 201, f"before: HTTP {answer.status}")
        acknowledged.add(int(answer.json()["id"]))
    copy = lab.folder / "removed-backup.sqlite3"
    _backup(database, copy)
    keep = lab.folder / "removed-inode"  # hard links: the removed files stay readable
    keep.mkdir()
    for suffix in ("", "-wal"):
        with contextlib.suppress(FileNotFoundError):
            os.link(f"{database}{suffix}", keep / f"db{suffix}")
    before = _stamp(keep / "db", keep / "db-wal")
    shutil.rmtree(database.parent)
    for index in range(4):
        answer = _upload_to(lab, server, token, 3100 + index)
        outcome.problems += _unavailable(answer)
    outcome.problems += _unavailable(request(server, "GET", "/api/v1/results"))
    expect(_stamp(keep / "db", keep / "db-wal") == before, "written into the removed file")
    database.parent.mkdir()
    shutil.copy(copy, database)
    for index in range(3):
        answer = _upload_to(lab, server, token, 3200 + index)
        expect(answer.status == 201, f"after the folder is back: HTTP {answer.status}")
        acknowledged.add(int(answer.json()["id"]))
    removed = _sqlite_starts(keep / "db", alone=True)
    expect(not {_started(3200 + n) for n in range(3)} & removed, "written into the removed file")
    missing = acknowledged - _sqlite_ids(database)
    expect(not missing, f"acknowledged but not in the file: {sorted(missing)}")
    outcome.note = f"{len(acknowledged)} acknowledged, all kept"


@scenario("file-replaced-by-garbage")
def _replaced_by_garbage(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    database = Path(lab.database("garbage"))
    token = lab.create_token(str(database), "storage")
    server = lab.serve(str(database), "--uploads-per-minute", "100000")
    expect(_upload_to(lab, server, token, 3300).status == 201, "first upload")
    copy = lab.folder / "garbage-backup.sqlite3"
    _backup(database, copy)
    garbage = database.with_name("garbage")
    garbage.write_bytes(b"not a database" * 1000)
    os.replace(garbage, database)
    for index in range(3):
        outcome.problems += _unavailable(_upload_to(lab, server, token, 3310 + index))
    expect(database.read_bytes().startswith(b"not a database"), "the garbage was written into")
    staged = database.with_name("staged")
    shutil.copy(copy, staged)
    os.replace(staged, database)
    answer = _upload_to(lab, server, token, 3320)
    expect(answer.status == 201, f"after a service database is back: HTTP {answer.status}")
    expect(int(answer.json()["id"]) in _sqlite_ids(database), "acknowledged but not in the file")


@scenario("file-replaced-by-a-copy")
def _replaced_by_copy(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    database = Path(lab.database("copy"))
    token = lab.create_token(str(database), "storage")
    server = lab.serve(str(database), "--uploads-per-minute", "100000")
    expect(_upload_to(lab, server, token, 3400).status == 201, "first upload")
    copy = database.with_name("copy.sqlite3")
    _backup(database, copy)
    expect(_upload_to(lab, server, token, 3401).status == 201, "second upload")
    old = lab.folder / "copy-old-inode"  # a hard link: the replaced file stays readable
    os.link(database, old)
    os.replace(copy, database)  # a backup put back while the service runs
    answer = _upload_to(lab, server, token, 3402)
    expect(answer.status == 201, f"after the copy was put in place: HTTP {answer.status}")
    expect(int(answer.json()["id"]) in _sqlite_ids(database), "acknowledged but not in the file")
    expect(_started(3402) not in _sqlite_starts(old, alone=True), "written into the replaced file")
    expect(_started(3401) not in _sqlite_starts(database), "the old file's WAL was read")
    listed = request(server, "GET", "/api/v1/results").json()["results"]
    expect(len(listed) == 2, f"the service does not show the new file: {len(listed)} results")


@scenario("file-removed-reads")
def _removed_reads(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    database = Path(lab.database("reads"))
    token = lab.create_token(str(database), "storage")
    server = lab.serve(str(database))
    answer = _upload_to(lab, server, token, 3500)
    expect(answer.status == 201, "upload")
    result_id = answer.json()["id"]
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{database}{suffix}")
    for target in (
        "/",
        "/api/v1/results",
        f"/api/v1/results/{result_id}",
        "/api/v1/export.jsonl",
        "/devices/sd-9f-0x5449-sd64g-6.1",
    ):
        answer = request(server, "GET", target, headers=[("Accept", "application/json")])
        outcome.problems += [f"GET {target}: {fault}" for fault in _unavailable(answer)]
    expect(not database.exists(), "a new database file was created")


def _database_name(url: str) -> str:
    return urllib.parse.urlsplit(url).path.lstrip("/")


@scenario("server-restarted")
def _pg_restarted(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    assert lab.postgres is not None and lab.main is not None
    expect(
        lab.ask(
            "POST", "/api/v1/results", json.dumps(c.distinct(3600)).encode(), lab.upload_headers()
        ).status
        == 201,
        "before",
    )
    lab.postgres.restart()
    for index in range(3):  # each on a connection the pool held before the restart
        answer = lab.ask(
            "POST",
            "/api/v1/results",
            json.dumps(c.distinct(3601 + index)).encode(),
            lab.upload_headers(),
        )
        expect(answer.status == 201, f"after the restart: HTTP {answer.status} {answer.text}")
        lab.kept.append(int(answer.json()["id"]))
    answer = lab.ask("GET", "/api/v1/results")
    expect(answer.status == 200, f"reading after the restart: HTTP {answer.status}")


@scenario("connections-terminated")
def _pg_terminated(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    import psycopg

    assert lab.postgres is not None
    name = _database_name(lab.main_database)
    with psycopg.connect(lab.postgres.url(), autocommit=True) as admin:
        ended = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s",
            (name,),
        ).fetchone()
    outcome.note = f"{ended[0] if ended else 0} connections ended"
    for index in range(3):
        answer = lab.ask(
            "POST",
            "/api/v1/results",
            json.dumps(c.distinct(3700 + index)).encode(),
            lab.upload_headers(),
        )
        expect(answer.status == 201, f"after its connections ended: HTTP {answer.status}")
        lab.kept.append(int(answer.json()["id"]))


@scenario("database-dropped-reads")
def _pg_dropped(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    assert lab.postgres is not None
    database = lab.database("dropped")
    token = lab.create_token(database, "storage")
    server = lab.serve(database)
    expect(_upload_to(lab, server, token, 3800).status == 201, "upload")
    lab.postgres.drop(_database_name(database))
    # Each request waits for a connection as long as the pool does (5 s): one read, one upload.
    answer = request(server, "GET", "/api/v1/results")
    outcome.problems += [f"GET /api/v1/results: {fault}" for fault in _unavailable(answer)]
    outcome.problems += _unavailable(_upload_to(lab, server, token, 3801))


@scenario("server-restarted-during-uploads")
def _pg_restart_during(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """Uploads while PostgreSQL restarts: each is acknowledged and kept, or refused with 503;
    none is acknowledged and lost, none answered 500."""
    assert lab.postgres is not None
    database = lab.database("restart")
    token = lab.create_token(database, "storage")
    server = lab.serve(database, "--uploads-per-minute", "100000")
    acknowledged: set[int] = set()
    statuses: dict[int, int] = {}
    stop = threading.Event()

    def client(worker: int) -> None:
        index = 0
        while not stop.is_set() and index < 200:
            with contextlib.suppress(OSError, http.client.HTTPException):
                answer = _upload_to(lab, server, token, 4000 + worker * 1000 + index)
                statuses[answer.status] = statuses.get(answer.status, 0) + 1
                if answer.status == 201:
                    acknowledged.add(int(answer.json()["id"]))
            index += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    lab.postgres.restart()
    time.sleep(0.3)
    stop.set()
    for thread in threads:
        thread.join(60)
    outcome.note = f"statuses {statuses}"
    expect(set(statuses) <= {201, 503}, f"answers other than 201 and 503: {statuses}")
    after = _upload_to(lab, server, token, 9999)
    expect(after.status == 201, f"after the restart: HTTP {after.status}")
    acknowledged.add(int(after.json()["id"]))
    import psycopg

    with psycopg.connect(database) as connection:
        stored = {int(row[0]) for row in connection.execute("SELECT id FROM results")}
    expect(acknowledged <= stored, f"acknowledged and lost: {sorted(acknowledged - stored)}")


# -- processes -------------------------------------------------------------------------------------


def _serving(server: Server) -> bool:
    with contextlib.suppress(OSError, http.client.HTTPException):
        request(server, "GET", "/api/v1")
        return True
    return False


def _listeners(port: int) -> list[int]:
    found = []
    for connection in psutil.net_connections(kind="tcp"):
        address = connection.laddr
        if connection.status == psutil.CONN_LISTEN and getattr(address, "port", None) == port:
            found.append(connection.pid or -1)
    return found


def _wait_until(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@scenario("sigkill-leaves-nothing")
def _sigkill(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    server = lab.serve(lab.database("sigkill"))
    children = psutil.Process(server.process.pid).children(recursive=True)
    server.process.kill()
    server.process.wait(10)
    psutil.wait_procs(children, timeout=10)
    expect(not _serving(server), "something still answers after SIGKILL")
    expect(not _listeners(server.port), f"still listening: {_listeners(server.port)}")


@scenario("second-service-refused")
def _second(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    first = lab.serve(lab.database("first"))
    log = lab.folder / "second.log"
    second = lab.start(
        "serve",
        "--database",
        lab.database("second"),
        "--host",
        "127.0.0.1",
        "--port",
        str(first.port),
        log=log,
    )
    status = second.wait(60)
    output = log.read_text()
    outcome.note = f"exit {status}"
    expect(status == 3, f"a second service on a taken port: exit {status}: {output[-300:]}")
    expect("cannot listen" in output and output.count("\n") == 1, output[-300:])
    expect(_serving(first), "the first service stopped answering")


def _workers(lab: Lab, name: str, port: int | None = None) -> tuple[Server, list[psutil.Process]]:
    server = lab.serve(lab.database(name), "--workers", "2", port=port)

    def own_listeners() -> set[int]:
        # Listeners of this service's processes only: on a port a killed service used, its
        # workers may still be closing when this one starts.
        with contextlib.suppress(psutil.Error):
            tree = psutil.Process(server.process.pid).children(recursive=True)
            return set(_listeners(server.port)) & {child.pid for child in tree}
        return set()

    expect(
        _wait_until(lambda: len(own_listeners()) >= 2, 60),
        f"two processes do not listen: {_listeners(server.port)}",
    )
    return server, psutil.Process(server.process.pid).children(recursive=True)


@scenario("workers-end-with-killed-parent")
def _killed_parent(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    server, children = _workers(lab, "killed")
    os.kill(server.process.pid, signal.SIGKILL)  # the parent alone, not its group
    server.process.wait(10)
    gone, alive = psutil.wait_procs(children, timeout=15)
    outcome.note = f"{len(gone)} of {len(children)} processes ended"
    expect(not alive, f"still running after the parent was killed: {[p.pid for p in alive]}")
    expect(not _serving(server), "something still answers")


@scenario("restart-after-killed-parent")
def _restart_after_kill(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    server, children = _workers(lab, "restart-a")
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(10)
    _, alive = psutil.wait_procs(children, timeout=15)  # they end with their parent
    expect(not alive, f"still running after the parent was killed: {[p.pid for p in alive]}")
    restarted, _ = _workers(lab, "restart-b", port=server.port)
    listening = set(_listeners(server.port))
    old = {child.pid for child in children}
    expect(not listening & old, f"an old process listens beside the new service: {listening}")
    answer = request(restarted, "GET", "/api/v1")
    expect(answer.status == 200, f"the restarted service: HTTP {answer.status}")


@scenario("second-service-beside-workers-refused")
def _beside_workers(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    server, _ = _workers(lab, "beside-a")
    log = lab.folder / "beside.log"
    second = lab.start(
        "serve",
        "--database",
        lab.database("beside-b"),
        "--workers",
        "2",
        "--host",
        "127.0.0.1",
        "--port",
        str(server.port),
        log=log,
    )
    status = second.wait(60)
    outcome.note = f"exit {status}"
    expect(status == 3, f"a second service beside running workers: exit {status}")
    expect(len(_listeners(server.port)) == 2, f"listeners: {_listeners(server.port)}")


@scenario("sigterm-stops-workers")
def _sigterm(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    server, children = _workers(lab, "sigterm")
    os.kill(server.process.pid, signal.SIGTERM)
    status = server.process.wait(60)
    _, alive = psutil.wait_procs(children, timeout=30)
    expect(status == 0, f"exit {status}")
    expect(not alive, f"left running: {[p.pid for p in alive]}")


# -- secrets ---------------------------------------------------------------------------------------


@scenario(*(f"unreachable-{name}" for name, _, _ in c.UNREACHABLE))
def _unreachable(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    options = dict(case.options)
    database, secrets = options["database"], options["secrets"]
    statuses = []
    for command in (
        ("serve", "--port", str(free_port())),
        ("token", "list"),
        ("token", "create", "x"),
        ("serve", "--debug", "--port", str(free_port())),
    ):
        done = lab.flashmark(*command, "--database", database, timeout=120)
        statuses.append(done.returncode)
        output = done.stdout + done.stderr
        for secret in secrets:
            expect(secret not in output, f"{' '.join(command)} printed the password: {output}")
        expect(done.returncode == 6, f"{' '.join(command)}: exit {done.returncode}: {output}")
    outcome.note = f"exits {statuses}"


@scenario("token-never-logged")
def _token_logged(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    database = lab.database("logged")
    token = lab.create_token(database, "logged")
    server = lab.serve(database, "--debug")
    expect(_upload_to(lab, server, token, 5000).status == 201, "upload")
    wrong = request(server, "POST", "/api/v1/results", b"{}", lab.upload_headers(token + "x"))
    expect(token not in wrong.text, "a refusal echoed the token")
    listed = lab.flashmark("token", "list", "--database", database)
    time.sleep(0.2)
    expect(token not in server.output(), "the service log holds the token")
    expect(token not in listed.stdout + listed.stderr, "token list printed the token")


@scenario("live-password-url")
def _live_password(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """A live PostgreSQL (trust authentication ignores the password) reached by URLs and a
    key=value string that hold one: nothing the service or the token commands print holds
    it, not even after its connections were ended and PostgreSQL restarted."""
    assert lab.postgres is not None and lab.postgres.folder is not None
    database = lab.database("password")
    name = _database_name(database)
    socket_folder = lab.postgres.folder
    forms = {
        "L1vePass%40word": f"postgresql://postgres:L1vePass%40word@/{name}?host={socket_folder}",
        "L1vePassQuery": f"postgres:///{name}?host={socket_folder}&user=postgres"
        "&password=L1vePassQuery",
        "L1vePassKV": f"host={socket_folder} dbname={name} user=postgres password=L1vePassKV",
    }
    for secret, url in forms.items():
        made = lab.flashmark("token", "create", f"t{len(secret)}", "--database", url)
        expect(made.returncode == 0, f"token create: {made.stderr}")
        token = made.stdout.strip()
        server = lab.serve(url, "--debug")
        expect(_upload_to(lab, server, token, 5100 + len(secret)).status == 201, "upload")
        lab.postgres.restart()
        _upload_to(lab, server, token, 5200 + len(secret))
        listed = lab.flashmark("token", "list", "--database", url)
        output = server.output() + listed.stdout + listed.stderr + made.stderr
        for form in {secret, urllib.parse.unquote(secret)}:
            expect(form not in output, f"the password {form!r} was printed: {output[-500:]}")
        os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(60)


# -- campaigns ----------------------------------------------------------------------------------


@scenario("campaign-job-differs")
def _job_differs(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """A campaign keeps to its first result's job hash: another benchmark's result is refused
    (409, naming what differs) and nothing of it is stored."""
    first = lab.ask(
        "POST", "/api/v1/results", json.dumps(c.in_campaign(3200, "one-job")).encode(),
        lab.upload_headers(),
    )  # fmt: skip
    expect(first.status == 201, f"HTTP {first.status} {first.text[:200]}")
    lab.kept.append(int(first.json()["id"]))
    other = c.in_campaign(3201, "one-job", "board-2")
    other["settings"]["runtime_s"] = 3
    before = lab.count()
    answer = lab.ask("POST", "/api/v1/results", json.dumps(other).encode(), lab.upload_headers())
    outcome.note = f"HTTP {answer.status}"
    outcome.problems += problem_faults(answer, 409)
    expect("runtime_s 3, not" in safe_json(answer).get("detail", ""), "the difference unnamed")
    expect(lab.count() == before, "a result of another job was stored")


@scenario("campaign-of-another-token")
def _another_token(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """A campaign takes results from the token that started it only."""
    first = lab.ask(
        "POST", "/api/v1/results", json.dumps(c.in_campaign(3210, "owned")).encode(),
        lab.upload_headers(),
    )  # fmt: skip
    expect(first.status == 201, f"HTTP {first.status} {first.text[:200]}")
    lab.kept.append(int(first.json()["id"]))
    stranger = lab.create_token(lab.main_database, "stranger")
    before = lab.count()
    answer = lab.ask(
        "POST", "/api/v1/results", json.dumps(c.in_campaign(3211, "owned", "board-2")).encode(),
        lab.upload_headers(stranger),
    )  # fmt: skip
    outcome.note = f"HTTP {answer.status}"
    outcome.problems += problem_faults(answer, 403)
    expect(lab.count() == before, "another token's result joined the campaign")


@scenario("hostile-texts-on-a-campaign-page")
def _campaign_texts(lab: Lab, case: c.Scenario, outcome: Outcome) -> None:
    """Hostile HTML and formulas in every text of a campaign's result (its maker, product,
    board...): kept, escaped on the campaign page, no CSV cell a spreadsheet would run."""
    from tests.server.test_injection import PAYLOAD, assert_escaped, poisoned

    document = poisoned(c.distinct(3220))
    document.update({"campaign": "poisoned", "board_label": "board-1"})
    answer = lab.ask("POST", "/api/v1/results", json.dumps(document).encode(), lab.upload_headers())
    expect(answer.status == 201, f"HTTP {answer.status} {answer.text[:200]}")
    lab.kept.append(int(answer.json()["id"]))
    page = lab.ask("GET", "/campaigns/poisoned")
    expect(page.status == 200, f"HTTP {page.status}")
    try:
        assert_escaped(page.text)
    except AssertionError:
        raise CaseFailed("the campaign page shows the hostile text unescaped") from None
    exported = lab.ask("GET", "/api/v1/campaigns/poisoned/export.csv")
    expect(exported.status == 200, f"HTTP {exported.status}")
    # Figures against the fleet's median may be negative numbers: a number is not a formula.
    texts = io.StringIO()
    csv.writer(texts).writerows(
        [["" if _number(cell) else cell for cell in row]
         for row in csv.reader(io.StringIO(exported.text))]
    )  # fmt: skip
    outcome.problems += formula_cells(texts.getvalue(), PAYLOAD)


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def as_table(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    rows = []
    for category in c.CATEGORIES:
        mine = [o for o in outcomes if o.category == category]
        if mine:
            rows.append(
                {
                    "category": category,
                    "tried": len(mine),
                    "held": sum(o.held for o in mine),
                    "failures": [o for o in mine if not o.held],
                    "seconds": sum(o.seconds for o in mine),
                }
            )
    return rows


@contextlib.contextmanager
def lab_for(engine: str, postgres: ThrowawayPostgres | None = None) -> Iterator[Lab]:
    with Lab(engine, postgres) as lab:
        yield lab
