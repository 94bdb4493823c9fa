"""Workload results in the terminal: times, operations, what the device saw, each phase."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flashmark.monitor.render import describe_activity
from flashmark.units import (
    format_duration,
    format_size,
)
from flashmark.workloads.result import WorkloadResult


def render_workloads(results: Sequence[WorkloadResult]) -> RenderableType:
    """The workloads' times and operations, what the device saw, and each phase iostat-style."""
    table = Table(title="Workloads", title_justify="left", header_style="bold")
    table.add_column("workload")
    table.add_column("time", justify="right")
    table.add_column("operations")
    table.add_column("device saw")
    for result in results:
        if result.skipped is not None:
            table.add_row(result.name, "skipped", result.skipped, "")
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
        table.add_row(result.name, f"{result.seconds or 0.0:.1f} s", ops, device)
    parts: list[RenderableType] = [table]
    for result in results:
        if result.monitor is None or not result.monitor.phases:
            continue
        parts.append(Text(f"{result.name} by phase ({result.description}):", style="bold"))
        phases = Table(show_edge=False)
        for column in ("phase", "seconds", "tps", "r/s", "w/s", "kB_read/s", "kB_wrtn/s",
                       "kB_read", "kB_wrtn", "areq-sz kB"):  # fmt: skip
            phases.add_column(column, justify="right")
        for phase in result.monitor.phases:
            s = phase.summary
            request = (s.read_bytes + s.write_bytes) / max(1, s.read_ios + s.write_ios)
            phases.add_row(
                phase.name, f"{s.seconds:.1f}", f"{s.iops:.1f}", f"{s.read_iops:.1f}",
                f"{s.write_iops:.1f}", f"{s.read_bps / 1024:.1f}", f"{s.write_bps / 1024:.1f}",
                f"{s.read_bytes // 1024}", f"{s.write_bytes // 1024}", f"{request / 1024:.1f}",
            )  # fmt: skip
        parts.append(phases)
    total = sum(r.seconds or 0.0 for r in results)
    parts.append(
        Text(
            "kB = 1024 bytes, as in iostat; tps = requests completed per second. "
            f"Timed total {format_duration(total)}."
        )
    )
    return Group(*parts)
