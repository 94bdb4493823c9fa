"""The flush recorder on another machine: `flashmark powercut listen`. Each run's entries go to
FOLDER/RUN.jsonl, fsync'd before the answer; an entry sent again after a dropped link is
acknowledged once, a gap refused. Requests (protocol.py carries them, authenticated):

    {"op": "append", "run": RUN, "i": N, "entry": {...}}    -> {"ok": true}
    {"op": "fetch", "identity": ID} or {"op": "fetch", "run": RUN}
                        -> {"ok": true, "entries": [...]} (the newest run; [] when none)
Failures answer {"ok": false, "error": "..."}.
"""

from __future__ import annotations

import json
import os
import re
import socket
import socketserver
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flashmark.errors import UsageError
from flashmark.powercut.plan import state_folder
from flashmark.powercut.protocol import (
    ProtocolError,
    parse_address,
    read_token,
    recorder_handshake,
)
from flashmark.powercut.recorder import RecorderFailed, read_entries

_RUN = re.compile(r"[0-9a-f]{32}")
IDLE_TIMEOUT_S = 600.0  # a board that says nothing for this long is gone


def serve_recorder(
    address: str, token_file: Path | None, folder: Path | None, say: Callable[[str], None]
) -> None:
    """`flashmark powercut listen`: keep the flush points of boards under test in `folder`
    (default ~/.local/state/flashmark/powercut-recorder) until stopped; what happens is said
    through `say`, a line at a time."""
    token = read_token(token_file)
    host, port = parse_address(address, default_host="0.0.0.0")
    store = RunStore(folder or state_folder().with_name("powercut-recorder"))
    try:
        server = RecorderServer((host, port), store, token, say)
    except OSError as error:
        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    bound_host, bound_port = server.server_address[:2]
    say(f"flashmark: recording flush points on {bound_host!s}:{bound_port} into {store.folder}")
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


class RunStore:
    """The runs in a folder, appended to under a lock (one writer per run at a time)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._next: dict[str, int] = {}

    def append(self, run: str, number: int, entry: dict[str, Any]) -> None:
        path = self._path(run)
        with self._lock:
            expected = self._next.get(run)
            if expected is None:
                expected = self._count(path)
            if number < expected:
                return  # sent again after a dropped link: stored already
            if number > expected:
                raise RecorderFailed(f"entry {number} of run {run} where {expected} was due")
            if number == 0 and entry.get("type") != "run":
                raise RecorderFailed("a run starts with its header")
            line = json.dumps({"i": number, **entry}, separators=(",", ":")) + "\n"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, line.encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            if number == 0:
                folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(folder)
                finally:
                    os.close(folder)
            self._next[run] = number + 1

    def fetch(self, *, run: str | None = None, identity: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            if run is not None:
                path = self._path(run)
                if not path.exists():
                    raise RecorderFailed(f"no run {run} here")
                return read_entries(path)
            newest: tuple[str, list[dict[str, Any]]] | None = None
            for path in self.folder.glob("*.jsonl"):
                entries = read_entries(path)
                header = entries[0] if entries else {}
                if header.get("type") != "run" or header.get("identity") != identity:
                    continue
                started = str(header.get("started_at", ""))
                if newest is None or started > newest[0]:
                    newest = (started, entries)
            return [] if newest is None else newest[1]

    def _path(self, run: str) -> Path:
        if not _RUN.fullmatch(run):
            raise RecorderFailed(f"{run!r} is not a run id")
        return self.folder / f"{run}.jsonl"

    @staticmethod
    def _count(path: Path) -> int:
        if not path.exists():
            return 0
        entries = read_entries(path)
        return int(entries[-1]["i"]) + 1 if entries else 0


class RecorderServer(socketserver.ThreadingTCPServer):
    """One thread per board connection; `serve_forever` until `shutdown`."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        store: RunStore,
        token: bytes,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.store = store
        self.token = token
        self.say = say
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.address_family = family
        super().__init__(address, _Handler)


class _Handler(socketserver.BaseRequestHandler):
    server: RecorderServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(IDLE_TIMEOUT_S)
        peer = f"{self.client_address[0]}:{self.client_address[1]}"
        try:
            channel = recorder_handshake(sock, self.server.token)
        except (ProtocolError, OSError) as error:
            self.server.say(f"{peer}: refused: {error}")
            return
        try:
            while True:
                try:
                    request = channel.receive()
                except ProtocolError as error:
                    if str(error) != "the connection closed":
                        self.server.say(f"{peer}: {error}")
                    return
                channel.send(self._answer(request, peer))
        except OSError:
            return  # the link dropped: the board sends the entry again on a new one
        finally:
            channel.close()

    def _answer(self, request: dict[str, Any], peer: str) -> dict[str, Any]:
        store = self.server.store
        try:
            if request.get("op") == "append":
                entry = request["entry"]
                if not isinstance(entry, dict):
                    raise RecorderFailed("an entry is an object")
                store.append(str(request["run"]), int(request["i"]), entry)
                if entry.get("type") in ("run", "cycle", "cut", "verified", "void"):
                    self.server.say(f"{peer}: run {request['run']}: {_entry_line(entry)}")
                return {"ok": True}
            if request.get("op") == "fetch":
                run, identity = request.get("run"), request.get("identity")
                entries = store.fetch(
                    run=None if run is None else str(run),
                    identity=None if identity is None else str(identity),
                )
                return {"ok": True, "entries": entries}
            return {"ok": False, "error": f"unknown request {request.get('op')!r}"}
        except (RecorderFailed, KeyError, TypeError, ValueError) as error:
            return {"ok": False, "error": str(error)}


def _entry_line(entry: dict[str, Any]) -> str:
    kind = entry.get("type")
    if kind == "run":
        return f"started on {entry.get('identity')}, {entry.get('cycles')} cycles"
    if kind == "verified":
        result = entry.get("result") or {}
        return (
            f"cycle {entry.get('cycle')} checked: {result.get('lost_after_flush')} lost after a "
            "flush"
        )
    return f"{kind} of cycle {entry.get('cycle')}"
