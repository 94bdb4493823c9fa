"""The benchmark run as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.bench.document import RUN_DOCUMENT
from flashmark.bench.run_result import Run
from flashmark.result_kind import CardIdentity, HtmlSection, Listing, ResultKind, cid_identity

if TYPE_CHECKING:
    from flashmark.references.records import ReferenceDevice
    from flashmark.views.writers import ViewWriters


def _listing(run: Run) -> Listing:
    # What was measured, absolute: "." or "card" would name another place tomorrow.
    label = run.settings.profile + (" (partial)" if run.partial is not None else "")
    return Listing(run.target.folder or run.target.path, label)


def _writers() -> ViewWriters[Run]:
    # Imported when asked for: the run's view reads the grading, the monitor and the workloads,
    # which `flashmark history` never needs.
    from flashmark.bench.render.view import WRITERS

    return WRITERS


def _html(runs: Sequence[Run], references: Sequence[ReferenceDevice]) -> HtmlSection:
    # Imported when asked for: pygal and Jinja2 are the heaviest part of flashmark.
    from flashmark.bench.render.html import runs_section

    return runs_section(runs, references)


def _card(run: Run) -> CardIdentity | None:
    """The probed device's card by its CID, else the device by its serial number; a loop
    device by its image (its backing file, as the probe's loop layer names it)."""
    device = run.probe.device if run.probe is not None else None
    if device is None or run.probe is None:
        return None
    from flashmark.probe.summary import device_summary, measured_summary

    name = device_summary(device)
    if device.card is not None and device.card.cid is not None:
        return cid_identity(device.card.cid.raw, name)
    if device.serial:
        return CardIdentity(f"serial:{device.serial}", name)
    loop = next((layer for layer in run.probe.layers if layer.kind == "loop"), None)
    if device.kind == "loop" and loop is not None:
        return CardIdentity(f"loop:{loop.detail}", measured_summary(run.probe) or name)
    return None


RUN: ResultKind[Run] = ResultKind(
    name="benchmark",
    document=RUN_DOCUMENT,
    listing=_listing,
    terminal=lambda run: _writers().terminal(run),
    summary=lambda run: run.summary,
    markdown=lambda runs: _writers().markdown(runs),
    csv=lambda runs: _writers().csv(runs),
    html=_html,
    card=_card,
)
