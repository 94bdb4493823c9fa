"""The board's side of a flush recorder on another machine, reached through ssh: ssh
authenticates both ends and carries the entries; `flashmark powercut record` there keeps them
(store.py).

`append` returns once the recorder answered that the entry is on its disk; until then the
writer does not go on, so an acknowledgement the host's power cut takes away was never
counted. When the link drops, the entry is sent again on a new connection (the recorder keeps
each entry number once), for up to `retry_s`; after that the run stops with RecorderFailed,
and the flush point that was not confirmed is not counted: a dropped link can make the test
stop, never claim a loss. ssh refusing this host (its key, the other's host key) stops at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shlex
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flashmark.errors import UsageError
from flashmark.powercut.recorder import RecorderFailed

SSH_ENV = "FLASHMARK_SSH"  # the ssh command and its options, as GIT_SSH_COMMAND is for git
FIRST_REPLY_S = 30.0  # connecting and starting flashmark there (a Pi Zero takes seconds)
REPLY_S = 10.0  # then a recorder answers an append after one fsync
RETRY_S = 30.0
_REFUSED = ("Permission denied", "Host key verification failed", "REMOTE HOST IDENTIFICATION")
_HOST = re.compile(r"(?:[^@\s]+@)?[A-Za-z0-9_.:\[\]%-]+")


@dataclass(frozen=True)
class RemoteSpec:
    """Where a board's flush points go: `[USER@]HOST` as ssh takes it, and the ssh command."""

    host: str
    ssh: tuple[str, ...]

    @property
    def where(self) -> str:
        return self.host

    def command(self, *args: str) -> list[str]:
        """`flashmark powercut record ARGS` on the recorder's machine, through ssh."""
        remote = shlex.join(["flashmark", "powercut", "record", *args])
        return [*self.ssh, "-o", "BatchMode=yes", "--", self.host, remote]

    def recorder(self, run: str, next_entry: int = 0) -> RemoteRecorder:
        """The recorder of one run's flush points."""
        return RemoteRecorder(self, run=run, next_entry=next_entry)


def remote_spec(
    record_to: str | None, environ: Mapping[str, str] | None = None
) -> RemoteSpec | None:
    """The recorder `--record-to [USER@]HOST` names, reached with $FLASHMARK_SSH (default
    `ssh`); None without one."""
    if record_to is None:
        return None
    # A name ssh would take for an option (-oProxyCommand=...) is refused before ssh sees it.
    if record_to.startswith("-") or not _HOST.fullmatch(record_to):
        raise UsageError(f"--record-to {record_to!r} is not a host: [USER@]HOST, as ssh takes it")
    env = os.environ if environ is None else environ
    ssh = tuple(shlex.split(env.get(SSH_ENV, "") or "ssh"))
    return RemoteSpec(record_to, ssh)


class RemoteRecorder:
    def __init__(
        self, remote: RemoteSpec, *, run: str, next_entry: int = 0, retry_s: float = RETRY_S
    ) -> None:
        self.remote = remote
        self.where = remote.host
        self._run = run
        self._next = next_entry
        self._retry_s = retry_s
        self._link: _Link | None = None
        self._lock = threading.Lock()  # the writer and the cycle driver both append

    def append(self, entry: Mapping[str, Any]) -> None:
        with self._lock:
            line = json.dumps({"i": self._next, **entry}, separators=(",", ":")) + "\n"
            self._ask(line.encode())
            self._next += 1

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _ask(self, line: bytes) -> None:
        """Send `line` until the recorder answers, reconnecting for up to the retry time."""
        deadline = time.monotonic() + self._retry_s
        pause = 0.1
        while True:
            try:
                if self._link is None:
                    self._link = _Link(self.remote.command("--run", self._run))
                answer = self._link.ask(line)
            except _Dropped as error:
                self._drop()
                if error.refused:
                    raise RecorderFailed(f"ssh to {self.where} was refused: {error}") from None
                problem = str(error)
            else:
                if answer != "ok":
                    raise RecorderFailed(f"the recorder at {self.where}: {answer}")
                return
            if time.monotonic() + pause > deadline:
                raise RecorderFailed(
                    f"lost the recorder at {self.where} for {self._retry_s:g} s ({problem}); "
                    "the flush point it did not confirm is not counted"
                )
            time.sleep(pause)
            pause = min(pause * 2, 2.0)

    def _drop(self) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None


class _Dropped(Exception):
    """The link is gone; `refused` when ssh refused it (trying again will not help)."""

    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


class _Link:
    """One ssh connection running `flashmark powercut record --run RUN` there."""

    def __init__(self, argv: Sequence[str]) -> None:
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as error:
            raise _Dropped(f"cannot run {argv[0]}: {error.strerror}", refused=True) from None
        self._pending = b""
        self._reply_s = FIRST_REPLY_S

    def ask(self, line: bytes) -> str:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(line)
            stdin.flush()
        except OSError:
            raise self._gone() from None
        deadline = time.monotonic() + self._reply_s
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stdout], [], [], left)[0]:
                raise _Dropped(f"no answer within {self._reply_s:g} s")
            chunk = os.read(stdout.fileno(), 4096)
            if not chunk:
                raise self._gone()
            self._pending += chunk
        answer, _, self._pending = self._pending.partition(b"\n")
        self._reply_s = REPLY_S
        return answer.decode(errors="replace").strip()

    def _gone(self) -> _Dropped:
        """Why the connection ended, in ssh's last line."""
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return _Dropped("the connection closed")
        assert self.process.stderr is not None
        said = self.process.stderr.read().decode(errors="replace").strip().splitlines()
        last = said[-1] if said else f"ssh exited with status {self.process.returncode}"
        return _Dropped(last, refused=any(sign in last for sign in _REFUSED))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()  # our own ssh child, by its id
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):  # stdin's last line had nobody to read it
                    stream.close()


def fetch_run(
    remote: RemoteSpec, identity: str, *, timeout_s: float = 60.0
) -> list[dict[str, Any]]:
    """The entries of the device's newest run kept by the recorder ([] when none)."""
    try:
        done = subprocess.run(
            remote.command("--fetch", identity),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RecorderFailed(f"cannot reach the recorder at {remote.where}: {error}") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        raise RecorderFailed(f"cannot fetch the run from the recorder at {remote.where}: {why}")
    try:
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    except json.JSONDecodeError:
        raise RecorderFailed(f"the recorder at {remote.where} sent no run") from None
