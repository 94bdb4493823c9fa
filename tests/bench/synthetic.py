"""Results, settings, targets and plans made in code, for the tests that need known figures
rather than fio's: a direction's rates set by hand, a test's result around it, the saved run
they are put into, and the plans of the profiles on a folder or a device."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flashmark.bench.document import document_to_run
from flashmark.bench.grading.classes import grade_results
from flashmark.bench.model import (
    DirectionResult,
    Grade,
    LatencyNs,
    Settings,
    Target,
    TargetKind,
    TestResult,
    TestSpec,
)
from flashmark.bench.plan import Plan, default_settings, plan_tests
from flashmark.bench.profiles import PROFILES
from flashmark.bench.run_result import Run
from flashmark.bench.target import resolve_target
from flashmark.system.sysroot import SystemRoots
from flashmark.units import GiB, MiB

LAT = LatencyNs(1, 2, 3, 1, 2, 2, 3, 3, 3)
LOGS = "/tmp/flashmark-fio-abc123"
# A run saved by `flashmark run` (the quick profile on a card at the A1 thresholds).
SAVED = Path(__file__).resolve().parents[1] / "data" / "report" / "quick-a1-card.json"
# The quick profile's lengths as a run without --runtime has them (8 s, 2 s ramps).
SETTINGS = Settings(
    profile="quick",
    size_bytes=128 * MiB,
    runtime_s=8,
    ramp_s=2,
    follow_ramp_s=2,
    direct=True,
    destructive=False,
)
DEVICE = Target(
    given="/dev/sdz",
    kind=TargetKind.DEVICE,
    path="/dev/sdz",
    folder=None,
    block_device="/dev/sdz",
    filesystem=None,
    mount_point=None,
    mount_options=None,
    capacity_bytes=16 * GiB,
)


def graded(results: Sequence[TestResult]) -> dict[str, Grade]:
    """The grades of `results`, by name."""
    return {grade.name: grade for grade in grade_results(results)}


def saved_run() -> Run:
    return document_to_run(json.loads(SAVED.read_text()))


def direction(
    iops: float = 1.0, bw_bytes: float = 0.0, *, runtime_ms: int = 1, **fields: Any
) -> DirectionResult:
    """A direction with the rates given, a window of `runtime_ms`, one I/O counted and no
    per-second series; `fields` sets any other (intervals, accepted rates, the sustained write)."""
    counts = {"io_bytes": 1, "total_ios": 1, **fields}
    return DirectionResult(
        iops=iops,
        bw_bytes=bw_bytes,
        runtime_ms=runtime_ms,
        fio_runtime_ms=runtime_ms,
        lat_ns=LAT,
        bw_per_second=None,
        **counts,
    )


def result(spec: TestSpec, measured: DirectionResult, elapsed_s: float = 1.0) -> TestResult:
    """`spec`'s result with `measured` as its write if the test writes, else as its read."""
    read, write = (None, measured) if spec.writes else (measured, None)
    return TestResult(spec=spec, read=read, write=write, job_file="", elapsed_s=elapsed_s)


def spec_named(name: str, profile: str = "full") -> TestSpec:
    return next(spec for spec in PROFILES[profile].tests if spec.name == name)


def folder_target(folder: Path) -> Target:
    return Target(
        given=str(folder),
        kind=TargetKind.FILE,
        path=str(folder / ".flashmark-1.tmp"),
        folder=str(folder),
        block_device=None,
        filesystem="ext4",
        mount_point=None,
        mount_options=None,
        capacity_bytes=None,
        test_file=".flashmark-1.tmp",
    )


def large_blocks_plan(folder: str, log_folder: str) -> Plan:
    """seq-read and rand-read-16M of the full profile on `folder`, a 64 MiB area, 4 s each:
    shorter than twenty 16 MiB transfers take on a 40 MB/s card."""
    full = PROFILES["full"]
    tests = tuple(spec for spec in full.tests if spec.name in ("seq-read", "rand-read-16M"))
    profile = dataclasses.replace(full, tests=tests, workloads=())
    settings = default_settings(
        profile, size_bytes=64 * MiB, runtime_s=None, buffered=False, destructive=False
    )
    settings = dataclasses.replace(settings, runtime_s=4)
    target = resolve_target(
        folder, size_bytes=settings.size_bytes, destructive=False, roots=SystemRoots()
    )
    return plan_tests(profile, settings, target, log_folder=log_folder)


def plan_of(
    profile: str,
    target: Target,
    *,
    size_bytes: int | None = None,
    runtime_s: int | None = None,
    destructive: bool = False,
    ramp_s: int | None = None,
    log_folder: str = LOGS,
) -> Plan:
    """The plan of `profile` on `target` with its defaults but for what is given."""
    chosen = PROFILES[profile]
    settings = default_settings(
        chosen,
        size_bytes=size_bytes,
        runtime_s=runtime_s,
        buffered=False,
        destructive=destructive,
        ramp_s=ramp_s,
    )
    return plan_tests(chosen, settings, target, log_folder=log_folder)
