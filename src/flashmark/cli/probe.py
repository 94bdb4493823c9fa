"""`flashmark probe [TARGET] [--json]`: what the target's device is and what surrounds it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import click
from rich.console import Group
from rich.table import Table
from rich.text import Text

from flashmark.bench.grading import judge_probe
from flashmark.bench.model import Passport
from flashmark.bench.passport import card_passports
from flashmark.bench.render.describe import device_facts, environment_facts, passport_rows
from flashmark.cli import db_option, debug_option
from flashmark.cli.output import print_json, stderr_console, stdout_console
from flashmark.codec import encode
from flashmark.history.store import History
from flashmark.probe import probe_target
from flashmark.probe.model import ProbeReport
from flashmark.system.sysroot import SystemRoots


@click.command("probe")
@click.argument("target", required=False, default=".", metavar="[TARGET]")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='As JSON ("schema": "flashmark.probe/1", with "passports" for cards).',
)
@db_option
@debug_option
def probe_command(target: str, as_json: bool, db_path: Path | None, debug: bool) -> None:
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
    report = judge_probe(probe_target(target, SystemRoots.from_environment()))
    errors = stderr_console()
    passports = card_passports(report, History.locate(db_path), errors.print)
    if as_json:
        print_json({**encode(report), "passports": encode(passports)})
    else:
        stdout_console().print(render_probe(report, passports))
    for warning in report.warnings:
        errors.print(Text(f"warning: {warning}", style="yellow"))


def render_probe(report: ProbeReport, passports: Sequence[Passport] = ()) -> Group:
    parts: list[Table | Text] = [
        Text(f"{report.target_type} {report.resolved}", style="bold"),
        _section(
            "Layers", ((layer.kind, f"{layer.name}: {layer.detail}") for layer in report.layers)
        ),
    ]
    for device in report.devices:
        parts.append(_section(f"Device {device.name}", device_facts(device, detail=True)))
        for passport in passports:
            if passport.device == device.name:
                parts.append(_passport_section(passport))
    environment = environment_facts(report.environment, detail=True)
    parts.append(_section("Environment", environment))
    if report.notes:
        parts.append(_section("Notes", (("", note) for note in report.notes)))
    return Group(*parts)


def _passport_section(passport: Passport) -> Table:
    return _section(f"Passport {passport.device}", passport_rows(passport))


def _section(title: str, rows: Iterable[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(key, value)
    return table
