"""A workload run's answer in one line: the terminal's `verdict:` line and the document's
"summary" key. "pkg-install took 11.1 s (scale 0.2: 80 packages, 157.9 MiB written); loop7
looked bound by random writes": each workload's wall time, what it did, and whether the device
looked bound by random writes while it ran (flashmark.monitor.series)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.units import format_size

if TYPE_CHECKING:
    from flashmark.workloads.document import WorkloadRun
    from flashmark.workloads.result import WorkloadResult


def workloads_summary(run: WorkloadRun) -> str:
    """The run's answer in one line (see the module's docstring)."""
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
