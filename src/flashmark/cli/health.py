"""`flashmark health [TARGET]`: how worn the device under TARGET is, and how long it will last
at the rate it is written."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path

import click
from click.core import ParameterSource

from flashmark.cli import debug_option, json_option
from flashmark.cli.output import (
    print_text,
    saving_options,
    set_quiet,
    stderr_console,
    styled,
)
from flashmark.cli.params import BoundedFloat
from flashmark.cli.tail import finish, history_to_save
from flashmark.errors import HistoryError, ResultFormatError, TargetNotFound, UsageError, printable
from flashmark.health.check import HealthRequest, check_health
from flashmark.health.kind import HEALTH
from flashmark.health.result import HEALTH_SCHEMA, HealthResult
from flashmark.health.timer import EVERY, UNIT_DIR_ENV, install_timer, remove_timer
from flashmark.history.store import History
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import wait_while_measured

# How long --record waits for a run on the device to end: a standard run takes minutes, a
# sustained one up to an hour; a surface scan of a whole card takes longer, and the next
# reading comes with the next timer.
WAIT_MINUTES = 60.0
MAX_WAIT_MINUTES = 24 * 60.0  # a day: by then the next daily reading is due


@click.command("health")
@click.argument("target", required=False, default="/", metavar="[TARGET]")
@json_option(f'Print a "{HEALTH_SCHEMA}" document.')
@click.option(
    "--record",
    is_flag=True,
    help="Take a reading for the record and keep it, printing only its verdict line (for a "
    "timer): first wait while a flashmark run measures the device, so that its writes are not "
    "counted as the device's own (up to --wait).",
)
@click.option(
    "--wait",
    "wait_minutes",
    type=BoundedFloat(0.0, MAX_WAIT_MINUTES, unit="minutes"),
    default=WAIT_MINUTES,
    show_default=f"{WAIT_MINUTES:g}",
    metavar="MINUTES",
    help="With --record: how long to wait for a run on the device to end; then exit 4.",
)
@click.option(
    "--install-timer",
    is_flag=True,
    help="Install a systemd timer that runs `health --record TARGET` (as root), into this "
    f"history; ${UNIT_DIR_ENV} writes it elsewhere.",
)
@click.option(
    "--every",
    type=click.Choice(EVERY),
    default="daily",
    show_default=True,
    help="With --install-timer: how often it takes a reading.",
)
@click.option(
    "--remove-timer", is_flag=True, help="Stop the timer of TARGET and delete its unit files."
)
@saving_options("Do not keep this reading (the forecast still uses the kept ones).")
@debug_option
def health_command(
    target: str,
    as_json: bool,
    record: bool,
    wait_minutes: float,
    install_timer: bool,
    every: str,
    remove_timer: bool,
    db_path: Path | None,
    no_save: bool,
) -> None:
    """How worn the device under TARGET is (a folder, partition or device; default: the
    system's, /) and how many years it has left at the rate it is written, as an interval.

    \b
    It reads what the device reports of its wear (eMMC life estimates and pre-EOL; NVMe
    SMART: percentage used, data written, spare; as root) and the kernel's count of what
    was written to it, and keeps each reading in the history: the forecast narrows as
    readings add up, so run it again now and then. A device that reports no wear (most SD
    cards) gets "unknown" and the full writes it takes a day. It stores nothing on the
    device; as root (not with --record) it asks some SD cards for their vendor's health,
    for some Kingston cards with a CMD56 data write, then a read. Method: docs/health.md.

    \b
    The kernel's write counter starts again at every boot, so the record needs readings
    through each boot: `--install-timer` makes systemd take one a day (`--every`), with
    `--record`, which waits while a flashmark run measures the device (exit 4 after
    --wait minutes) and prints one line. `--remove-timer` takes it away.

    \b
    Examples:
        flashmark health
        sudo flashmark health /dev/nvme0n1 --json
        sudo flashmark health --install-timer /
        sudo flashmark health --remove-timer /
    Recorded trees: FLASHMARK_SYSFS_ROOT, FLASHMARK_PROCFS_ROOT, FLASHMARK_DEBUGFS_ROOT,
    FLASHMARK_TOOLS_ROOT.
    """
    context = click.get_current_context()
    if context.get_parameter_source("wait_minutes") is not ParameterSource.DEFAULT and not record:
        raise UsageError("--wait goes with --record: only a reading for the record waits")
    if context.get_parameter_source("every") is not ParameterSource.DEFAULT and not install_timer:
        raise UsageError("--every goes with --install-timer: it is how often the timer reads")
    target_path = os.path.abspath(target)  # a timer runs in /: "." would name another folder
    if install_timer or remove_timer:
        _timer(
            target_path, install_timer, remove_timer, every, db_path, as_json or no_save or record
        )
        return
    if record and no_save:
        raise UsageError("--record keeps the reading: drop --no-save")
    history = history_to_save(db_path, no_save)
    if record:
        # Quiet from here, not from the option's callback: a later option's bad value would
        # stop the parse before the context that resets it is closed.
        set_quiet(click.get_current_context(), click.Option(["--quiet"]), True)
        # Said even when quiet: a timer's journal should tell a late reading from a lost one.
        wait_while_measured(target_path, wait_minutes * 60, lambda line: click.echo(line, err=True))
    errors = stderr_console()  # silent when quiet
    earlier = _earlier_readings(history or History.locate(db_path), errors.print)
    result = check_health(
        HealthRequest(target), earlier, SystemRoots.from_environment(), vendor_health=not record
    )
    finish(HEALTH, result, history, as_json=as_json).raise_problem()
    for flag in result.red_flags:
        errors.print(styled(f"warning: {flag}", "red"))


def _timer(
    target: str, install: bool, remove: bool, every: str, db_path: Path | None, other: bool
) -> None:
    """--install-timer or --remove-timer, and what it did in a line or two."""
    if (install and remove) or other:
        raise UsageError(
            "--install-timer and --remove-timer go alone (with --db, and --every with "
            "--install-timer): the timer's service runs --record"
        )
    if remove:
        files = remove_timer(target)
        print_text(f"removed {files.service} and {files.timer.name}")
        return
    if not os.path.exists(target):
        raise TargetNotFound(f"{printable(target)}: no such file or folder")
    history = history_to_save(db_path, no_save=False)  # made now, so the first reading can save
    assert history is not None
    installed = install_timer(target, every, history.path.resolve())
    files = installed.files
    lines = [
        f"wrote {files.service} and {files.timer.name}: a reading of {target} {every}, "
        f"into {history.path.resolve()}"
    ]
    if installed.started:
        lines.append(
            f"enabled and started: `systemctl list-timers {shlex.quote(files.timer.name)}` "
            "shows the next reading"
        )
    else:
        lines.append(
            f"not started (systemd is not running here, or the folder is not "
            f"/etc/systemd/system): `systemctl daemon-reload && systemctl enable --now "
            f"{shlex.quote(files.timer.name)}` starts it"
        )
    print_text("\n".join(lines))


def _earlier_readings(history: History, warn: Callable[[str], None]) -> list[HealthResult]:
    """The kept readings, oldest first; a history that cannot be read gives none (said)."""
    try:
        stored = history.list(kind=HEALTH.name)
    except HistoryError as error:
        warn(f"earlier readings not read: {error}")
        return []
    readings = []
    for entry in reversed(stored):
        try:
            readings.append(HEALTH.from_document(entry.document))
        except ResultFormatError:
            continue  # a reading this version cannot read adds nothing to the forecast
    return readings
