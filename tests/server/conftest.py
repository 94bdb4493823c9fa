"""Fixtures of the results service's tests: the same tests against SQLite and a real, throwaway
PostgreSQL server; the application through Starlette's test client (real ASGI, real HTTP
semantics, no socket) or as a real `flashmark serve` process on loopback."""

from __future__ import annotations

import contextlib
import copy
import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import flashmark
from tests.conftest import DATA
from tests.server.throwaway_pg import ThrowawayPostgres, missing_reason

RECORDED = ("quick-a1-card", "standard-fast-card")
IN_CI = os.environ.get("CI") == "true"
START_TIMEOUT_S = 30.0


def skip_or_fail(reason: str) -> None:
    if IN_CI:  # CI installs PostgreSQL and Chromium: a skip there would hide a failure
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[ThrowawayPostgres]:
    reason = missing_reason()
    if reason:
        skip_or_fail(reason)
    # fsync=off: these tests kill the service, never PostgreSQL, so they do not depend on
    # PostgreSQL's own durability; the benchmark runs with the default (fsync on).
    with ThrowawayPostgres(["fsync=off", "synchronous_commit=off"]) as server:
        yield server


_counter = iter(range(1, 10**6))


# On one engine: @pytest.mark.parametrize("database", ["sqlite"], indirect=True)
@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return empty_database(request, tmp_path)


def empty_database(request: pytest.FixtureRequest, folder: Path) -> str:
    """A new service database on the engine `request` is for: an SQLite file in `folder`, or a
    new database on the PostgreSQL server."""
    if request.param == "sqlite":
        return str(folder / "server.sqlite3")
    server: ThrowawayPostgres = request.getfixturevalue("pg_server")
    return server.create(f"test_{os.getpid()}_{next(_counter)}")


def recorded(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / "report" / f"{name}.json").read_text())
    return document


@pytest.fixture
def documents() -> list[dict[str, Any]]:
    return [recorded(name) for name in RECORDED]


def imported(tmp_path: Path, *files: Path) -> dict[str, str]:
    """The environment of a user whose history (a new one) holds `files`, ids from 1, with
    state and data folders of its own (where the upload salt would go)."""
    env = {
        "FLASHMARK_DB": str(tmp_path / "history.sqlite3"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    for file in files:
        done = flashmark("import", file, env=env)
        assert done.returncode == 0, done.stderr
    return env


def variant(document: dict[str, Any], index: int) -> dict[str, Any]:
    """Another result of the same card: another start time and slightly other figures."""
    copied = copy.deepcopy(document)
    copied["started_at"] = f"2026-01-01T00:00:{index % 60:02d}.{index:06d}+00:00"
    for test in copied["tests"]:
        for side in ("read", "write"):
            if test.get(side):
                test[side]["iops"] = test[side]["iops"] * (1 + index / 1000)
                test[side]["bw_bytes"] = test[side]["bw_bytes"] * (1 + index / 1000)
    return copied


def backup(source: Path, target: Path) -> None:
    """A consistent copy of an SQLite file (its WAL included) while connections are open."""
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def partial(document: dict[str, Any], measured: int) -> dict[str, Any]:
    """A run whose card failed after `measured` tests: the rest are not in it."""
    changed = copy.deepcopy(document)
    names = [test["name"] for test in changed["tests"]]
    changed["tests"] = changed["tests"][:measured]
    changed["partial"] = {
        "failed_step": names[measured],
        "error": "(withheld)",
        "exit_status": 5,
        "not_run": names[measured + 1 :],
    }
    return changed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def launch(*args: str, log: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    """`flashmark ARGS` started in a session of its own, its output added to `log`."""
    with log.open("ab") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "flashmark", *args],
            stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, **(env or {})},
        )  # fmt: skip


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

    def answers(self) -> bool:
        """Whether it answers HTTP on /api/v1 (any status: some refuse the Host sent)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            connection.request("GET", "/api/v1")
            connection.getresponse().read()
            return True
        except (OSError, http.client.HTTPException):
            return False
        finally:
            connection.close()


def serve(
    *args: str, log: Path, env: Mapping[str, str] | None = None, port: int | None = None
) -> Server:
    """`flashmark serve ARGS` on loopback, once it answers (RuntimeError with its log if not)."""
    port = port or free_port()
    process = launch("serve", *args, "--host", "127.0.0.1", "--port", str(port), log=log, env=env)
    server = Server(process, "127.0.0.1", port, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.answers():
        if process.poll() is not None or time.monotonic() > deadline:
            stop([process])
            raise RuntimeError(f"flashmark serve did not start: {server.output()[-2000:]}")
        time.sleep(0.05)
    return server


def stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    """Each process's session killed (SIGKILL) and the process reaped."""
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Starts `flashmark serve` processes on loopback; all are killed and reaped at teardown."""
    started: list[subprocess.Popen[bytes]] = []

    def start(database: str | None, *options: str, env: dict[str, str] | None = None) -> Server:
        chosen = [] if database is None else ["--database", database]
        log = tmp_path / f"serve-{len(started)}.log"
        server = serve(*chosen, *options, log=log, env=env)
        started.append(server.process)
        return server

    try:
        yield start
    finally:
        stop(started)


@dataclass
class Service:
    """The application over Starlette's test client, with one upload token."""

    client: Any  # starlette.testclient.TestClient
    database: str
    token: str

    def upload(self, document: Any, token: str | None = None, **headers: str) -> Any:
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        return self.client.post(
            "/api/v1/results",
            content=body,
            headers={
                "Authorization": f"Bearer {token or self.token}",
                "Content-Type": "application/json",
                **headers,
            },
        )

    def count(self) -> int:
        lines = self.client.get("/api/v1/export.jsonl").text.splitlines()
        return len(lines)


@pytest.fixture
def make_service(database: str) -> Iterator[Callable[..., Service]]:
    """`make_service(**ServerConfig options)`: the app on the test database, opened and closed
    (`raise_errors=False`: a server error is answered, as a real server answers it)."""
    pytest.importorskip("starlette", reason="the server extra is not installed")
    from starlette.testclient import TestClient

    from flashmark.server.app import ServerConfig, create_app
    from flashmark.server.storage import open_storage

    with contextlib.closing(open_storage(database)) as storage:
        token = storage.create_token("tester")
    with contextlib.ExitStack() as stack:

        def make(raise_errors: bool = True, **options: Any) -> Service:
            # The test client's requests name this host: links are made from it.
            config = {"trusted_hosts": ("results.test",), **options}
            app = create_app(ServerConfig(database=database, **config))
            client = TestClient(app, "http://results.test", raise_server_exceptions=raise_errors)
            return Service(stack.enter_context(client), database, token)

        yield make


@pytest.fixture
def service(make_service: Callable[..., Service]) -> Service:
    return make_service()
