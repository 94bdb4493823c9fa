"""Saving what a command measured: check the history before measuring, save after, and when
the save still fails (the database changed in between), keep the result anyway.

A kept result is printed by the command as usual, written to a recovery file
(flashmark.saving.keep_unsaved) and reported as ResultNotSaved (exit 7) with the file's path
and the `flashmark import` line that adds it to the history.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashmark.documents.kinds import KINDS, entry_for
from flashmark.errors import HistoryError, Interrupted, ResultNotSaved
from flashmark.saving import RecoveryFileError, keep_unsaved
from flashmark.signals import signals_raise
from flashmark.store import History


@dataclass(frozen=True)
class SaveOutcome:
    """The id the result was saved as; or, when it was not, why and where it was kept."""

    id: int | None
    problem: ResultNotSaved | None = None
    recovery_file: Path | None = None


def history_to_save(db_path: Path | None, no_save: bool) -> History | None:
    """The history a command will save to, checked now, before anything is measured; None
    with --no-save. A HistoryError kind (exit 6) if it cannot take a result."""
    if no_save:
        return None
    history = History.locate(db_path)
    try:
        history.check_writable()
    except HistoryError as error:
        raise type(error)(f"{error} (--no-save measures without saving)") from None
    return history


def save_result(
    history: History, document: Mapping[str, Any], *, replacing: int | None = None
) -> SaveOutcome:
    """Save `document` (in place of entry `replacing`, its checkpoint, when given); if that
    fails, write it to a recovery file instead."""
    try:
        # SIGTERM and SIGHUP raise here too (their default would end the process mid-save).
        with signals_raise():
            entry = entry_for(document)
            if replacing is not None:
                return SaveOutcome(
                    id=history.replace(
                        replacing,
                        kind=entry.kind,
                        target=entry.target,
                        label=entry.label,
                        document=document,
                    )
                )
            return SaveOutcome(
                id=history.save(
                    kind=entry.kind, target=entry.target, label=entry.label, document=document
                )
            )
    except Interrupted as stop:
        # Stopped while saving: whether the save committed is unknown, so keep a copy either
        # way (importing a saved one again is recognised), then let the stop take its course,
        # saying where the copy is in its one line.
        try:
            path = keep_unsaved(document, _kind(document))
            kept = f"the result is kept in {path}: {_import_line(history, path)} adds it"
        except RecoveryFileError as lost:
            kept = f"the result may not be saved, and {lost}"
        stopped = Interrupted(stop.signal_name, stop.exit_status)
        stopped.args = (f"stopped by {stop.signal_name} while saving; {kept}",)
        raise stopped from stop
    except Exception as error:  # whatever failed, the measured result is kept first
        cause = error
    try:
        path = keep_unsaved(document, _kind(document))
    except RecoveryFileError as lost:
        problem = ResultNotSaved(
            f"the result was measured but not saved: {cause}; {lost}: the JSON document "
            "on stdout is the only copy"
        )
        problem.__cause__ = cause
        return SaveOutcome(id=None, problem=problem)
    problem = ResultNotSaved(
        f"the result was measured but not saved: {cause}. It is kept in {path}: "
        f"{_import_line(history, path)} adds it to the history"
    )
    problem.__cause__ = cause
    return SaveOutcome(id=None, problem=problem, recovery_file=path)


def _kind(document: Mapping[str, Any]) -> str:
    return KINDS.get(str(document.get("schema")), "result")


def _import_line(history: History, path: Path) -> str:
    # An explicit history is named in the command, so that it imports where it was meant to go.
    db = "" if history.create_folder else f" --db {shlex.quote(str(history.path))}"
    return f"`flashmark import{db} {shlex.quote(str(path))}`"
