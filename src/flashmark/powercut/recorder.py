"""The record of what the device acknowledged, kept outside the device under test: a flush
point counts once it is recorded durably, before the writer goes on. One JSON object a line,
in a local file (fsync'd every line) or at a network recorder (remote.py):

    {"type": "run", ...RunHeader}    {"type": "cycle", "cycle": 1, "first_seq": 0}
    {"type": "fua", "cycle": 1, "seq": 7}    {"type": "flush", "cycle": 1, "through": 7}
    {"type": "cut", "cycle": 1, ...CutMark}  {"type": "verified", "cycle": 1, "result": {...}}
    {"type": "void", "cycle": 1, "reason": "..."}   (the cycle cut nothing; skipped)
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from flashmark.errors import FlashmarkError
from flashmark.system.file_space import fsync_folder


class RecorderFailed(FlashmarkError):
    """The record of acknowledged flush points cannot be kept: the run must stop."""


@dataclass(frozen=True)
class RunHeader:
    run: str  # the run's nonce, hex
    identity: str | None  # system/device_identity.py: how `verify` finds the run
    mode: str
    record_bytes: int
    flush_every: int
    fua: bool
    area_start: int
    area_bytes: int
    cycles: int
    started_at: str
    off_command: str
    on_command: str
    cut_min_s: float
    cut_max_s: float
    come_back_timeout_s: float


@dataclass(frozen=True)
class CutMark:
    """The off command started `cut_at_s` after the cycle's first write. The rest is known
    only when the host survived the cut."""

    submitted_through: int | None  # the last record whose write had started
    acked_through: int | None  # the last record the device acknowledged
    cut_at_s: float
    off_command_s: float | None


@dataclass(frozen=True)
class CycleLog:
    number: int
    first_seq: int
    flushed_through: int | None = None
    fua: frozenset[int] = frozenset()
    cut: CutMark | None = None
    verified: Mapping[str, Any] | None = None  # the cycle's result document
    void: str | None = None

    def flushed(self, seq: int) -> bool:
        through = self.flushed_through
        return (through is not None and seq <= through) or seq in self.fua


@dataclass(frozen=True)
class RunLog:
    header: RunHeader
    cycles: tuple[CycleLog, ...] = field(default=())

    @property
    def last(self) -> CycleLog | None:
        return self.cycles[-1] if self.cycles else None


class FlushRecorder(Protocol):
    where: str  # for messages and the result: a file, or [USER@]HOST

    def append(self, entry: Mapping[str, Any]) -> None:
        """Keep `entry` durably before returning; RecorderFailed if it cannot."""

    def close(self) -> None: ...


def run_entry(header: RunHeader) -> dict[str, Any]:
    return {"type": "run", **asdict(header)}


def cycle_entry(cycle: int, first_seq: int) -> dict[str, Any]:
    return {"type": "cycle", "cycle": cycle, "first_seq": first_seq}


def flush_entry(cycle: int, through: int) -> dict[str, Any]:
    return {"type": "flush", "cycle": cycle, "through": through}


def fua_entry(cycle: int, seq: int) -> dict[str, Any]:
    return {"type": "fua", "cycle": cycle, "seq": seq}


def cut_entry(cycle: int, mark: CutMark) -> dict[str, Any]:
    return {"type": "cut", "cycle": cycle, **asdict(mark)}


def verified_entry(cycle: int, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "verified", "cycle": cycle, "result": dict(result)}


def void_entry(cycle: int, reason: str) -> dict[str, Any]:
    return {"type": "void", "cycle": cycle, "reason": reason}


def read_run(entries: Iterable[Mapping[str, Any]]) -> RunLog:
    """The run a list of entries describes (RecorderFailed when it is not one)."""
    header: RunHeader | None = None
    cycles: dict[int, CycleLog] = {}
    try:
        for entry in entries:
            kind = entry.get("type")
            if kind == "run":
                fields = {k: v for k, v in entry.items() if k not in ("type", "i")}
                header = RunHeader(**fields)
                continue
            number = int(entry["cycle"])
            if kind == "cycle":
                cycles[number] = CycleLog(number, int(entry["first_seq"]))
                continue
            cycle = cycles[number]
            if kind == "flush":
                cycles[number] = replace(cycle, flushed_through=int(entry["through"]))
            elif kind == "fua":
                cycles[number] = replace(cycle, fua=cycle.fua | {int(entry["seq"])})
            elif kind == "cut":
                off = entry.get("off_command_s")
                mark = CutMark(
                    entry.get("submitted_through"),
                    entry.get("acked_through"),
                    float(entry["cut_at_s"]),
                    None if off is None else float(off),
                )
                cycles[number] = replace(cycle, cut=mark)
            elif kind == "verified":
                cycles[number] = replace(cycle, verified=dict(entry["result"]))
            elif kind == "void":
                cycles[number] = replace(cycle, void=str(entry["reason"]))
    except (KeyError, TypeError, ValueError) as error:
        raise RecorderFailed(
            f"the flush record is malformed ({type(error).__name__}: {error})"
        ) from None
    if header is None:
        raise RecorderFailed("the flush record has no run header")
    return RunLog(header, tuple(cycles[number] for number in sorted(cycles)))


class FileRecorder:
    """Entries appended to a local file, each one fsync'd before `append` returns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._lock = threading.Lock()  # the writer and the cycle driver both append
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            fsync_folder(path.parent)  # the new name is durable too
        except OSError as error:
            raise RecorderFailed(f"cannot keep the flush record in {path}: {error}") from None

    def append(self, entry: Mapping[str, Any]) -> None:
        line = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
        try:
            with self._lock:
                written = os.write(self._fd, line)
                if written != len(line):
                    raise OSError(f"short write ({written} of {len(line)} bytes)")
                os.fsync(self._fd)
        except OSError as error:
            raise RecorderFailed(f"cannot keep the flush record in {self.path}: {error}") from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_entries(path: Path) -> list[dict[str, Any]]:
    """The entries of a record file; a last line cut short (the host lost power while writing
    it) is left out, as it was never acknowledged."""
    try:
        text = path.read_text()
    except OSError as error:
        raise RecorderFailed(f"cannot read the flush record {path}: {error.strerror}") from None
    entries = []
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if not line:
            continue
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines) - 1:  # the unterminated last line
                break
            raise RecorderFailed(f"{path}, line {number + 1}: not a flush record entry") from None
    return entries
