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

from flashmark.errors import HistoryError, ResultNotSaved
from flashmark.saving import KINDS, RecoveryFileError, entry_for, keep_unsaved
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


def save_result(history: History, document: Mapping[str, Any]) -> SaveOutcome:
    """Save `document`; if that fails, write it to a recovery file instead."""
    try:
        entry = entry_for(document)
        return SaveOutcome(
            id=history.save(
                kind=entry.kind, target=entry.target, label=entry.label, document=document
            )
        )
    except Exception as error:  # whatever failed, the measured result is kept first
        cause = error
    try:
        path = keep_unsaved(document, KINDS.get(str(document.get("schema")), "result"))
    except RecoveryFileError as lost:
        problem = ResultNotSaved(
            f"the result was measured but not saved: {cause}; {lost}: the JSON document "
            "on stdout is the only copy"
        )
        problem.__cause__ = cause
        return SaveOutcome(id=None, problem=problem)
    # An explicit history is named in the command, so that it imports where it was meant to go.
    db = "" if history.create_folder else f" --db {shlex.quote(str(history.path))}"
    problem = ResultNotSaved(
        f"the result was measured but not saved: {cause}. It is kept in {path}: "
        f"`flashmark import{db} {shlex.quote(str(path))}` adds it to the history"
    )
    problem.__cause__ = cause
    return SaveOutcome(id=None, problem=problem, recovery_file=path)
