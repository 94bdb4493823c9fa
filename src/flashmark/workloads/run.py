"""`flashmark workload` as one library call: the workloads a request names, run in a row in one
folder under its target (session.py), as one WorkloadRun result."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flashmark.system.sysroot import SystemRoots
from flashmark.workloads.document import WorkloadRun, workload_run
from flashmark.workloads.session import Progress, run_workloads


@dataclass(frozen=True)
class WorkloadRequest:
    """What `flashmark workload` is asked: which workloads, in order, where, how large, and
    how often the device's counters are read."""

    names: tuple[str, ...]
    target: Path = Path(".")
    scale: float = 1.0
    interval_s: float = 1.0


def measure_workloads(
    request: WorkloadRequest,
    *,
    roots: SystemRoots | None = None,
    progress: Progress | None = None,
    say_space: Callable[[str], None] | None = None,
) -> WorkloadRun:
    """Run the workloads in order (run_workloads: everything they write is removed
    afterwards) and time the whole; `say_space` is given the `space` line before they write."""
    started = time.time()
    results = run_workloads(
        request.names,
        request.target,
        scale=request.scale,
        roots=roots or SystemRoots.from_environment(),
        progress=progress,
        interval_s=request.interval_s,
        say_space=say_space,
    )
    return workload_run(results, request.target, request.scale, started, time.time())
