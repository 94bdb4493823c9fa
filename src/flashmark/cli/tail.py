"""The shared tail of every measuring command: check the history before measuring; after,
save the result, print its JSON document or render it, and end with its verdict line, the
answer to the question the command was asked and where it was saved (`finish`). When the save
fails (the database changed in between), the result is kept anyway.

A kept result is printed by the command as usual, written to a recovery file
(flashmark.history.recovery.keep_unsaved) and reported as ResultNotSaved (exit 7) with the file's
path and the `flashmark import` line that adds it to the history.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from flashmark.cli.output import (
    OutputFailed,
    is_quiet,
    print_json,
    print_text,
    print_verdict,
    stderr_console,
    stdout_console,
    verdict_line,
)
from flashmark.codec import to_text
from flashmark.errors import (
    ExitStatus,
    FlashmarkError,
    HistoryError,
    Interrupted,
    ResultFormatError,
    ResultNotSaved,
    add_outcome,
    outcomes,
)
from flashmark.history.recovery import RecoveryFileError, keep_unsaved
from flashmark.history.store import History
from flashmark.kinds.registry import entry_for, kind_of
from flashmark.result_kind import ResultKind
from flashmark.system.signals import signals_raise

R = TypeVar("R")


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
            listed = {"kind": entry.kind, "target": entry.target, "label": entry.label}
            if replacing is not None:
                return SaveOutcome(id=history.replace(replacing, document=document, **listed))
            return SaveOutcome(id=history.save(document=document, **listed))
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
        # Where the only copy is, the command says (`print_only_copy`): it knows what it printed.
        problem = ResultNotSaved(f"the result was measured but not saved: {cause}; {lost}")
        problem.__cause__ = cause
        return SaveOutcome(id=None, problem=problem)
    problem = ResultNotSaved(
        f"the result was measured but not saved: {cause}. It is kept in {path}: "
        f"{_import_line(history, path)} adds it to the history"
    )
    problem.__cause__ = cause
    return SaveOutcome(id=None, problem=problem, recovery_file=path)


def _kind(document: Mapping[str, Any]) -> str:
    try:
        return kind_of(document).name
    except ResultFormatError:
        return "result"


def _import_line(history: History, path: Path) -> str:
    # An explicit history is named in the command, so that it imports where it was meant to go.
    db = "" if history.create_folder else f" --db {shlex.quote(str(history.path))}"
    return f"`flashmark import{db} {shlex.quote(str(path))}`"


def print_only_copy(
    outcome: SaveOutcome | None, document: Mapping[str, Any], *, json_on_stdout: bool
) -> None:
    """When neither the history nor a recovery file took the result, the printed document is
    its only copy: make sure it is printed whole (after the tables, unless it already was the
    output), on stderr when stdout cannot take it, and say where in the error's line."""
    if outcome is None or outcome.problem is None or outcome.recovery_file is not None:
        return
    where = "on stdout"
    if not json_on_stdout:
        try:
            print_json(document)
            where = "on stdout, after the tables"
        except OSError:
            where = ""
    if not where:
        try:
            sys.stderr.write(to_text(document))
            sys.stderr.flush()
            where = "on stderr"
        except (OSError, ValueError):
            outcome.problem.args = (f"{outcome.problem}; it could not be printed either",)
            return
    outcome.problem.args = (
        f"{outcome.problem}: the JSON document printed {where} is the only copy",
    )


@contextmanager
def printing_result(document: Mapping[str, Any], outcome: SaveOutcome | None) -> Iterator[None]:
    """Around printing a measured result: when stdout refuses it (OutputFailed), the error's
    line says where the result is: saved, in the recovery file the save wrote, or in one
    written now (with --no-save the printed copy was to be the only one)."""
    try:
        yield
    except OutputFailed as failed:
        add_outcome(failed, _where_kept(document, outcome))
        raise


def _where_kept(document: Mapping[str, Any], outcome: SaveOutcome | None) -> str:
    if outcome is not None and outcome.id is not None:
        return f"the result is saved as {outcome.id} (`flashmark show {outcome.id}`)"
    if outcome is not None and outcome.recovery_file is not None:
        return f"the result is kept in {outcome.recovery_file}"
    try:
        path = keep_unsaved(document, _kind(document))
    except RecoveryFileError as lost:
        return f"the result is lost: {lost}"
    return f"the result is kept in {path} (`flashmark import {shlex.quote(str(path))}` adds it)"


@dataclass(frozen=True)
class Finished(Generic[R]):
    """What `finish` did with a result: the result (with its id once saved), the document
    printed or saved, and the save's outcome (None with --no-save)."""

    result: R
    document: Mapping[str, Any]
    outcome: SaveOutcome | None

    @property
    def saved_id(self) -> int | None:
        return None if self.outcome is None else self.outcome.id

    def raise_problem(self) -> None:
        """A save that failed (exit 7), after everything else the command had to say."""
        if self.outcome is not None and self.outcome.problem is not None:
            raise self.outcome.problem


def finish(
    kind: ResultKind[R],
    result: R,
    history: History | None,
    *,
    as_json: bool,
    replacing: int | None = None,
) -> Finished[R]:
    """Save `result` (in place of the checkpoint `replacing`), then print its document with
    --json or render it for the terminal, ending with its verdict line (verdict_line: on
    stderr after a JSON document; alone with --quiet). When neither the history nor a recovery
    file took it, the printed document is its only copy and the save's problem says so
    (print_only_copy); a stdout that refuses the output is one line that says where the result
    is (printing_result). A kind printed only (probe, clean) is printed, nothing else; a
    terminal view that is plain text is printed as it is."""
    document = kind.to_document(result)
    if not kind.saved:  # printed only (probe, clean): there is nothing to save or keep
        if history is not None:
            raise TypeError(f"a {kind.name} result is printed, never saved")
        if as_json:
            print_json(document)
        else:
            _print_view(kind, result)
        return Finished(result, document, None)
    outcome = None
    if history is not None:
        outcome = save_result(history, document, replacing=replacing)
        if outcome.id is not None:
            result = replace(result, id=outcome.id)  # type: ignore[type-var]
            document = kind.to_document(result)
    line = verdict_line(kind, result, None if outcome is None else outcome.id)
    with printing_result(document, outcome):
        if as_json:
            print_json(document)
            print_verdict(stderr_console(), line)  # silent with --quiet
        else:
            if not is_quiet():
                _print_view(kind, result)
            print_verdict(stdout_console(), line)
        print_only_copy(outcome, document, json_on_stdout=as_json)
    return Finished(result, document, outcome)


def stopped_error(cause: BaseException, kept: str) -> FlashmarkError:
    """`cause`, which stopped a measuring command, in one line that says what was `kept`; its
    exit status and what its cleanup did (its outcomes) stay, and --debug shows where it came
    from."""
    error = FlashmarkError(f"{cause}; {kept}")
    error.exit_status = getattr(cause, "exit_status", ExitStatus.FAILURE)
    error.__cause__ = cause
    for note in outcomes(cause):
        add_outcome(error, note)
    return error


def _print_view(kind: ResultKind[R], result: R) -> None:
    """The result's terminal view on stdout; a view that is plain text as it is (no markup,
    no wrapping)."""
    if isinstance(view := kind.terminal(result), str):
        print_text(view)
    else:
        stdout_console().print(view)
