"""What a workload reports: wall time, operations, bytes, and what the device saw meanwhile."""

from __future__ import annotations

from dataclasses import dataclass, field

from flashmark.codec import document
from flashmark.monitor.series import MonitorSeries


@dataclass(frozen=True)
class WorkloadCounts:
    """Operations the workload itself issued (the device may see fewer, merged, or more)."""

    packages: int = 0
    files_written: int = 0
    files_removed: int = 0
    files_read: int = 0
    bytes_written: int = 0
    bytes_read: int = 0
    fsyncs: int = 0
    renames: int = 0
    status_notes: int = 0
    checkpoints: int = 0


@dataclass(frozen=True)
class PhaseTime:
    name: str
    seconds: float = field(metadata=document(digits=3))


@dataclass(frozen=True, kw_only=True)
class WorkloadResult:
    name: str
    # wall time of the timed part; None when skipped
    seconds: float | None = field(metadata=document(digits=3))
    skipped: str | None  # the reason, when the workload could not run here
    description: str = ""
    scale: float
    seed: int
    # untimed preparation (writing the starting state)
    setup_seconds: float = field(metadata=document(digits=3))
    counts: WorkloadCounts
    phases: tuple[PhaseTime, ...]
    device: str | None  # the diskstats name of the device holding the target, if any
    monitor: MonitorSeries | None  # None when skipped or no block device holds the target


