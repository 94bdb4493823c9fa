"""What a workload reports: wall time, operations, bytes, and what the device saw meanwhile."""

from __future__ import annotations

from dataclasses import dataclass, field

from flashmark.codec import document
from flashmark.monitor.series import PHASE_NAME, MonitorSeries
from flashmark.upload_rules import KERNEL_NAME, MADE_TEXT, OneOf, Withheld, upload, uploaded

WORKLOAD_NAMES: tuple[str, ...] = ("pkg-install", "pkg-remove", "pkg-reinstall", "cold-read")


@uploaded
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


@uploaded
@dataclass(frozen=True)
class PhaseTime:
    name: str = field(metadata=upload(PHASE_NAME))
    seconds: float = field(metadata=document(digits=3))


@uploaded
@dataclass(frozen=True, kw_only=True)
class WorkloadResult:
    name: str = field(metadata=upload(OneOf(*WORKLOAD_NAMES)))
    # wall time of the timed part; None when skipped
    seconds: float | None = field(metadata=document(digits=3))
    # the reason, when the workload could not run here (it may name the folder or a program)
    skipped: str | None = field(metadata=upload(Withheld()))
    description: str = field(default="", metadata=upload(MADE_TEXT.or_withheld()))
    scale: float
    seed: int  # the package set's seed (workloads/packages.py), the same everywhere
    # untimed preparation (writing the starting state)
    setup_seconds: float = field(metadata=document(digits=3))
    counts: WorkloadCounts
    phases: tuple[PhaseTime, ...]
    # the diskstats name of the device holding the target, if any
    device: str | None = field(metadata=upload(KERNEL_NAME.or_withheld()))
    monitor: MonitorSeries | None  # None when skipped or no block device holds the target


