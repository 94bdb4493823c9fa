"""`flashmark clean [TARGET]`, and the same clean-up at the start of `run`, `workload` and
`surface` (`say_cleaned_at_start`)."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.clean.kind import CLEAN
from flashmark.clean.result import CLEAN_SCHEMA
from flashmark.clean.run import CleanRequest, clean_at_start, clean_failure, run_clean
from flashmark.cli import debug_option, json_option
from flashmark.cli.tail import finish


@click.command("clean")
@click.argument("target", default=".", metavar="[TARGET]")
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@json_option(f"Print a {CLEAN_SCHEMA} document on stdout.")
@debug_option
def clean_command(target: str, dry_run: bool, as_json: bool) -> None:
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
    result = run_clean(CleanRequest(target, dry_run=dry_run))
    finish(CLEAN, result, None, as_json=as_json)
    failure = clean_failure(result, target)
    if failure is not None:
        raise failure


def say_cleaned_at_start(given: str | Path) -> None:
    """At the start of `run`, `workload` and `surface`: remove dead runs' leftovers from the
    target's folder and the temp folder, and say so on stderr. Never stops the command."""
    for note in clean_at_start(given):
        click.echo(f"flashmark: {note}", err=True)
