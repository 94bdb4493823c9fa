"""A monitor recording in the terminal: what the device did, in iostat's terms, and a verdict."""

from __future__ import annotations

import signal

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flashmark.monitor.document import MonitorRecording
from flashmark.monitor.series import MonitorSample, MonitorSummary
from flashmark.units import format_rate, format_size


def describe_activity(device: str, summary: MonitorSummary) -> str:
    """What a device saw during a test or workload (/proc/diskstats), in one line."""
    return (
        f"{device}: {summary.iops:.0f} IOPS ({summary.write_iops:.0f} writes), "
        f"{format_rate(summary.write_bps)} written, {format_rate(summary.read_bps)} read; "
        f"{summary.verdict}"
    )


def format_sample_line(device: str, s: MonitorSample) -> str:
    """One interval as `iostat -x` shows it (kB = 1024 bytes, areq-sz in kB)."""
    request = "" if s.avg_request_bytes is None else f"{s.avg_request_bytes / 1024:.1f}"
    queue = "" if s.avg_queue is None else f"{s.avg_queue:.2f}"
    util = "" if s.util_pct is None else f"{s.util_pct:.1f}"
    return (
        f"{device:<12}{s.iops:>9.2f}{s.read_iops:>9.2f}{s.write_iops:>9.2f}"
        f"{s.read_bps / 1024:>12.2f}{s.write_bps / 1024:>12.2f}"
        f"{s.read_bytes // 1024:>10}{s.write_bytes // 1024:>10}"
        f"{request:>9}{queue:>8}{util:>7}"
    )


def render_recording(result: MonitorRecording) -> RenderableType:
    summary = result.summary
    what = f"while `{' '.join(result.command)}` ran" if result.command else "while monitored"
    # The title is a line of its own, never wrapped: as the table's title rich wraps it to the
    # table's width, which the figures set, so a long command was cut at a different place on
    # every run.
    parts: list[RenderableType] = [
        Text(f"{result.device} {what} ({summary.seconds:.1f} s)", no_wrap=True, overflow="ignore")
    ]
    table = Table()
    table.add_column("", justify="left")
    table.add_column("read", justify="right")
    table.add_column("write", justify="right")
    table.add_row("data", format_size(summary.read_bytes), format_size(summary.write_bytes))
    table.add_row("requests", f"{summary.read_ios}", f"{summary.write_ios}")
    table.add_row("IOPS (mean)", f"{summary.read_iops:.1f}", f"{summary.write_iops:.1f}")
    table.add_row(
        "IOPS (busiest interval)",
        _maybe(summary.peak_read_iops, "{:.1f}"),
        _maybe(summary.peak_write_iops, "{:.1f}"),
    )
    table.add_row("rate (mean)", format_rate(summary.read_bps), format_rate(summary.write_bps))
    table.add_row(
        "mean request",
        _maybe(summary.avg_read_request_bytes, "{:.1f} KiB", 1024),
        _maybe(summary.avg_write_request_bytes, "{:.1f} KiB", 1024),
    )
    parts.append(table)
    if summary.write_share_ops is not None:
        busy = _maybe(summary.util_pct, "{:.0f}%")
        queue = _maybe(summary.avg_queue, "{:.2f}")
        parts.append(
            Text(
                f"Mix: {summary.write_share_ops:.0%} of requests and "
                f"{summary.write_share_bytes or 0:.0%} of bytes were writes; device busy "
                f"{busy}, mean queue {queue}."
            )
        )
    parts.append(Text(f"Verdict: {summary.verdict}."))
    if result.exit_status is not None:
        parts.append(Text(_status_sentence(result.exit_status)))
    return Group(*parts)


def _maybe(value: float | None, pattern: str, divisor: float = 1.0) -> str:
    return "-" if value is None else pattern.format(value / divisor)


def _status_sentence(status: int) -> str:
    """How the command ended; a signal as a shell reports it (128 + its number)."""
    if status >= 0:
        return f"The command exited with status {status}."
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = f"signal {-status}"
    return f"The command was killed by {name} (flashmark exits {128 - status}, as a shell does)."
