"""Real `flashmark serve` processes for the hostile tier (test_hostile_service.py), on one
engine (SQLite, or a throwaway PostgreSQL).

Every process started carries an environment marker (HOSTILE_MARKER_ENV, with the lab's own
value) so that whatever a test leaves running is found and killed when the lab closes. Requests
go over loopback with http.client, headers as the test gives them (Host included).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psutil

from tests.server.conftest import Server, launch, serve, stop
from tests.server.hostile import cases as c
from tests.server.hostile.checks import Answer, Client
from tests.server.throwaway_pg import ThrowawayPostgres

HOSTILE_MARKER_ENV = "FLASHMARK_HOSTILE_LAB"
REQUEST_TIMEOUT_S = 30.0


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


class Lab(Client):
    """One engine's service: a database, `flashmark serve` processes, a token; closed, it
    leaves nothing running (every process of the lab is found by its marker and killed)."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.marker = uuid.uuid4().hex
        self.folder = Path(tempfile.mkdtemp(prefix=f"flashmark-hostile-{engine}-"))
        self.postgres: ThrowawayPostgres | None = None  # the lab's own: tests restart it
        self._databases = 0
        self.processes: list[subprocess.Popen[bytes]] = []
        self.main: Server | None = None
        self.main_database = ""
        super().__init__(token="", revoked_token="")

    # -- set-up ----------------------------------------------------------------------------
    def __enter__(self) -> Lab:
        try:
            if self.engine == "postgres":
                self.postgres = ThrowawayPostgres(["fsync=off"]).__enter__()
            self.main_database = self.database("main")
            self.token = self.create_token(self.main_database, "hostile")
            # The upload rate limit is the API tests' (tests/server): here it would only get
            # in the way of the uploads the tests make.
            self.main = self.serve(self.main_database, "--uploads-per-minute", "1000000")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill_lab_processes()
        if self.postgres is not None:
            self.postgres.__exit__(None, None, None)
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
        """`flashmark ARGS` as a process of the lab (what it prints is the point)."""
        return subprocess.run(
            [sys.executable, "-m", "flashmark", *args],
            capture_output=True, text=True, env=self.environment(), timeout=timeout, check=False,
        )  # fmt: skip

    def create_token(self, database: str, name: str) -> str:
        done = self.flashmark("token", "create", name, "--database", database)
        if done.returncode != 0:
            raise RuntimeError(f"token create failed: {done.stderr}")
        return done.stdout.strip()

    def start(self, *args: str, log: Path) -> subprocess.Popen[bytes]:
        process = launch(*args, log=log, env=self.environment())
        self.processes.append(process)
        return process

    def serve(self, database: str, *options: str, port: int | None = None) -> Server:
        """`flashmark serve` on loopback, answering /api/v1 (or RuntimeError with its log)."""
        log = self.folder / f"serve-{len(self.processes)}.log"
        server = serve("--database", database, *options, log=log, env=self.environment(), port=port)
        self.processes.append(server.process)
        return server

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
        stop(self.processes)
        for _ in range(3):  # what the lab's processes started in turn (workers)
            left = self.lab_processes()
            if not left:
                break
            for leftover in left:
                with contextlib.suppress(psutil.Error):
                    leftover.kill()
            psutil.wait_procs(left, timeout=5)

    def ask(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        headers: Sequence[tuple[str, str]] = (),
        *,
        chunked: bool = False,
    ) -> Answer:
        assert self.main is not None
        return request(self.main, method, target, body, headers, chunked=chunked)

    def upload_to(self, server: Server, token: str, index: int) -> Answer:
        """A distinct result (c.distinct(index)) uploaded to another service of the lab."""
        body = json.dumps(c.distinct(index)).encode()
        return request(server, "POST", "/api/v1/results", body, self.upload_headers(token))


def listeners(port: int) -> list[int]:
    found = []
    for connection in psutil.net_connections(kind="tcp"):
        address = connection.laddr
        if connection.status == psutil.CONN_LISTEN and getattr(address, "port", None) == port:
            found.append(connection.pid or -1)
    return found


def wait_until(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def sqlite_values(path: Path, column: str = "id", *, alone: bool = False) -> set[Any]:
    """A column (the ids) of the results in an SQLite file; `alone`: of the file without the WAL
    beside it (a copy read on its own: the WAL at a path is the file's that the path names)."""
    if alone:
        copy = path.with_name(path.name + "-alone")
        shutil.copy(path, copy)
        path = copy
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        return {row[0] for row in connection.execute(f"SELECT {column} FROM results")}


def stamp(*paths: Path) -> list[tuple[int, int]]:
    stamps = []
    for path in paths:
        try:
            status = path.stat()
            stamps.append((status.st_size, status.st_mtime_ns))
        except FileNotFoundError:
            stamps.append((-1, -1))
    return stamps
