"""Workload results in words: times, operations, what the device saw, each phase; the view
every format is written from (flashmark.views)."""

from __future__ import annotations

from collections.abc import Sequence

from flashmark.errors import printable
from flashmark.monitor.series import MonitorSummary
from flashmark.monitor.view import describe_activity
from flashmark.units import (
    MB,
    KiB,
    format_duration,
    format_size,
    mb_per_s,
)
from flashmark.views.model import (
    Block,
    Cell,
    Column,
    Fact,
    Facts,
    Row,
    Sentence,
    Table,
    View,
    rows_of,
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
        ops = operations_text(result)
        device = "no block device (tmpfs or network?)"
        if result.monitor is not None:
            device = describe_activity(result.monitor.device, result.monitor.summary())
        rows.append((result.name, f"{result.seconds or 0.0:.1f} s", ops, device))
    return rows


def operations_text(result: WorkloadResult) -> str:
    """What a workload did: "8 packages, 629 files written, ...; 33.9 MiB written, ..."."""
    counts = result.counts
    return (
        f"{counts.packages} packages, {counts.files_written} files written, "
        f"{counts.files_removed} removed, {counts.files_read} read, "
        f"{counts.fsyncs} fsyncs; {format_size(counts.bytes_written)} written, "
        f"{format_size(counts.bytes_read)} read"
    )


COLUMNS = (
    Column("workload"), Column("time", numeric=True), Column("operations"), Column("device saw"),
)  # fmt: skip
_PHASE_COLUMNS = tuple(
    Column(name, numeric=True)
    for name in ("phase", "seconds", "requests/s", "reads/s", "writes/s", "read MB/s",
                 "write MB/s", "read MB", "written MB", "request KiB")
)  # fmt: skip


def workload_blocks(results: Sequence[WorkloadResult]) -> tuple[Block, ...]:
    """The workloads' times and operations, what the device saw, and (on the terminal) each
    phase iostat-style: a workload run's view, and a benchmark run's with workloads."""
    phases: list[Block] = []
    for result in results:
        if result.monitor is None or not result.monitor.phases:
            continue
        phases.append(
            Sentence(
                f"{result.name} by phase ({result.description}):", tone="strong", shown="terminal"
            )
        )
        phases.append(
            Table(
                _PHASE_COLUMNS,
                tuple(
                    Row(_phase_row(phase.name, phase.summary)) for phase in result.monitor.phases
                ),
                edge=False,
                shown="terminal",
            )
        )
    total = sum(r.seconds or 0.0 for r in results)
    return (
        Table(COLUMNS, rows_of(workload_rows(results)), title="Workloads"),
        *phases,
        Sentence(
            "MB = 10^6 bytes, KiB = 1024 bytes; requests/s: completed per second, as iostat's "
            f"tps. Timed total {format_duration(total)}.",
            shown="terminal",
        ),
        Sentence("MB = 10^6 bytes; time is the timed part's wall time.", shown="documents"),
    )


def _phase_row(name: str, s: MonitorSummary) -> tuple[str, ...]:
    request = (s.read_bytes + s.write_bytes) / max(1, s.read_ios + s.write_ios)
    return (
        name, f"{s.seconds:.1f}", f"{s.iops:.1f}", f"{s.read_iops:.1f}", f"{s.write_iops:.1f}",
        f"{mb_per_s(s.read_bps):.1f}", f"{mb_per_s(s.write_bps):.1f}", f"{s.read_bytes / MB:.1f}",
        f"{s.write_bytes / MB:.1f}", f"{request / KiB:.1f}",
    )  # fmt: skip


def workload_run_view(run: WorkloadRun) -> View:
    """Where and at what scale, and a row per workload; its CSV rows one per workload, in the
    stored units (seconds, bytes, requests)."""
    number = f" #{run.id}" if run.id is not None else ""
    return View(
        title=f"flashmark workload{number}: {run.label}",
        blocks=(
            Facts(
                (
                    Fact("target", printable(run.target)),
                    Fact("scale", f"{run.scale:g} (seed {run.seed})"),
                    Fact("started", run.started_at),
                ),
                shown="documents",
            ),
            *workload_blocks(run.workloads),
        ),
        records=tuple(_record(run, result) for result in run.workloads),
    )


CSV_COLUMNS = (
    "id", "started_at", "target", "scale", "workload", "status", "seconds", "packages",
    "files_written", "files_removed", "files_read", "fsyncs", "bytes_written", "bytes_read",
    "device", "device_read_bytes", "device_write_bytes", "device_read_ios", "device_write_ios",
)  # fmt: skip


def _record(run: WorkloadRun, result: WorkloadResult) -> tuple[Cell, ...]:
    counts = result.counts
    seen = result.monitor.summary() if result.monitor is not None else None
    device: tuple[Cell, ...] = (
        (None,) * 5 if seen is None or result.monitor is None
        else (result.monitor.device, seen.read_bytes, seen.write_bytes, seen.read_ios,
              seen.write_ios)
    )  # fmt: skip
    return (
        run.id, run.started_at, printable(run.target), f"{run.scale:g}", result.name,
        "measured" if result.skipped is None else f"skipped: {result.skipped}",
        None if result.seconds is None else round(result.seconds, 3), counts.packages,
        counts.files_written, counts.files_removed, counts.files_read, counts.fsyncs,
        counts.bytes_written, counts.bytes_read, *device,
    )  # fmt: skip
