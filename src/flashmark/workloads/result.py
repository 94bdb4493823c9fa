"""What a workload reports: wall time, operations, bytes, and what the device saw meanwhile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict[str, int]) -> WorkloadCounts:
        return cls(**d)


@dataclass(frozen=True)
class PhaseTime:
    name: str
    seconds: float


@dataclass(frozen=True)
class WorkloadResult:
    name: str
    seconds: float | None  # wall time of the timed part; None when skipped
    skipped: str | None  # the reason, when the workload could not run here
    scale: float
    seed: int
    counts: WorkloadCounts
    phases: tuple[PhaseTime, ...]
    setup_seconds: float  # untimed preparation (writing the starting state)
    device: str | None  # the diskstats name of the device holding the target, if any
    monitor: MonitorSeries | None  # None when skipped or no block device holds the target
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "skipped": self.skipped,
            "description": self.description,
            "scale": self.scale,
            "seed": self.seed,
            "setup_seconds": round(self.setup_seconds, 3),
            "counts": self.counts.to_dict(),
            "phases": [{"name": p.name, "seconds": round(p.seconds, 3)} for p in self.phases],
            "device": self.device,
            "monitor": None if self.monitor is None else self.monitor.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkloadResult:
        """The inverse of to_dict, for results read back from the history."""
        return cls(
            name=d["name"],
            seconds=d["seconds"],
            skipped=d["skipped"],
            scale=d["scale"],
            seed=d["seed"],
            counts=WorkloadCounts.from_dict(d["counts"]),
            phases=tuple(PhaseTime(p["name"], p["seconds"]) for p in d["phases"]),
            setup_seconds=d["setup_seconds"],
            device=d["device"],
            monitor=MonitorSeries.from_dict(d["monitor"]) if d["monitor"] else None,
            description=d.get("description", ""),
        )
