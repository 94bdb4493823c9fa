"""Removing what killed flashmark runs left (flashmark.system.leftovers names and finds them):
`flashmark clean`, and the same clean-up at the start of `run`, `workload` and `surface`."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from flashmark import __version__
from flashmark.clean.render import count, paths, shown
from flashmark.clean.result import CleanedLeftover, CleanResult
from flashmark.errors import FlashmarkError, TargetError, TargetPermissionDenied
from flashmark.fio.runner import temp_folder
from flashmark.system.leftovers import (
    Action,
    CleanReport,
    Outcome,
    ProcessTable,
    clean_folders,
    leftover_folder,
)
from flashmark.units import format_size


@dataclass(frozen=True)
class CleanRequest:
    """What `flashmark clean` is asked: the folder a run measured (a file's folder), and
    whether to list only."""

    target: str | Path = "."
    dry_run: bool = False


def run_clean(request: CleanRequest) -> CleanResult:
    """Remove the leftovers of dead runs from the target's folder and the temp folder (list
    them with `dry_run`). A folder that cannot be listed raises; a failed removal is in the
    result (`clean_failure` makes it an error)."""
    folder = leftover_folder(request.target)
    report = clean_folders((folder, *_temp_folders()), ProcessTable(), dry_run=request.dry_run)
    return CleanResult.of(report, __version__)


def clean_failure(result: CleanResult, target: str | Path) -> TargetError | None:
    """The error a clean that could not remove everything ends with; None when it could."""
    failed = result.with_action(Action.FAILED)
    return _removal_error(failed, target) if failed else None


def clean_at_start(given: str | Path) -> tuple[str, ...]:
    """At the start of a command that writes in a folder: remove dead runs' leftovers from the
    target's folder and the temp folder. What there is to say about it, a line each.

    Never stops the command: a target that cannot be scanned is the command's own error to
    report, a moment later."""
    folders = _temp_folders()
    # A device or a missing folder has no leftovers here: the command says what is wrong.
    with contextlib.suppress(FlashmarkError):
        folders.insert(0, leftover_folder(given))
    notes: list[str] = []
    outcomes: list[Outcome] = []
    for folder in folders:
        try:
            outcomes += clean_folders((folder,), ProcessTable()).outcomes
        except FlashmarkError as error:
            notes.append(f"warning: not looking for leftovers: {error}")
    report = CleanReport(folders=tuple(folders), outcomes=tuple(outcomes), dry_run=False)
    result = CleanResult.of(report, __version__)
    removed = result.with_action(Action.REMOVED)
    if removed:
        notes.append(
            f"removed {count(len(removed))} of flashmark runs that were killed "
            f"({format_size(result.removed_bytes)}): {paths(removed)}"
        )
    failure = clean_failure(result, given)
    if failure is not None:
        notes.append(f"warning: {failure}")
    return tuple(notes)


def _temp_folders() -> list[Path]:
    """The temporary folder runs work in, when there is one (Python finds none when every
    candidate is unwritable: then no run could have left anything there either)."""
    try:
        return [temp_folder()]
    except FileNotFoundError:
        return []


def _removal_error(failed: tuple[CleanedLeftover, ...], target: str | Path) -> TargetError:
    denied = any(leftover.denied for leftover in failed)
    first = failed[0]
    message = (
        f"could not remove {count(len(failed))} of killed runs, {shown(first.path)}: {first.error}"
    )
    if denied:
        return TargetPermissionDenied(
            f"{message} (made by another user or with sudo: run `sudo flashmark clean "
            f"{shown(Path(target))}`)"
        )
    return TargetError(message)
