"""Run -> rich renderables for the terminal. Pure: builds tables, prints nothing itself."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flashmark.model import Check, DirectionResult, Grade, Run, TargetKind
from flashmark.probe import device_summary
from flashmark.store import StoredResult
from flashmark.units import (
    format_duration,
    format_iops,
    format_latency_ns,
    format_rate,
    format_size,
)

_PASS = {True: "[green]pass[/green]", False: "[red]fail[/red]", None: "[yellow]n/a[/yellow]"}


def render_run(run: Run) -> RenderableType:
    parts: list[RenderableType] = [_header(run), _tests_table(run), _grades_table(run.grades)]
    if run.findings:
        parts.append(Text("\n".join(f"finding: {f}" for f in run.findings), style="bold"))
    if run.warnings:
        parts.append(Text("\n".join(f"warning: {w}" for w in run.warnings), style="yellow"))
    return Group(*parts)


def _header(run: Run) -> Text:
    target = run.target
    where = target.folder if target.kind is TargetKind.FILE else target.path
    lines = [f"flashmark run{f' #{run.id}' if run.id else ''}  {run.started_at}"]
    device = target.block_device or "unknown device"
    fs = f", {target.filesystem}" if target.filesystem else ""
    lines.append(f"target   {where} ({device}{fs})")
    if run.probe and run.probe.device:
        lines.append(f"device   {device_summary(run.probe.device)}")
    settings = run.settings
    mode = "direct I/O" if settings.direct else "BUFFERED I/O (page cache included)"
    lines.append(
        f"profile  {settings.profile}: area {format_size(settings.size_bytes)}, "
        f"{settings.runtime_s} s per test after {settings.ramp_s} s ramp, {mode}"
    )
    lines.append(f"engine   {run.fio.version}, {settings.ioengine}; MB = 10^6 bytes")
    return Text("\n".join(lines))


def _direction_cells(direction: DirectionResult | None) -> list[str]:
    if direction is None:
        return ["", "", "", ""]
    return [
        format_rate(direction.bw_bytes).removesuffix(" MB/s"),
        format_iops(direction.iops),
        format_latency_ns(direction.lat_ns.p50),
        format_latency_ns(direction.lat_ns.p99),
    ]


def _tests_table(run: Run) -> Table:
    buffered = "" if run.settings.direct else " (buffered)"
    table = Table(title=f"Results{buffered}", title_justify="left", header_style="bold")
    table.add_column("test")
    for direction in ("read", "write"):
        table.add_column(f"{direction} MB/s", justify="right")
        table.add_column(f"{direction} IOPS", justify="right")
        table.add_column("p50", justify="right")
        table.add_column("p99", justify="right")
    for result in run.tests:
        table.add_row(
            result.spec.name, *_direction_cells(result.read), *_direction_cells(result.write)
        )
    for name in run.tests_skipped:
        table.add_row(Text(name, style="dim"), Text("skipped", style="dim"))
    return table


def _check_text(check: Check) -> str:
    if check.value is None:
        return f"{check.name}: not measured ({check.test})"
    value = f"{check.value:.1f}" if check.unit == "MB/s" else f"{check.value:.0f}"
    threshold = f"{check.threshold:g}"
    margin = f"{check.margin_pct:+.1f}%" if check.margin_pct is not None else ""
    return f"{check.name} {value} {check.unit} (>= {threshold}, {margin})"


def _grades_table(grades: Sequence[Grade]) -> Table:
    table = Table(
        title="Grades (SD Association classes)", title_justify="left", header_style="bold"
    )
    table.add_column("class")
    table.add_column("verdict")
    table.add_column("checks: measured (required, margin)")
    for grade in grades:
        table.add_row(
            grade.name, _PASS[grade.passed], "; ".join(_check_text(check) for check in grade.checks)
        )
    return table


def render_history(entries: Sequence[StoredResult]) -> RenderableType:
    table = Table(header_style="bold")
    for column, justify in (
        ("id", "right"),
        ("date (UTC)", "left"),
        ("kind", "left"),
        ("target", "left"),
        ("profile", "left"),
        ("seq R/W MB/s", "right"),
        ("4K R/W IOPS", "right"),
        ("grades passed", "left"),
        ("time", "right"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for entry in entries:
        table.add_row(
            str(entry.id),
            entry.created_at.replace("T", " ")[:19],
            entry.kind,
            entry.target,
            entry.label,
            *_headline_cells(entry),
        )
    return table


def _headline_cells(entry: StoredResult) -> list[str]:
    document = entry.document
    if entry.kind != "benchmark":
        return ["", "", "", ""]
    tests = {test["name"]: test for test in document.get("tests", [])}

    def figure(test: str, direction: str, key: str) -> str:
        section = (tests.get(test) or {}).get(direction) or {}
        value = section.get(key)
        if value is None:
            return "-"
        return f"{value / 1e6:.1f}" if key == "bw_bytes" else f"{value:.0f}"

    seq = f"{figure('seq-read', 'read', 'bw_bytes')}/{figure('seq-write', 'write', 'bw_bytes')}"
    rand = f"{figure('rand-read-4k', 'read', 'iops')}/{figure('rand-write-4k', 'write', 'iops')}"
    passed = [name for name, grade in document.get("grades", {}).items() if grade.get("pass")]
    seconds = _duration(document.get("started_at"), document.get("finished_at"))
    return [seq, rand, ",".join(passed) or "none", seconds]


def _duration(started: str | None, finished: str | None) -> str:
    if not started or not finished:
        return ""
    try:
        delta = datetime.fromisoformat(finished) - datetime.fromisoformat(started)
    except ValueError:
        return ""
    return format_duration(delta.total_seconds())
