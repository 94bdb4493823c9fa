"""What `flashmark probe` prints (bench.probing makes it) as a kind of result (flashmark.kinds):
the judged probe report with its cards' passports. Printed, never saved.

Its document is the probe report's (`flashmark.probe/1`) with "passports" added, an addition a
reader of flashmark.probe/1 may ignore.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flashmark.bench.model import Passport
from flashmark.codec import Codec, document
from flashmark.probe.model import SCHEMA, ProbeReport
from flashmark.result_kind import Listing, ResultKind

if TYPE_CHECKING:
    from rich.console import RenderableType


@dataclass(frozen=True)
class ProbeResult:
    """The judged probe report and its cards' passports."""

    report: ProbeReport = field(metadata=document(flatten=True))
    passports: tuple[Passport, ...] = ()


PROBE_DOCUMENT = Codec(ProbeResult, SCHEMA, "probe")


def _terminal(result: ProbeResult) -> RenderableType:
    from flashmark.bench.render.probe import render_probe

    return render_probe(result.report, result.passports)


def _summary(result: ProbeResult) -> str:
    from flashmark.probe.summary import measured_summary

    return measured_summary(result.report) or f"{result.report.resolved}: no device found"


PROBE: ResultKind[ProbeResult] = ResultKind(
    name="probe",
    document=PROBE_DOCUMENT,
    listing=lambda result: Listing(result.report.resolved, result.report.target_type),
    terminal=_terminal,
    summary=_summary,
    saved=False,
)
