"""`flashmark workload NAME [TARGET]`: one of seed 002's real-world workloads, alone."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from flashmark import __version__
from flashmark.cli import debug_option
from flashmark.cli.output import print_json, stdout_console
from flashmark.cli.progress import progress_display
from flashmark.monitor import MonitorSummary
from flashmark.signals import signals_raise
from flashmark.sysroot import SystemRoots
from flashmark.units import format_duration, format_rate, format_size
from flashmark.workloads import (
    DEFAULT_SEED,
    DESCRIPTIONS,
    WORKLOAD_NAMES,
    WORKLOAD_SCHEMA,
    WorkloadResult,
    run_workloads,
)

_ALL = "all"


@click.command("workload")
@click.argument("name", type=click.Choice([*WORKLOAD_NAMES, _ALL]), metavar="NAME")
@click.argument("target", default=".", metavar="[TARGET]", type=click.Path(path_type=Path))
@click.option(
    "--scale",
    type=click.FloatRange(min=0.0, min_open=True),
    default=1.0,
    show_default=True,
    help="Size of the workload: 1 is seed 002's desktop (400 packages, ~21,000 files, "
    "~0.8 GB); 0.1 takes a tenth of the time.",
)
@click.option(
    "--interval",
    "interval_s",
    type=click.FloatRange(min=0.05),
    default=1.0,
    show_default=True,
    help="Seconds between two readings of the device's I/O counters.",
)
@click.option(
    "--json", "as_json", is_flag=True, help=f"Print a {WORKLOAD_SCHEMA} document on stdout."
)
@debug_option
def workload_command(
    name: str, target: Path, scale: float, interval_s: float, as_json: bool, debug: bool
) -> None:
    """Run a real-world workload in a temporary folder under TARGET (default: here).

    \b
    NAME is one of:
      pkg-install    install a desktop's packages the way apt and dpkg write them
      pkg-remove     purge 150 of them (the autoremove of seed 002)
      pkg-reinstall  install those again from archives already in memory
      cold-read      drop the page cache (root) and read a boot's worth of files
      all            the four in that order, sharing state as seed 002 did
    Each prints its wall time, its operations, and what the device saw meanwhile.
    Everything it writes is removed afterwards, also on error, Ctrl-C or SIGTERM.
    """
    names = WORKLOAD_NAMES if name == _ALL else (name,)
    roots = SystemRoots.from_environment()
    started = time.time()
    with signals_raise(), progress_display() as display:
        display.begin(", ".join(names), 1, 1, None)

        def progress(fraction: float) -> None:
            display.update(fraction, "")

        results = run_workloads(
            names, target, scale=scale, roots=roots, progress=progress, interval_s=interval_s
        )
        display.end(", ".join(names), "done")
    document = workload_document(results, target, scale, started, time.time())
    if as_json:
        print_json(document)
    else:
        render_workloads(results)


def workload_document(
    results: tuple[WorkloadResult, ...],
    target: Path,
    scale: float,
    started: float,
    finished: float,
) -> dict[str, Any]:
    return {
        "schema": WORKLOAD_SCHEMA,
        "flashmark_version": __version__,
        "started_at": _iso(started),
        "finished_at": _iso(finished),
        "target": str(target),
        "scale": scale,
        "seed": DEFAULT_SEED,
        "workloads": [result.to_dict() for result in results],
    }


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def render_workloads(results: tuple[WorkloadResult, ...]) -> None:
    console = stdout_console()
    table = Table(title="Workloads", title_justify="left")
    table.add_column("workload")
    table.add_column("time", justify="right")
    table.add_column("operations")
    table.add_column("device saw")
    for result in results:
        if result.skipped is not None:
            table.add_row(result.name, "skipped", result.skipped, "")
            continue
        seconds = result.seconds or 0.0
        counts = result.counts
        ops = (
            f"{counts.packages} packages, {counts.files_written} files written, "
            f"{counts.files_removed} removed, {counts.files_read} read, "
            f"{counts.fsyncs} fsyncs; {format_size(counts.bytes_written)} written, "
            f"{format_size(counts.bytes_read)} read"
        )
        device = "no block device (tmpfs or network?)"
        if result.monitor is not None:
            device = describe_summary(result.monitor.device, result.monitor.summary())
        table.add_row(result.name, f"{seconds:.1f} s", ops, device)
    console.print(table)
    for result in results:
        if result.monitor is None or not result.monitor.phases:
            continue
        console.print(f"[bold]{result.name}[/] by phase ({DESCRIPTIONS[result.name]}):")
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
        console.print(phases)
    console.print("kB = 1024 bytes, as in iostat; tps = requests completed per second.")
    total = sum(r.seconds or 0.0 for r in results)
    console.print(f"Timed total {format_duration(total)}.")


def describe_summary(device: str, summary: MonitorSummary) -> str:
    return (
        f"{device}: {summary.iops:.0f} IOPS ({summary.write_iops:.0f} writes), "
        f"{format_rate(summary.write_bps)} written, {format_rate(summary.read_bps)} read; "
        f"{summary.verdict}"
    )
