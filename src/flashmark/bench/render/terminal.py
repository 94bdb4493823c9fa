"""Run -> rich renderables for the terminal. Pure: builds tables, prints nothing itself."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from flashmark.bench.model import DisturbanceStatus, Grade, Passport
from flashmark.bench.render.cells import (
    check_text,
    direction_cells,
    disturbance_text,
    header_lines,
    sustained_text,
)
from flashmark.bench.render.describe import passport_rows
from flashmark.bench.run_result import Run, medium_note, not_judged_text
from flashmark.stats import Verdict
from flashmark.units import KiB, mb_per_s
from flashmark.views.model import Facts
from flashmark.views.terminal import blocks_to_terminal
from flashmark.workloads.view import workload_blocks

_VERDICT_MARKUP: dict[Verdict | None, str] = {
    Verdict.PASS: "[green]pass[/green]",
    Verdict.FAIL: "[red]fail[/red]",
    Verdict.UNCERTAIN: "[bold yellow]uncertain[/bold yellow]",
    None: "[dim]not judged[/dim]",
}


def render_run(run: Run) -> RenderableType:
    parts: list[RenderableType] = [_header(run), _tests_table(run)]
    disturbed = [
        f"{result.spec.name} {text}"
        for result in run.tests
        if (text := disturbance_text(result)).startswith("disturbed")
    ]
    if disturbed:
        parts.append(Text("\n".join(disturbed), style="yellow"))
    unchecked = dict.fromkeys(
        f"disturbance {result.disturbance.reason}"
        for result in run.tests
        if result.disturbance is not None
        and result.disturbance.status is DisturbanceStatus.NOT_CHECKED
    )
    if unchecked:
        parts.append(Text("\n".join(unchecked), style="dim"))
    activity = _activity_table(run)
    if activity is not None:
        parts.append(activity)
    parts.append(_grades_table(run))
    sustained = sustained_text(run)
    if sustained is not None:
        parts.append(Text(f"sustained-write: {sustained}"))
    if run.workloads:
        parts.append(blocks_to_terminal(workload_blocks(run.workloads)))
    if run.findings:
        parts.append(Text("\n".join(f"finding: {f}" for f in run.findings), style="bold"))
    if run.passport is not None:
        parts.append(blocks_to_terminal([_passport_facts(run.passport)]))
    if run.warnings:
        parts.append(Text("\n".join(f"warning: {w}" for w in run.warnings), style="yellow"))
    return Group(*parts)


def _header(run: Run) -> Text:
    lines = [f"flashmark run{f' #{run.id}' if run.id else ''}  {run.started_at}"]
    lines += [f"{label:<8} {text}" for label, text in header_lines(run)]
    return Text("\n".join(lines))


def _tests_table(run: Run) -> Table:
    buffered = "" if run.settings.direct else " (buffered)"
    table = Table(title=f"Results{buffered}", title_justify="left", header_style="bold")
    table.add_column("test")
    for direction in ("read", "write"):
        table.add_column(f"{direction} MB/s", justify="right")
        table.add_column(f"{direction} IOPS", justify="right")
        table.add_column("p50", justify="right")
        table.add_column("p99", justify="right")
    table.add_column("disturbance")
    for result in run.tests:
        # The status alone: the reasons follow the table.
        disturbance = "" if result.disturbance is None else str(result.disturbance.status)
        style = "yellow" if disturbance == DisturbanceStatus.DISTURBED else ""
        table.add_row(
            result.spec.name,
            *direction_cells(result.read),
            *direction_cells(result.write),
            Text(disturbance, style=style),
        )
    for name in run.tests_skipped:
        table.add_row(Text(name, style="dim"), Text("skipped", style="dim"))
    return table


def _grades_table(run: Run) -> Table:
    """The grades, titled by what they mean for this device: SD Association classes for an SD
    card or eMMC, SD-class equivalents (a yardstick) for other media."""
    grades: Sequence[Grade] = run.grades
    note = medium_note(run)
    title = (
        "Grades (SD Association classes)"
        if note is None
        else f"Grades as SD-class equivalents ({note}: the SD Association's thresholds as a "
        "yardstick)"
    )
    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("class")
    table.add_column("verdict")
    table.add_column("checks: measured (required, margin)")
    for grade in grades:
        checks = "; ".join(check_text(check) for check in grade.checks)
        if grade.verdict is Verdict.UNCERTAIN and grade.verdict_reason:
            checks += f"\n[yellow]uncertain: {escape(grade.verdict_reason)}[/yellow]"
        table.add_row(grade.name, _VERDICT_MARKUP[grade.verdict], checks)
    not_judged = not_judged_text(run)
    if not_judged is not None:
        table.caption, table.caption_justify = not_judged, "left"
    return table


def _passport_facts(passport: Passport) -> Facts:
    """The measured card's passport: one verdict, each point with its evidence and source."""
    cid = f", CID {passport.cid}" if passport.cid else ""
    return Facts.titled(f"Card passport ({passport.device}{cid})", passport_rows(passport))


def _activity_table(run: Run) -> Table | None:
    """What the device itself saw during each test (/proc/diskstats), like `iostat -x`, in the
    results' units (MB = 10^6 bytes). Its window is the whole fio run, ramp and final flush
    included, where the results count only the timed window: the title says so, since the two
    differ by what the ramp and the flush did (and the kernel may merge or split requests)."""
    monitored = [(t.spec.name, t.monitor) for t in run.tests if t.monitor is not None]
    if not monitored:
        return None
    device = monitored[0][1].device
    table = Table(
        title=f"What {device} saw during each test (/proc/diskstats)",
        title_justify="left",
        caption="over the whole test, ramp and final flush included: the results above count "
        "only its timed window",
        caption_justify="left",
        header_style="bold",
    )
    for column in ("test", "reads/s", "writes/s", "read MB/s", "write MB/s", "request KiB",
                   "queue", "busy %"):  # fmt: skip
        table.add_column(column, justify="left" if column == "test" else "right")
    for name, series in monitored:
        s = series.summary()
        request = (s.read_bytes + s.write_bytes) / max(1, s.read_ios + s.write_ios)
        table.add_row(
            name, f"{s.read_iops:.1f}", f"{s.write_iops:.1f}", f"{mb_per_s(s.read_bps):.1f}",
            f"{mb_per_s(s.write_bps):.1f}", f"{request / KiB:.1f}",
            "-" if s.avg_queue is None else f"{s.avg_queue:.2f}",
            "-" if s.util_pct is None else f"{s.util_pct:.0f}",
        )  # fmt: skip
    return table
