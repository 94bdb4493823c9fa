"""A monitor recording in words: what the device did, in iostat's terms; the view every format
is written from (flashmark.views), and the live view's lines."""

from __future__ import annotations

import signal

from flashmark.monitor.document import MonitorRecording
from flashmark.monitor.series import MonitorSample, MonitorSummary
from flashmark.units import format_rate, format_size
from flashmark.views.model import (
    Code,
    Column,
    Fact,
    Facts,
    Notes,
    Sentence,
    Table,
    View,
    rows_of,
)


def describe_activity(device: str, summary: MonitorSummary) -> str:
    """What a device saw during a test or workload (/proc/diskstats), in one line."""
    return (
        f"{device}: {summary.iops:.0f} IOPS ({summary.write_iops:.0f} writes), "
        f"{format_rate(summary.write_bps)} written, {format_rate(summary.read_bps)} read; "
        f"{summary.verdict}"
    )


# The live view's header, over the columns of format_sample_line.
SAMPLE_HEADER = (
    f"{'Device':<12}{'tps':>9}{'r/s':>9}{'w/s':>9}{'kB_read/s':>12}{'kB_wrtn/s':>12}"
    f"{'kB_read':>10}{'kB_wrtn':>10}{'areq-sz':>9}{'aqu-sz':>8}{'%util':>7}"
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


def title_line(result: MonitorRecording) -> str:
    """'mmcblk0 while `dd ...` ran (3.0 s)'."""
    what = f"while `{' '.join(result.command)}` ran" if result.command else "while monitored"
    return f"{result.device} {what} ({result.summary.seconds:.1f} s)"


def summary_rows(result: MonitorRecording) -> list[tuple[str, str, str]]:
    """(figure, read, write) rows of the recording's summary: every view shows these."""
    summary = result.summary
    return [
        ("data", format_size(summary.read_bytes), format_size(summary.write_bytes)),
        ("requests", f"{summary.read_ios}", f"{summary.write_ios}"),
        ("IOPS (mean)", f"{summary.read_iops:.1f}", f"{summary.write_iops:.1f}"),
        (
            "IOPS (busiest interval)",
            _maybe(summary.peak_read_iops, "{:.1f}"),
            _maybe(summary.peak_write_iops, "{:.1f}"),
        ),
        ("rate (mean)", format_rate(summary.read_bps), format_rate(summary.write_bps)),
        (
            "mean request",
            _maybe(summary.avg_read_request_bytes, "{:.1f} KiB", 1024),
            _maybe(summary.avg_write_request_bytes, "{:.1f} KiB", 1024),
        ),
    ]


def summary_sentences(result: MonitorRecording) -> list[str]:
    """The mix, its pattern (bound by random writes or not) and how the command ended, a
    sentence each; the answer line (the verdict) ends the command."""
    summary = result.summary
    sentences = []
    if summary.write_share_ops is not None:
        busy = _maybe(summary.util_pct, "{:.0f}%")
        queue = _maybe(summary.avg_queue, "{:.2f}")
        sentences.append(
            f"Mix: {summary.write_share_ops:.0%} of requests and "
            f"{summary.write_share_bytes or 0:.0%} of bytes were writes; device busy "
            f"{busy}, mean queue {queue}."
        )
    sentences.append(f"Pattern: {summary.verdict}.")
    if result.exit_status is not None:
        sentences.append(_status_sentence(result.exit_status))
    return sentences


CSV_COLUMNS = (
    "id", "device", "t_s", "interval_s", "read_ios", "write_ios", "read_bytes", "write_bytes",
    "read_iops", "write_iops", "read_bps", "write_bps", "avg_request_bytes", "read_await_ms",
    "write_await_ms", "avg_queue", "util_pct",
)  # fmt: skip


def recording_view(result: MonitorRecording) -> View:
    """What was watched, the summary table and its sentences; its CSV rows one per interval,
    in the stored units (bytes, bytes/s, ms, %)."""
    number = f" #{result.id}" if result.id is not None else ""
    what = ("while ", Code(" ".join(result.command)), " ran") if result.command else ("monitored",)
    return View(
        title=(f"flashmark monitor{number}: {result.device} ", *what,
               f" ({result.summary.seconds:.1f} s)"),
        blocks=(
            # A line of its own, never wrapped: as the table's title rich wraps it to the
            # table's width, which the figures set, so a long command was cut at a different
            # place on every run.
            Sentence(title_line(result), shown="terminal", wrap=False),
            Facts(
                (
                    Fact("device", result.device),
                    Fact("started", result.started_at),
                    Fact("interval", f"{result.interval_s:g} s, {len(result.samples)} samples"),
                ),
                shown="documents",
            ),
            Table(
                (Column(""), Column("read", numeric=True), Column("write", numeric=True)),
                rows_of(summary_rows(result)),
            ),
            *(Sentence(sentence) for sentence in summary_sentences(result)),
            Notes(tuple(f"warning: {warning}" for warning in result.warnings), shown="documents"),
        ),
        records=tuple(
            (result.id, result.device, *(getattr(sample, name) for name in CSV_COLUMNS[2:]))
            for sample in result.samples
        ),
    )  # fmt: skip


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
