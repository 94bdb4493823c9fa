"""`flashmark probe [TARGET] [--json]`: what the target's device is and what surrounds it."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.bench.probe_kind import PROBE
from flashmark.bench.probing import ProbeRequest, run_probe
from flashmark.cli import db_option, debug_option, json_option
from flashmark.cli.output import stderr_console, styled
from flashmark.cli.tail import finish


@click.command("probe")
@click.argument("target", required=False, default=".", metavar="[TARGET]")
@json_option('As JSON ("schema": "flashmark.probe/1", with "passports" for cards).')
@db_option
@debug_option
def probe_command(target: str, as_json: bool, db_path: Path | None) -> None:
    """Identify the device under TARGET (a folder, file, partition or device; default: the
    current folder): kind, registers and claimed classes of SD/eMMC cards, bus speed,
    health, and the conditions on this machine that would distort a benchmark.

    \b
    Examples:
        flashmark probe
        flashmark probe /media/card --json
        flashmark probe /dev/mmcblk0
    Recorded trees: FLASHMARK_SYSFS_ROOT, FLASHMARK_PROCFS_ROOT, FLASHMARK_DEBUGFS_ROOT.
    """
    errors = stderr_console()
    result = run_probe(ProbeRequest(target, db_path), warn=errors.print)
    finish(PROBE, result, None, as_json=as_json)
    for warning in result.report.warnings:
        errors.print(styled(f"warning: {warning}", "yellow"))
