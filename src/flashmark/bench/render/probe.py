"""`flashmark probe`'s terminal view: the target's layers, each device with its card's passport,
the environment, and the probe's notes, as a view's titled facts (flashmark.views)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group

from flashmark.bench.model import Passport
from flashmark.bench.render.describe import device_facts, environment_facts, passport_rows
from flashmark.probe.model import ProbeReport
from flashmark.views.model import Block, Facts, Sentence
from flashmark.views.terminal import blocks_to_terminal


def render_probe(report: ProbeReport, passports: Sequence[Passport] = ()) -> Group:
    blocks: list[Block] = [
        Sentence(f"{report.target_type} {report.resolved}", tone="strong"),
        Facts.titled(
            "Layers", ((layer.kind, f"{layer.name}: {layer.detail}") for layer in report.layers)
        ),
    ]
    for device in report.devices:
        blocks.append(Facts.titled(f"Device {device.name}", device_facts(device, detail=True)))
        blocks += [
            Facts.titled(f"Passport {passport.device}", passport_rows(passport))
            for passport in passports
            if passport.device == device.name
        ]
    blocks.append(Facts.titled("Environment", environment_facts(report.environment, detail=True)))
    if report.notes:
        blocks.append(Facts.titled("Notes", (("", note) for note in report.notes)))
    return blocks_to_terminal(blocks)
