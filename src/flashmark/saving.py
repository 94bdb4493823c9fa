"""What goes into the history, and where a result goes when the history cannot take it.

Each kind of result document is kept under one kind, target and label (`entry_for`), whether a
command saves it as it finishes or `flashmark import` adds it later: both must agree, or the
same result imported twice would not be recognised.

A result that was measured but could not be saved is written to a recovery file
(`keep_unsaved`): $XDG_STATE_HOME/flashmark/unsaved/ (XDG Base Directory Specification;
XDG_STATE_HOME defaults to ~/.local/state), or, when that cannot be written, the temporary
folder (tempfile.gettempdir(): $TMPDIR, else /tmp). `read_document_file` reads such a file, or
any `--json` output of `run` and `monitor`, back for `flashmark import`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashmark.document import SCHEMA as RESULT_SCHEMA
from flashmark.document import document_to_run
from flashmark.errors import HistoryError, ResultFormatError, UsageError
from flashmark.monitor import MONITOR_SCHEMA, MonitorSummary
from flashmark.workloads.result import WORKLOAD_SCHEMA, WorkloadResult

# The documents the history keeps, by schema, and the kind each is kept as.
KINDS = {RESULT_SCHEMA: "benchmark", MONITOR_SCHEMA: "monitor", WORKLOAD_SCHEMA: "workload"}
UNSAVED_FOLDER = Path("flashmark") / "unsaved"
# In the temporary folder (shared by every user) the files are named, not foldered: mkstemp
# makes each name unique and private (0600), which a shared fixed folder name would not.
_TEMP_PREFIX = "flashmark-unsaved-"


@dataclass(frozen=True)
class HistoryEntry:
    """A document and what the history lists it as."""

    kind: str
    target: str
    label: str
    document: Mapping[str, Any]


class RecoveryFileError(HistoryError):
    """Not even a recovery file could be written (every place tried is in the message)."""


def entry_for(document: Mapping[str, Any]) -> HistoryEntry:
    """The entry a result document is kept as; ResultFormatError for a document this
    version does not know (another program's JSON, a newer schema, a malformed one)."""
    schema = document.get("schema")
    if schema == RESULT_SCHEMA:
        run = document_to_run(dict(document))  # reads every field: refuses a malformed one
        # What was measured, absolute: "." or "card" would name another place tomorrow.
        place = run.target.folder or run.target.path
        return HistoryEntry("benchmark", place, run.settings.profile, document)
    if schema == MONITOR_SCHEMA:
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
    if schema == WORKLOAD_SCHEMA:
        return _workload_entry(document)
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


def unsaved_folder(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    state_home = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / UNSAVED_FOLDER


def keep_unsaved(
    document: Mapping[str, Any], kind: str, environ: Mapping[str, str] | None = None
) -> Path:
    """Write `document` to a new recovery file and return its path; RecoveryFileError
    naming every place tried when none can be written."""
    text = json.dumps(document, indent=2) + "\n"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    problems: list[str] = []
    places = ((unsaved_folder(environ), ""), (Path(tempfile.gettempdir()), _TEMP_PREFIX))
    for folder, prefix in places:
        try:
            if not prefix:
                folder.mkdir(parents=True, exist_ok=True)
            return _write_new(folder, f"{prefix}{kind}-{stamp}-", text)
        except OSError as error:
            problems.append(f"{folder}: {error.strerror or error}")
    raise RecoveryFileError(f"no recovery file could be written ({'; '.join(problems)})")


def _write_new(folder: Path, prefix: str, text: str) -> Path:
    descriptor, name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".json")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            # The copy must survive a crash or power cut right after the run: it may be the
            # only one.
            os.fsync(stream.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)  # a half-written file is no recovery file
        raise
    return Path(name)
