"""A workload run (`workload --json`, the history's "workload" kind) and its document."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flashmark import __version__
from flashmark.codec import Codec, document, written
from flashmark.units import format_size, utc_text
from flashmark.workloads.packages import DEFAULT_SEED
from flashmark.workloads.result import WorkloadResult

# `workload --json` and the history's workload results (docs/workloads.md).
#   1: first version. Later additions a 1-reader can ignore: "summary" (the run's answer in
#      one line, the terminal's `verdict:` line, below; written, never
#      read back).
SCHEMA = "flashmark.workloads/1"


@dataclass(frozen=True, kw_only=True)
class WorkloadRun:
    """One or more workloads run in a row in one folder."""

    flashmark_version: str = __version__
    started_at: str
    finished_at: str
    target: str  # absolute: the history lists results by target, and "." says nothing later
    scale: float
    seed: int
    workloads: tuple[WorkloadResult, ...]
    id: int | None = field(default=None, metadata=document(omit_none=True))

    @property
    def label(self) -> str:
        return "+".join(result.name for result in self.workloads)

    @property
    @written(before="flashmark_version")
    def summary(self) -> str:
        """The run's answer in one line (its function below)."""
        return workloads_summary(self)


def workload_run(
    results: tuple[WorkloadResult, ...], target: Path, scale: float, started: float, finished: float
) -> WorkloadRun:
    return WorkloadRun(
        target=str(target.resolve()),
        scale=scale,
        seed=DEFAULT_SEED,
        started_at=utc_text(started),
        finished_at=utc_text(finished),
        workloads=results,
    )


def _check(run: WorkloadRun) -> None:
    if not isinstance(run.target, str) or not run.workloads:
        raise ValueError("no target or no workloads")


WORKLOADS_DOCUMENT = Codec(WorkloadRun, SCHEMA, "workload", _check)


# -- the answer in one line -----------------------------------------------------------------------
# A workload run's answer in one line: the terminal's `verdict:` line and the document's
# "summary" key. "pkg-install took 11.1 s (scale 0.2: 80 packages, 157.9 MiB written); loop7
# looked bound by random writes": each workload's wall time, what it did, and whether the device
# looked bound by random writes while it ran (flashmark.monitor.series).


def workloads_summary(run: WorkloadRun) -> str:
    """The run's answer in one line (the comment above says how it reads)."""
    parts = [_one(result, run.scale) for result in run.workloads]
    return "; ".join(parts) or "no workload ran"


def _one(result: WorkloadResult, scale: float) -> str:
    if result.skipped is not None:
        return f"{result.name} skipped ({result.skipped})"
    counts = result.counts
    did = [f"scale {scale:g}"]
    if counts.packages:
        did.append(f"{counts.packages} packages")
    if counts.bytes_written:
        did.append(f"{format_size(counts.bytes_written)} written")
    if counts.bytes_read:
        did.append(f"{format_size(counts.bytes_read)} read")
    text = f"{result.name} took {result.seconds or 0.0:.1f} s ({', '.join(did)})"
    if result.monitor is None:
        return text
    bound = result.monitor.summary().random_write_bound
    if bound is None:
        return text
    looked = "looked bound" if bound else "did not look bound"
    return f"{text}, {result.monitor.device} {looked} by random writes"
