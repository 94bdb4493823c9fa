"""Workload results for people: times, operations, what the device saw, each phase; in the
terminal (rich), Markdown, CSV and the HTML report, from the same rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from markupsafe import Markup
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flashmark.errors import printable
from flashmark.markdown import escape_inline, facts, markdown_table
from flashmark.monitor.render import describe_activity
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, section_of, short_target
from flashmark.spreadsheet import text_cell
from flashmark.units import (
    MB,
    KiB,
    format_duration,
    format_size,
    mb_per_s,
)
from flashmark.workloads.document import WorkloadRun
from flashmark.workloads.result import WorkloadResult


def workload_rows(results: Sequence[WorkloadResult]) -> list[tuple[str, str, str, str]]:
    """(workload, time, operations, what the device saw) of each workload: every view shows
    these."""
    rows = []
    for result in results:
        if result.skipped is not None:
            rows.append((result.name, "skipped", result.skipped, ""))
            continue
        counts = result.counts
        ops = (
            f"{counts.packages} packages, {counts.files_written} files written, "
            f"{counts.files_removed} removed, {counts.files_read} read, "
            f"{counts.fsyncs} fsyncs; {format_size(counts.bytes_written)} written, "
            f"{format_size(counts.bytes_read)} read"
        )
        device = "no block device (tmpfs or network?)"
        if result.monitor is not None:
            device = describe_activity(result.monitor.device, result.monitor.summary())
        rows.append((result.name, f"{result.seconds or 0.0:.1f} s", ops, device))
    return rows


def render_workloads(results: Sequence[WorkloadResult]) -> RenderableType:
    """The workloads' times and operations, what the device saw, and each phase iostat-style."""
    table = Table(title="Workloads", title_justify="left", header_style="bold")
    table.add_column("workload")
    table.add_column("time", justify="right")
    table.add_column("operations")
    table.add_column("device saw")
    for row in workload_rows(results):
        table.add_row(*row)
    parts: list[RenderableType] = [table]
    for result in results:
        if result.monitor is None or not result.monitor.phases:
            continue
        parts.append(Text(f"{result.name} by phase ({result.description}):", style="bold"))
        phases = Table(show_edge=False)
        for column in ("phase", "seconds", "requests/s", "reads/s", "writes/s", "read MB/s",
                       "write MB/s", "read MB", "written MB", "request KiB"):  # fmt: skip
            phases.add_column(column, justify="right")
        for phase in result.monitor.phases:
            s = phase.summary
            request = (s.read_bytes + s.write_bytes) / max(1, s.read_ios + s.write_ios)
            phases.add_row(
                phase.name, f"{s.seconds:.1f}", f"{s.iops:.1f}", f"{s.read_iops:.1f}",
                f"{s.write_iops:.1f}", f"{mb_per_s(s.read_bps):.1f}",
                f"{mb_per_s(s.write_bps):.1f}", f"{s.read_bytes / MB:.1f}",
                f"{s.write_bytes / MB:.1f}", f"{request / KiB:.1f}",
            )  # fmt: skip
        parts.append(phases)
    total = sum(r.seconds or 0.0 for r in results)
    parts.append(
        Text(
            "MB = 10^6 bytes, KiB = 1024 bytes; requests/s: completed per second, as iostat's "
            f"tps. Timed total {format_duration(total)}."
        )
    )
    return Group(*parts)


_COLUMNS = ("workload", "time", "operations", "device saw")


def _name(run: WorkloadRun, index: int) -> str:
    return f"#{run.id}" if run.id is not None else f"workload run {index + 1}"


def _anchor(run: WorkloadRun, index: int) -> str:
    return f"workload-{run.id}" if run.id is not None else f"workload-n{index + 1}"


def workload_runs_to_markdown(runs: Sequence[WorkloadRun]) -> str:
    """A section per workload run: where and at what scale, and a row per workload."""
    sections = []
    for run in runs:
        number = f" #{run.id}" if run.id is not None else ""
        lines = [f"### flashmark workload{number}: {escape_inline(run.label)}", ""]
        lines += facts(
            [
                ("target", printable(run.target)),
                ("scale", f"{run.scale:g} (seed {run.seed})"),
                ("started", run.started_at),
            ]
        )
        lines += ["", *markdown_table(_COLUMNS, workload_rows(run.workloads),
                                      (False, True, False, False))]  # fmt: skip
        lines += ["", "MB = 10^6 bytes; time is the timed part's wall time."]
        sections.append("\n".join(lines) + "\n")
    return "\n".join(sections)


_CSV_COLUMNS = (
    "id", "started_at", "target", "scale", "workload", "status", "seconds", "packages",
    "files_written", "files_removed", "files_read", "fsyncs", "bytes_written", "bytes_read",
    "device", "device_read_bytes", "device_write_bytes", "device_read_ios", "device_write_ios",
)  # fmt: skip


def workload_runs_to_csv(runs: Sequence[WorkloadRun]) -> str:
    """One row per workload of each run, in the stored units (seconds, bytes, requests)."""
    stream = io.StringIO()
    writer = csv.writer(stream)
    writer.writerow(_CSV_COLUMNS)
    for run in runs:
        for result in run.workloads:
            counts = result.counts
            seen = result.monitor.summary() if result.monitor is not None else None
            device = (
                ["", "", "", "", ""] if seen is None or result.monitor is None
                else [text_cell(result.monitor.device), seen.read_bytes, seen.write_bytes,
                      seen.read_ios, seen.write_ios]
            )  # fmt: skip
            writer.writerow(
                [
                    "" if run.id is None else run.id, run.started_at,
                    text_cell(printable(run.target)),
                    f"{run.scale:g}", result.name,
                    "measured" if result.skipped is None else f"skipped: {result.skipped}",
                    "" if result.seconds is None else round(result.seconds, 3), counts.packages,
                    counts.files_written, counts.files_removed, counts.files_read, counts.fsyncs,
                    counts.bytes_written, counts.bytes_read, *device,
                ]
            )  # fmt: skip
    return stream.getvalue()


def workload_runs_section(runs: Sequence[WorkloadRun]) -> HtmlSection:
    """The workload runs' part of the HTML report: a table per run."""
    cards = []
    for index, run in enumerate(runs):
        rows = Markup("").join(
            Markup(
                '<tr><th>{}</th><td class="num" data-label="time">{}</td>'
                '<td data-label="operations">{}</td><td data-label="device saw">{}</td></tr>'
            ).format(*row)
            for row in workload_rows(run.workloads)
        )
        cards.append(
            Markup(
                '<article id="{}"><h3>{}</h3><div class="table-wrap"><table class="stack">'
                "<caption>{}</caption><thead><tr><th>workload</th>"
                '<th class="num">time</th><th>operations</th><th>device saw</th></tr></thead>'
                "<tbody>{}</tbody></table></div></article>"
            ).format(
                _anchor(run, index),
                f"{_name(run, index)}: {run.label} in {printable(run.target)}",
                f"scale {run.scale:g}, started {run.started_at}",
                rows,
            )
        )
    body = Markup(
        '<p class="note">Real-world workloads (docs/workloads.md): wall time of the timed part, '
        "the operations issued, and what the device saw meanwhile.</p>{}"
    ).format(Markup("").join(cards))
    entries = [
        HtmlEntry(
            _name(run, index),
            f"{_name(run, index)} {short_target(run.target)}",
            _anchor(run, index),
        )
        for index, run in enumerate(runs)
    ]
    return section_of(HtmlPart("workload-runs", "Workload runs", body), entries, "workload run")
