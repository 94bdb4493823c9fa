"""`flashmark health [TARGET]`: how worn the device under TARGET is, and how long it will last
at the rate it is written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from flashmark.cli import debug_option
from flashmark.cli.output import saving_options, stderr_console, styled
from flashmark.cli.tail import finish, history_to_save
from flashmark.errors import HistoryError, ResultFormatError
from flashmark.health.check import HealthRequest, check_health
from flashmark.health.kind import HEALTH
from flashmark.health.result import HEALTH_SCHEMA, HealthResult
from flashmark.history.store import History
from flashmark.system.sysroot import SystemRoots


@click.command("health")
@click.argument("target", required=False, default="/", metavar="[TARGET]")
@click.option("--json", "as_json", is_flag=True, help=f'Print a "{HEALTH_SCHEMA}" document.')
@saving_options("Do not keep this reading (the forecast still uses the kept ones).")
@debug_option
def health_command(
    target: str, as_json: bool, db_path: Path | None, no_save: bool, debug: bool
) -> None:
    """How worn the device under TARGET is (a folder, partition or device; default: the
    system's, /) and how many years it has left at the rate it is written, as an interval.

    \b
    It reads what the device reports of its wear (eMMC life estimates and pre-EOL; NVMe
    SMART: percentage used, data written, spare; as root) and the kernel's count of what
    was written to it, and keeps each reading in the history: the forecast narrows as
    readings add up, so run it again now and then. A device that reports no wear (most SD
    cards) gets "unknown" and the full writes it takes a day. It writes nothing to the
    device. Method: docs/health.md.

    \b
    Examples:
        flashmark health
        sudo flashmark health /dev/nvme0n1 --json
    Recorded trees: FLASHMARK_SYSFS_ROOT, FLASHMARK_PROCFS_ROOT, FLASHMARK_DEBUGFS_ROOT,
    FLASHMARK_TOOLS_ROOT.
    """
    errors = stderr_console()
    history = history_to_save(db_path, no_save)
    earlier = _earlier_readings(history or History.locate(db_path), errors.print)
    result = check_health(HealthRequest(target), earlier, SystemRoots.from_environment())
    finish(HEALTH, result, history, as_json=as_json).raise_problem()
    for flag in result.red_flags:
        errors.print(styled(f"warning: {flag}", "red"))


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
