"""`flashmark probe`'s terminal view: the target's layers, each device with its card's passport,
the environment, and the probe's notes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from flashmark.bench.model import Passport
from flashmark.bench.render.describe import device_facts, environment_facts, passport_rows
from flashmark.probe.model import ProbeReport


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
