"""The board's side of a network flush recorder: a FlushRecorder over TCP (protocol.py).

`append` returns once the recorder answered that the entry is on its disk; until then the
writer does not go on, so an acknowledgement the host's power cut takes away was never
counted. When the link drops, the entry is sent again on a new connection (the recorder
stores each entry number once), for up to `retry_s`; after that the run stops with
RecorderFailed, and the flush point that was not confirmed is not counted: a dropped link can
make the test stop, never claim a loss.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashmark.errors import UsageError
from flashmark.powercut.protocol import (
    Channel,
    ProtocolError,
    board_handshake,
    parse_address,
    read_token,
)
from flashmark.powercut.recorder import RecorderFailed

REPLY_S = 5.0  # a recorder answers an append after one fsync
RETRY_S = 30.0


@dataclass(frozen=True)
class RemoteSpec:
    """Where a board's flush points go: a recorder's address and the token both ends share."""

    address: tuple[str, int]
    token: bytes

    @property
    def where(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"

    def recorder(self, run: str) -> RemoteRecorder:
        """The recorder of one run's flush points."""
        return RemoteRecorder(self.address, self.token, run=run)


def remote_spec(record_to: str | None, token_file: Path | None) -> RemoteSpec | None:
    """The recorder `--record-to HOST:PORT` names, with the token of `token_file` (or the
    environment's); None without one."""
    if record_to is None:
        if token_file is not None:
            raise UsageError("--token-file goes with --record-to")
        return None
    return RemoteSpec(parse_address(record_to), read_token(token_file))


class RemoteRecorder:
    def __init__(
        self,
        address: tuple[str, int],
        token: bytes,
        *,
        run: str,
        next_entry: int = 0,
        retry_s: float = RETRY_S,
        reply_s: float = REPLY_S,
    ) -> None:
        self.address = address
        self.where = f"{address[0]}:{address[1]}"
        self._token = token
        self._run = run
        self._next = next_entry
        self._retry_s = retry_s
        self._reply_s = reply_s
        self._channel: Channel | None = None
        self._lock = threading.Lock()  # the writer and the cycle driver both append

    def append(self, entry: Mapping[str, Any]) -> None:
        with self._lock:
            self._ask({"op": "append", "run": self._run, "i": self._next, "entry": dict(entry)})
            self._next += 1

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send `request` until an answer comes, reconnecting for up to the retry time."""
        deadline = time.monotonic() + self._retry_s
        pause = 0.1
        while True:
            try:
                if self._channel is None:
                    self._channel = connect(self.address, self._token, self._reply_s)
                self._channel.send(request)
                answer = self._channel.receive()
            except ProtocolError as error:
                self._drop()
                if error.authentication:
                    raise  # a wrong token does not get better by trying again
                problem: Exception = error
            except OSError as error:
                self._drop()
                problem = error
            else:
                if not answer.get("ok"):
                    raise RecorderFailed(f"the recorder at {self.where}: {answer.get('error')}")
                return answer
            if time.monotonic() + pause > deadline:
                raise RecorderFailed(
                    f"lost the recorder at {self.where} for {self._retry_s:g} s ({problem}); "
                    "the flush point it did not confirm is not counted"
                )
            time.sleep(pause)
            pause = min(pause * 2, 2.0)

    def _drop(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None


def connect(address: tuple[str, int], token: bytes, timeout_s: float) -> Channel:
    sock = socket.create_connection(address, timeout=timeout_s)
    try:
        sock.settimeout(timeout_s)
        return board_handshake(sock, token)
    except BaseException:
        sock.close()
        raise


def fetch_run(
    address: tuple[str, int],
    token: bytes,
    *,
    identity: str | None = None,
    run: str | None = None,
    timeout_s: float = 30.0,
) -> list[dict[str, Any]]:
    """The entries of the device's newest run (or of `run`) kept by the recorder."""
    where = f"{address[0]}:{address[1]}"
    try:
        channel = connect(address, token, timeout_s)
    except OSError as error:
        raise RecorderFailed(f"cannot reach the recorder at {where}: {error}") from None
    try:
        request: dict[str, Any] = {"op": "fetch"}
        if run is not None:
            request["run"] = run
        else:
            request["identity"] = identity
        channel.send(request)
        answer = channel.receive()
    except OSError as error:
        raise RecorderFailed(f"the recorder at {where} did not answer: {error}") from None
    finally:
        channel.close()
    if not answer.get("ok"):
        raise RecorderFailed(f"the recorder at {where}: {answer.get('error')}")
    entries = answer.get("entries")
    if not isinstance(entries, list):
        raise RecorderFailed(f"the recorder at {where} sent no entries")
    return entries
