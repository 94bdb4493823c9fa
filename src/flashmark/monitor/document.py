"""A monitor recording (`monitor --json`, the history's "monitor" kind) and its document."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from flashmark import __version__
from flashmark.codec import Codec, document, written
from flashmark.monitor.series import MonitorSample, MonitorSeries, MonitorSummary
from flashmark.units import format_rate, utc_text

# `monitor --json` and the history's monitor recordings (docs/workloads.md).
#   1: first version. Later additions a 1-reader can ignore: "summary_line" (the recording's
#      answer in one line, the terminal's `verdict:` line, below; written,
#      never read back; "summary" has been the totals since version 1).
SCHEMA = "flashmark.monitor/1"


@dataclass(frozen=True, kw_only=True)
class MonitorRecording:
    """What one device did while a command ran (or while it was watched, `command` empty)."""

    flashmark_version: str = __version__
    started_at: str
    finished_at: str
    device: str
    command: tuple[str, ...] = field(metadata=document(empty_as_null=True))
    exit_status: int | None
    interval_s: float
    seconds: float
    diskstats_fields: int
    summary: MonitorSummary
    samples: tuple[MonitorSample, ...]
    warnings: tuple[str, ...]
    # None for a live view: no command to time out
    timed_out: bool | None = field(default=None, metadata=document(omit_none=True))
    id: int | None = field(default=None, metadata=document(omit_none=True))

    @property
    def label(self) -> str:
        return " ".join(self.command) or "live"

    @property
    @written(before="flashmark_version", key="summary_line")
    def summary_line(self) -> str:
        """The recording's answer in one line (its function below)."""
        return recording_summary(self)


def recording(
    series: MonitorSeries,
    command: tuple[str, ...],
    exit_status: int | None,
    started: float,
    finished: float,
    timed_out: bool | None = None,
) -> MonitorRecording:
    return MonitorRecording(
        device=series.device,
        command=command,
        exit_status=exit_status,
        started_at=utc_text(started),
        finished_at=utc_text(finished),
        interval_s=series.interval_s,
        seconds=series.seconds,
        diskstats_fields=series.diskstats_fields,
        summary=series.summary(),
        samples=series.samples,
        warnings=series.warnings,
        timed_out=timed_out,
    )


MONITOR_DOCUMENT = Codec(MonitorRecording, SCHEMA, "monitor")


# -- the answer in one line -----------------------------------------------------------------------
# A monitor recording's answer in one line: the terminal's `verdict:` line and the document's
# "summary_line" key (its "summary" is the recording's totals, an object, since version 1).
# "loop7 during `dd` (1.5 s, exit status 0): writes 35.8 MB/s at 70.1 IOPS, reads 0.00 MB/s at
# 0.0 IOPS; not bound by random writes".


def recording_summary(recording: MonitorRecording) -> str:
    """The recording's answer in one line (the comment above says how it reads)."""
    totals = recording.summary
    seconds = f"{totals.seconds:.1f} s"
    if recording.command:
        ended = (
            "timed out" if recording.timed_out
            else "status unknown" if recording.exit_status is None
            else f"exit status {recording.exit_status}"
        )  # fmt: skip
        program = os.path.basename(recording.command[0])
        when = f"during `{program}` ({seconds}, {ended})"
    else:
        when = f"over {seconds}"
    rates = (
        f"writes {format_rate(totals.write_bps)} at {totals.write_iops:.1f} IOPS, "
        f"reads {format_rate(totals.read_bps)} at {totals.read_iops:.1f} IOPS"
    )
    bound = totals.random_write_bound
    if bound is None:  # no I/O, or no busy-time counter: cannot tell
        return f"{recording.device} {when}: {rates}"
    judged = "bound by random writes" if bound else "not bound by random writes"
    return f"{recording.device} {when}: {rates}; {judged}"
