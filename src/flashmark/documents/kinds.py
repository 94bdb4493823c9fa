"""Which documents the history keeps, and what each is listed as.

Each kind of result document is kept under one kind, target and label (`entry_for`), whether a
command saves it as it finishes or `flashmark import` adds it later: both must agree, or the
same result imported twice would not be recognised. `read_document_file` reads a recovery file,
or any `--json` output of `run`, `monitor` and `workload`, back for `flashmark import`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flashmark.capacity.result import CAPACITY_SCHEMA, CapacityResult
from flashmark.documents import schemas
from flashmark.documents.entries import HistoryEntry
from flashmark.documents.result import document_to_run
from flashmark.errors import ResultFormatError, UsageError
from flashmark.monitor.series import MonitorSummary
from flashmark.surface.result import SURFACE_SCHEMA
from flashmark.surface.result import from_document as surface_from_document
from flashmark.workloads.result import WorkloadResult

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

    Every problem is a UsageError naming the file: it is input the user gave.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else f"not UTF-8 text: {error}"
        raise UsageError(f"cannot read {path}: {reason}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path} is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise UsageError(
            f"{path} holds a JSON {type(document).__name__}, not one result document "
            "(a file of `export` holding several cannot be imported)"
        )
    try:
        return entry_for(document)
    except ResultFormatError as error:
        raise UsageError(f"{path}: {error}") from None
