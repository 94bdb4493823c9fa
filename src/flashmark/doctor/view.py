"""A doctor's findings in words: its answer in one line and a block a finding, the view every
format is written from (flashmark.views)."""

from __future__ import annotations

from flashmark.doctor.findings import Finding, MeasuredRate, cost_text
from flashmark.doctor.result import DoctorResult, doctor_summary
from flashmark.views.model import Block, Cell, Fact, Facts, Notes, View

# The CSV table: one row per finding (a result without any: one row without a finding).
CSV_COLUMNS = (
    "id",
    "finished_at",
    "device",
    "board",
    "category",
    "finding",
    "why",
    "fix",
    "cap_bytes_per_second",
)


def _finding_block(finding: Finding, measured: MeasuredRate | None) -> Facts:
    """The finding under its category, then why it matters, its fix, the cap it sets and what
    that cap costs by the latest run on the device (`measured`)."""
    rows = [
        Fact(finding.category, finding.what, tone="fail"),
        Fact("why", finding.why),
        Fact("fix", finding.fix),
    ]
    if finding.cap_bytes_per_second is not None:
        rows.append(Fact("cap", f"{finding.cap_bytes_per_second / 1e6:.0f} MB/s at most"))
    cost = cost_text(finding, measured) if measured is not None else None
    if cost is not None:
        rows.append(Fact("measured", cost))
    return Facts(tuple(rows))


def doctor_view(result: DoctorResult) -> View:
    header = [Fact("device", f"{result.device} ({result.device_kind})")]
    header += [Fact("board", result.board)] if result.board else []
    header += [Fact("kernel", result.kernel)] if result.kernel else []
    blocks: list[Block] = [Facts(tuple(header))]
    blocks += [_finding_block(finding, result.measured) for finding in result.findings]
    if result.not_checked:
        blocks.append(Notes(result.not_checked))
    base: tuple[Cell, ...] = (result.id, result.finished_at, result.device, result.board)
    records = tuple(
        (*base, f.category, f.what, f.why, f.fix, f.cap_bytes_per_second) for f in result.findings
    ) or ((*base, None, None, None, None, None),)
    number = f" #{result.id}" if result.id is not None else ""
    return View(
        title=f"flashmark doctor{number}: {result.device}, {result.finished_at}",
        blocks=tuple(blocks),
        verdict=doctor_summary(result),
        badge=f"{len(result.findings)} found" if result.findings else "clear",
        tone="fail" if result.findings else "pass",
        records=records,
    )
