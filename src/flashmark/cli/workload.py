"""`flashmark workload NAME [TARGET]`: one real-world workload (a package install and its
relatives, a cold boot-like read), alone."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import debug_option, json_option
from flashmark.cli.clean import say_cleaned_at_start
from flashmark.cli.output import saving_options, say_line
from flashmark.cli.params import WORKLOAD_SCALE_POSITIVE, Choice, interval_option
from flashmark.cli.progress import progress_display
from flashmark.cli.tail import (
    finish,
    history_to_save,
)
from flashmark.system.signals import signals_raise
from flashmark.workloads.document import SCHEMA
from flashmark.workloads.kind import WORKLOADS
from flashmark.workloads.result import WORKLOAD_NAMES
from flashmark.workloads.run import WorkloadRequest, measure_workloads

_ALL = "all"


@click.command("workload")
@click.argument("name", type=Choice([*WORKLOAD_NAMES, _ALL]), metavar="NAME")
@click.argument("target", default=".", metavar="[TARGET]", type=click.Path(path_type=Path))
@click.option(
    "--scale",
    type=WORKLOAD_SCALE_POSITIVE,
    default=1.0,
    show_default=True,
    help="Size of the workload: 1 is the desktop install (400 packages, ~21,000 files, "
    '~0.8 GB) of "Performance impact of MMC storage used on SBC" (2018); 0.1 takes a '
    "tenth of the time.",
)
@interval_option("the device's I/O counters")
@json_option(f"Print a {SCHEMA} document on stdout.")
@saving_options("Do not save this result to the history.")
@debug_option
def workload_command(
    name: str,
    target: Path,
    scale: float,
    interval_s: float,
    as_json: bool,
    db_path: Path | None,
    no_save: bool,
) -> None:
    """Run a real-world workload in a temporary folder under TARGET (default: here).

    \b
    NAME is one of:
      pkg-install    install a desktop's packages the way apt and dpkg write them
      pkg-remove     purge 150 of them (that write-up's autoremove)
      pkg-reinstall  install those again from archives already in memory
      cold-read      drop the page cache (root) and read a boot's worth of files
      all            the four in that order, sharing state as that write-up did
    Each prints its wall time, its operations, and what the device saw meanwhile, and
    the result is saved to the history (`flashmark history`, `flashmark show ID`).
    Everything it writes is removed afterwards, also on error, Ctrl-C or SIGTERM.
    It says first where it writes and how much, and always leaves max(5%, 1 GiB) of
    the filesystem free (checked before each workload).
    """
    names = WORKLOAD_NAMES if name == _ALL else (name,)
    history = history_to_save(db_path, no_save)  # before anything runs: a bad history is known
    say_cleaned_at_start(target)
    with signals_raise(), progress_display() as display:
        display.begin(", ".join(names), 1, 1, None)

        def progress(fraction: float) -> None:
            display.update(fraction, "")

        result = measure_workloads(
            WorkloadRequest(names, target, scale, interval_s),
            progress=progress,
            say_space=say_line,
        )
        display.end(", ".join(names), "done")
    finish(WORKLOADS, result, history, as_json=as_json).raise_problem()
