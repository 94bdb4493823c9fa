"""`flashmark clean [TARGET]`, and the same clean-up at the start of `run` and `workload`."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import click

from flashmark import __version__
from flashmark.cli import debug_option
from flashmark.cli.output import print_json
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

# `clean --json` (docs/leftovers.md).
#   1: first version.
CLEAN_SCHEMA = "flashmark.clean/1"
_LISTED_AT_START = 3  # paths named in the one line `run` prints; the rest are counted

_VERB = {
    Action.REMOVED: "removed",
    Action.WOULD_REMOVE: "would remove",
    Action.LEFT: "left",
    Action.FAILED: "failed",
}


@click.command("clean")
@click.argument("target", default=".", metavar="[TARGET]")
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@click.option("--json", "as_json", is_flag=True, help=f"Print a {CLEAN_SCHEMA} document on stdout.")
@debug_option
def clean_command(target: str, dry_run: bool, as_json: bool, debug: bool) -> None:
    """Remove what killed flashmark runs left in TARGET (default: here) and the temp folder.

    \b
    A run removes its files on every exit it sees: errors, Ctrl-C, SIGTERM. A SIGKILL,
    the OOM killer or a power cut leave them behind:
      .flashmark-*.tmp        the test file (as large as --size), in the folder measured
      flashmark-workload-*    a workload's files, in the folder measured
      flashmark-fio-*         fio's job files and logs, in the temp folder ($TMPDIR)
    Each name records its owner: process id, start time and boot. An entry is removed only
    when that process is gone (or the machine restarted since); a running flashmark's files
    are left alone, and so are names whose owner cannot be checked. Nothing else is touched.
    `flashmark run` and `flashmark workload` do the same when they start.

    \b
    Give the folder you ran in (for a file target, the file or its folder).
    Examples:
      flashmark clean --dry-run /media/pi/card   list only
      flashmark clean /media/pi/card             remove
      sudo flashmark clean /media/pi/card        files of runs started with sudo
    """
    folder = leftover_folder(target)
    report = clean_folders((folder, *_temp_folders()), ProcessTable(), dry_run=dry_run)
    if as_json:
        print_json(clean_document(report))
    else:
        for outcome in report.outcomes:
            click.echo(_outcome_line(outcome))
        click.echo(_summary(report))
    failed = report.with_action(Action.FAILED)
    if failed:
        raise _removal_error(failed, target)


def clean_at_start(given: str | Path) -> None:
    """At the start of `run` and `workload`: remove dead runs' leftovers from the target's
    folder and the temp folder, and say so in one line on stderr.

    Never stops the command: a target that cannot be scanned is the command's own error to
    report, a moment later."""
    folders = _temp_folders()
    # A device or a missing folder has no leftovers here: `run` and `workload` say what is wrong.
    with contextlib.suppress(FlashmarkError):
        folders.insert(0, leftover_folder(given))
    outcomes: list[Outcome] = []
    for folder in folders:
        try:
            outcomes += clean_folders((folder,), ProcessTable()).outcomes
        except FlashmarkError as error:
            click.echo(f"flashmark: warning: not looking for leftovers: {error}", err=True)
    report = CleanReport(folders=tuple(folders), outcomes=tuple(outcomes), dry_run=False)
    removed = report.with_action(Action.REMOVED)
    if removed:
        click.echo(
            f"flashmark: removed {_count(len(removed))} of flashmark runs that were killed "
            f"({format_size(report.removed_bytes)}): {_paths(removed)}",
            err=True,
        )
    failed = report.with_action(Action.FAILED)
    if failed:
        click.echo(f"flashmark: warning: {_removal_error(failed, given)}", err=True)


def _temp_folders() -> list[Path]:
    """The temporary folder runs work in, when there is one (Python finds none when every
    candidate is unwritable: then no run could have left anything there either)."""
    try:
        return [temp_folder()]
    except FileNotFoundError:
        return []


def clean_document(report: CleanReport) -> dict[str, Any]:
    return {
        "schema": CLEAN_SCHEMA,
        "flashmark_version": __version__,
        "dry_run": report.dry_run,
        "folders": [str(folder) for folder in report.folders],
        "removed_bytes": report.removed_bytes,
        "leftovers": [_outcome_dict(outcome) for outcome in report.outcomes],
    }


def _outcome_dict(outcome: Outcome) -> dict[str, Any]:
    leftover = outcome.leftover
    owner = leftover.owner
    return {
        "path": str(leftover.path),
        "kind": leftover.kind.value,
        "action": outcome.action.value,
        "owner_state": leftover.state.value,
        "reason": leftover.reason,
        "error": outcome.error,
        "size_bytes": leftover.size_bytes,
        "pid": leftover.pid,
        "owner": None
        if owner is None
        else {
            "pid": owner.pid,
            "start_ticks": owner.start_ticks,
            "boot_id": owner.boot_id,
            "pid_namespace": owner.pid_namespace,
        },
    }


def _outcome_line(outcome: Outcome) -> str:
    leftover = outcome.leftover
    size = "" if leftover.size_bytes is None else f", {format_size(leftover.size_bytes)}"
    line = (
        f"{_VERB[outcome.action]:<13}{_shown(leftover.path)}  "
        f"({leftover.kind.value}{size}: {leftover.reason})"
    )
    if outcome.error:
        line += f": could not remove it: {outcome.error}"
    return line


def _summary(report: CleanReport) -> str:
    where = " and ".join(_shown(folder) for folder in report.folders)
    if not report.outcomes:
        return f"no flashmark leftovers in {where}"
    parts = []
    removed = report.with_action(Action.REMOVED)
    if removed:
        parts.append(f"removed {_count(len(removed))} ({format_size(report.removed_bytes)})")
    would = report.with_action(Action.WOULD_REMOVE)
    if would:
        size = sum(o.leftover.size_bytes or 0 for o in would)
        parts.append(
            f"would remove {_count(len(would))} ({format_size(size)}); "
            "run without --dry-run to remove them"
        )
    left = report.with_action(Action.LEFT)
    if left:
        parts.append(
            f"left {_count(len(left))} whose owner is running or cannot be checked (see above)"
        )
    failed = report.with_action(Action.FAILED)
    if failed:
        parts.append(f"could not remove {_count(len(failed))}")
    return f"{where}: " + "; ".join(parts)


def _removal_error(failed: tuple[Outcome, ...], target: str | Path) -> TargetError:
    denied = any(outcome.denied for outcome in failed)
    first = failed[0]
    message = (
        f"could not remove {_count(len(failed))} of killed runs, "
        f"{_shown(first.leftover.path)}: {first.error}"
    )
    if denied:
        return TargetPermissionDenied(
            f"{message} (made by another user or with sudo: run `sudo flashmark clean "
            f"{_shown(Path(target))}`)"
        )
    return TargetError(message)


def _paths(outcomes: tuple[Outcome, ...]) -> str:
    shown = [_shown(outcome.leftover.path) for outcome in outcomes[:_LISTED_AT_START]]
    more = len(outcomes) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _count(number: int) -> str:
    return f"{number} leftover{'' if number == 1 else 's'}"


def _shown(path: Path) -> str:
    """A path on one line: a folder's name may hold a newline or other control characters."""
    text = str(path)
    return text if text.isprintable() else repr(text)
