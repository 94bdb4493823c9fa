"""`flashmark probe`'s terminal view: the target's layers, each device with its card's passport,
the environment, and the probe's notes, as a view's titled facts (flashmark.views)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Group

from flashmark.bench.model import Passport
from flashmark.bench.render.describe import device_facts, environment_facts, passport_rows
from flashmark.probe.model import ProbeReport
from flashmark.views.model import Block, Fact, Facts, Sentence
from flashmark.views.terminal import blocks_to_terminal


def render_probe(report: ProbeReport, passports: Sequence[Passport] = ()) -> Group:
    blocks: list[Block] = [
        Sentence(f"{report.target_type} {report.resolved}", tone="strong"),
        _facts(
            "Layers", ((layer.kind, f"{layer.name}: {layer.detail}") for layer in report.layers)
        ),
    ]
    for device in report.devices:
        blocks.append(_facts(f"Device {device.name}", device_facts(device, detail=True)))
        blocks += [
            _facts(f"Passport {passport.device}", passport_rows(passport))
            for passport in passports
            if passport.device == device.name
        ]
    blocks.append(_facts("Environment", environment_facts(report.environment, detail=True)))
    if report.notes:
        blocks.append(_facts("Notes", (("", note) for note in report.notes)))
    return blocks_to_terminal(blocks)


def _facts(title: str, rows: Iterable[tuple[str, str]]) -> Facts:
    return Facts(tuple(Fact(label, text) for label, text in rows), title=title)
