"""Which documents the history keeps, and what each is listed as.

Each kind of result document is kept under one kind, target and label (`entry_for`), whether a
command saves it as it finishes or `flashmark import` adds it later: both must agree, or the
same result imported twice would not be recognised. `read_document_file` reads a recovery file,
or any `--json` output of `run`, `monitor` and `workload`, back for `flashmark import`, checked
whole by the one check of every document that comes in (documents.strict) against
DOCUMENT_KINDS: how each kind is read into its typed object and written back.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashmark.capacity.result import CAPACITY_SCHEMA, CapacityResult
from flashmark.documents import schemas
from flashmark.documents.entries import HistoryEntry
from flashmark.documents.result import document_to_run, run_to_document
from flashmark.documents.strict import DocumentInvalid, DocumentKind, check_document, parse_json
from flashmark.errors import ResultFormatError, UsageError
from flashmark.monitor.series import MonitorSample, MonitorSummary
from flashmark.surface.result import SURFACE_SCHEMA
from flashmark.surface.result import from_document as surface_from_document
from flashmark.surface.result import to_document as surface_to_document
from flashmark.workloads.result import WorkloadResult

# The largest document `import` reads. The largest flashmark writes is a surface scan of
# 65,536 slices (--slices' maximum), about 20 MB; reading JSON takes several times its size in
# memory (Python objects), so a limit near it keeps an import of a hostile file within a few
# hundred MB, even on a small board.
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024

# The documents the history keeps, by schema, and the kind each is kept as.
KINDS = {
    schemas.RESULT: "benchmark",
    schemas.MONITOR: "monitor",
    schemas.WORKLOADS: "workload",
    CAPACITY_SCHEMA: "capacity",
    SURFACE_SCHEMA: "surface",
}


def entry_for(document: Mapping[str, Any]) -> HistoryEntry:
    """The entry a result document is kept as; ResultFormatError for a document this
    version does not know (another program's JSON, a newer schema, a malformed one)."""
    schema = document.get("schema")
    if schema == schemas.RESULT:
        run = document_to_run(dict(document))  # reads every field: refuses a malformed one
        # What was measured, absolute: "." or "card" would name another place tomorrow.
        place = run.target.folder or run.target.path
        label = run.settings.profile + (" (partial)" if run.partial is not None else "")
        return HistoryEntry("benchmark", place, label, document)
    if schema == schemas.MONITOR:
        try:
            MonitorSummary.from_dict(document["summary"])
            device = document["device"]
            command = document.get("command") or ()
            if not isinstance(device, str) or not all(isinstance(c, str) for c in command):
                raise TypeError("device and command must be text")
        except (KeyError, TypeError, ValueError) as error:
            raise ResultFormatError(
                f"monitor document is malformed ({type(error).__name__}: {error})"
            ) from None
        return HistoryEntry("monitor", device, " ".join(command) or "live", document)
    if schema == schemas.WORKLOADS:
        return _workload_entry(document)
    if schema == SURFACE_SCHEMA:
        scan = surface_from_document(document)  # reads every field: refuses a malformed one
        return HistoryEntry("surface", scan.target.given, scan.label, document)
    if schema == CAPACITY_SCHEMA:
        capacity = CapacityResult.from_dict(document)  # reads every field
        return HistoryEntry("capacity", capacity.device, capacity.verdict, document)
    known = ", ".join(KINDS)
    name, _, version = str(schema).rpartition("/")
    if any(k.rpartition("/")[0] == name for k in KINDS):
        raise ResultFormatError(
            f"document schema {schema!r} is version {version}, newer than this flashmark "
            f"reads ({known}): upgrade flashmark"
        )
    raise ResultFormatError(
        f"not a flashmark result document: schema {schema!r} (the history keeps {known})"
    )


@dataclass(frozen=True)
class MonitorRecording:
    """A flashmark.monitor/1 document as typed data (documents.monitor writes it)."""

    flashmark_version: str
    started_at: str
    finished_at: str
    device: str
    command: tuple[str, ...] | None
    exit_status: int | None
    interval_s: float
    seconds: float
    diskstats_fields: int
    summary: MonitorSummary
    samples: tuple[MonitorSample, ...]
    warnings: tuple[str, ...]
    timed_out: bool | None  # a monitored command only: stopped by --timeout
    id: int | None


def _read_monitor(d: Mapping[str, Any]) -> MonitorRecording:
    command = d.get("command")
    return MonitorRecording(
        flashmark_version=d["flashmark_version"],
        started_at=d["started_at"],
        finished_at=d["finished_at"],
        device=d["device"],
        command=None if command is None else tuple(command),
        exit_status=d.get("exit_status"),
        interval_s=d["interval_s"],
        seconds=d["seconds"],
        diskstats_fields=d["diskstats_fields"],
        summary=MonitorSummary.from_dict(d["summary"]),
        samples=tuple(MonitorSample.from_dict(sample) for sample in d["samples"]),
        warnings=tuple(d.get("warnings", ())),
        timed_out=d.get("timed_out"),
        id=d.get("id"),
    )


def _write_monitor(recording: MonitorRecording) -> dict[str, Any]:
    return {
        "schema": schemas.MONITOR,
        "flashmark_version": recording.flashmark_version,
        "started_at": recording.started_at,
        "finished_at": recording.finished_at,
        "device": recording.device,
        "command": None if recording.command is None else list(recording.command),
        "exit_status": recording.exit_status,
        "interval_s": recording.interval_s,
        "seconds": recording.seconds,
        "diskstats_fields": recording.diskstats_fields,
        # The reader recomputes nothing: the summary and samples are kept as written.
        "summary": recording.summary.to_dict(),
        "samples": [sample.to_dict() for sample in recording.samples],
        "warnings": list(recording.warnings),
        "timed_out": recording.timed_out,
        "id": recording.id,
    }


@dataclass(frozen=True)
class WorkloadRecording:
    """A flashmark.workloads/1 document as typed data (documents.workloads writes it)."""

    flashmark_version: str
    started_at: str
    finished_at: str
    target: str
    scale: float
    seed: int
    workloads: tuple[WorkloadResult, ...]
    id: int | None


def _read_workloads(d: Mapping[str, Any]) -> WorkloadRecording:
    return WorkloadRecording(
        flashmark_version=d["flashmark_version"],
        started_at=d["started_at"],
        finished_at=d["finished_at"],
        target=d["target"],
        scale=d["scale"],
        seed=d["seed"],
        workloads=workload_results(d),
        id=d.get("id"),
    )


def _write_workloads(recording: WorkloadRecording) -> dict[str, Any]:
    return {
        "schema": schemas.WORKLOADS,
        "flashmark_version": recording.flashmark_version,
        "started_at": recording.started_at,
        "finished_at": recording.finished_at,
        "target": recording.target,
        "scale": recording.scale,
        "seed": recording.seed,
        "workloads": [result.to_dict() for result in recording.workloads],
        "id": recording.id,
    }


# How each kind is read and written back, for the check of every document that comes in.
DOCUMENT_KINDS: dict[str, DocumentKind] = {
    schemas.RESULT: DocumentKind(
        read=lambda d: document_to_run(d if isinstance(d, dict) else dict(d)),
        write=run_to_document,
    ),
    schemas.MONITOR: DocumentKind(read=_read_monitor, write=_write_monitor),
    schemas.WORKLOADS: DocumentKind(read=_read_workloads, write=_write_workloads),
    CAPACITY_SCHEMA: DocumentKind(read=CapacityResult.from_dict, write=CapacityResult.to_dict),
    SURFACE_SCHEMA: DocumentKind(read=surface_from_document, write=surface_to_document),
}


def workload_results(document: Mapping[str, Any]) -> tuple[WorkloadResult, ...]:
    """The workloads of a flashmark.workloads/1 document; ResultFormatError if malformed."""
    try:
        return tuple(WorkloadResult.from_dict(entry) for entry in document["workloads"])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ResultFormatError(
            f"workload document is malformed ({type(error).__name__}: {error})"
        ) from None


def _workload_entry(document: Mapping[str, Any]) -> HistoryEntry:
    results = workload_results(document)
    target = document.get("target")
    if not isinstance(target, str) or not results:
        raise ResultFormatError("workload document is malformed: no target or no workloads")
    return HistoryEntry("workload", target, "+".join(r.name for r in results), document)


def read_document_file(path: Path) -> HistoryEntry:
    """A saved JSON document (a recovery file or `--json` output) checked for importing.

    Only a regular file is read (a FIFO would block forever, /dev/zero never ends: refused
    before anything is read), and at most MAX_DOCUMENT_BYTES + 1 bytes of it. Every problem is
    a UsageError naming the file: it is input the user gave.
    """
    try:
        text = _read_limited(path).decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"cannot read {path}: not UTF-8 text: {error}") from None
    try:
        document = parse_json(text)
    except DocumentInvalid as error:
        raise UsageError(f"{path} is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise UsageError(
            f"{path} holds a JSON {type(document).__name__}, not one result document "
            "(a file of `export` holding several cannot be imported)"
        )
    try:
        # The same check as an upload to the results service: what imports can be shown,
        # reported and exported. Unknown keys are dropped (documents.strict says why).
        schema = document.get("schema")
        if isinstance(schema, str) and schema in DOCUMENT_KINDS:
            document = check_document(document, DOCUMENT_KINDS, own=True).document
        return entry_for(document)
    except DocumentInvalid as error:
        raise UsageError(f"{path}: {error}") from None
    except ResultFormatError as error:
        raise UsageError(f"{path}: {error}") from None


def _read_limited(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_DOCUMENT_BYTES; UsageError otherwise."""
    try:
        status = os.stat(path)  # refused before it is opened: opening a device may act
        if not stat.S_ISREG(status.st_mode):
            raise UsageError(_not_regular(path, status.st_mode))
        # O_NONBLOCK: had it become a FIFO since, opening it must not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        status = os.fstat(fd)  # what was opened, whatever the name points at now
        if not stat.S_ISREG(status.st_mode):
            raise UsageError(_not_regular(path, status.st_mode))
        if status.st_size > MAX_DOCUMENT_BYTES:
            raise UsageError(_too_big(path, status.st_size))
        chunks: list[bytes] = []
        left = MAX_DOCUMENT_BYTES + 1  # one byte more tells a file that grew past the limit
        while left > 0:
            try:
                chunk = os.read(fd, min(left, 1 << 20))
            except OSError as error:
                raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > MAX_DOCUMENT_BYTES:
            raise UsageError(_too_big(path, len(data)))
        return data
    finally:
        os.close(fd)


def _not_regular(path: Path, mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    what = next((name for test, name in kinds if test(mode)), "not a regular file")
    return f"{path} is {what}: import reads result files (regular files) only"


def _too_big(path: Path, size: int) -> str:
    return (
        f"{path} holds {size:,} bytes or more: larger than any result document "
        f"({MAX_DOCUMENT_BYTES // (1 << 20)} MiB at most), so it is not one"
    )
