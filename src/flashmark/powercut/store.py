"""The recorder's end on another machine: `flashmark powercut record`, which ssh starts there.

Each run's entries go to FOLDER/RUN.jsonl, fsync'd before the answer. The board sends one
entry a line, numbered (`{"i": N, ...entry}`), and reads one answer a line (`ok`, or
`error: WHY`); an entry sent again after a dropped link is kept once, a gap refused.
`--fetch IDENTITY` prints the entries of the device's newest run, one a line. As the forced
command of the board's key (authorized_keys `command=`), the request comes from ssh instead.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from flashmark.errors import UsageError
from flashmark.powercut.plan import state_folder
from flashmark.powercut.recorder import RecorderFailed, read_entries
from flashmark.system.file_space import fsync_folder

_RUN = re.compile(r"[0-9a-f]{32}")
SSH_ORIGINAL_COMMAND = "SSH_ORIGINAL_COMMAND"  # sshd(8): what the client asked a forced command


class RunStore:
    """The runs in a folder (by default ~/.local/state/flashmark/powercut-recorder). Appends
    to a run hold its file's lock: after a dropped link, the board's new connection may meet
    the old one's process still running."""

    def __init__(self, folder: Path | None = None) -> None:
        folder = folder or state_folder().with_name("powercut-recorder")
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._known: dict[str, tuple[int, int]] = {}  # run: (file size, next entry) last seen

    def append(self, run: str, number: int, entry: dict[str, Any]) -> None:
        path = self._path(run)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            known = self._known.get(run)
            expected = known[1] if known is not None and known[0] == size else _count(path)
            if number < expected:
                return  # sent again after a dropped link: kept already
            if number > expected:
                raise RecorderFailed(f"entry {number} of run {run} where {expected} was due")
            if number == 0 and entry.get("type") != "run":
                raise RecorderFailed("a run starts with its header")
            line = (json.dumps({"i": number, **entry}, separators=(",", ":")) + "\n").encode()
            os.write(fd, line)
            os.fsync(fd)
            if number == 0:
                fsync_folder(self.folder)  # the new run's name is durable too
            self._known[run] = (size + len(line), number + 1)
        finally:
            os.close(fd)

    def fetch(self, identity: str) -> list[dict[str, Any]]:
        """The entries of the device's newest run ([] when it has none)."""
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


def keep_entries(store: RunStore, run: str, lines: Iterable[bytes], answers: IO[bytes]) -> None:
    """Keep each numbered entry the board sends, answering each once it is on the disk."""
    for line in lines:
        try:
            entry = json.loads(line)
            if not isinstance(entry, dict):
                raise TypeError("an entry is an object")
            store.append(run, int(entry.pop("i")), entry)
            answer = "ok"
        except (RecorderFailed, KeyError, TypeError, ValueError) as error:
            answer = f"error: {error}"
        answers.write(answer.encode() + b"\n")
        answers.flush()


def forced_request(original: str) -> tuple[str | None, str | None]:
    """(run, identity to fetch) of the board's request, when this runs as its key's forced
    command: only `flashmark powercut record --run RUN` or `... --fetch IDENTITY`."""
    try:
        words = shlex.split(original)
    except ValueError:
        words = []
    if len(words) == 5 and words[:3] == ["flashmark", "powercut", "record"]:
        if words[3] == "--run":
            return words[4], None
        if words[3] == "--fetch":
            return None, words[4]
    raise UsageError(
        f"this key only keeps flush points: {original!r} is not `flashmark powercut record "
        "--run RUN` or `--fetch IDENTITY`"
    )


def _count(path: Path) -> int:
    entries = read_entries(path)
    return int(entries[-1]["i"]) + 1 if entries else 0
