"""Plan and run a benchmark: the only step that touches the device (through a FioRunner).

    resolve_target (target.py) -> plan_tests -> measure -> Run (graded, not yet saved)

Read-only device runs keep the tests that only read; a destructive device run and every folder
run first write the whole test area (`prepare`), so reads read data that was really written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import platform
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from flashmark import __version__
from flashmark.device_safety import claim_for_writing
from flashmark.errors import (
    DeviceFailed,
    FlashmarkError,
    Interrupted,
    NotEnoughSpace,
    ReadOnlyTarget,
    UsageError,
)
from flashmark.fio.jobs import (
    PREPARE_BLOCK_BYTES,
    PREPARE_JOB_NAME,
    PREPARE_TIME_LIMIT_S,
    job_for_test,
    prepare_job,
)
from flashmark.fio.parse import parse_prepare_output, parse_test_output
from flashmark.fio.runner import FioRunner
from flashmark.grade import grade_results
from flashmark.model import (
    FioInfo,
    HostInfo,
    Run,
    Settings,
    Target,
    TargetKind,
    TestResult,
    TestSpec,
)
from flashmark.monitor import DiskMonitor, device_for_path, normalise_device_name
from flashmark.profiles import Profile
from flashmark.sysroot import SystemRoots
from flashmark.target import TestArea, created_test_file
from flashmark.units import format_size
from flashmark.workloads import WorkloadResult, run_workloads

# Seconds between two readings of the device's counters during tests and workloads: iostat's
# usual interval; the monitor costs well under 1% of a core at it (benchmarks/).
MONITOR_INTERVAL_S = 1.0


@dataclass(frozen=True)
class Plan:
    tests: tuple[TestSpec, ...]
    skipped: tuple[str, ...]
    prepare: bool
    warnings: tuple[str, ...]
    workloads: tuple[str, ...] = ()  # run after the tests, in the target folder

    def expected_seconds(self, settings: Settings) -> float:
        return len(self.tests) * float(settings.runtime_s + settings.ramp_s)


@dataclass(frozen=True)
class AreaSize:
    """The test area a run uses, and what to tell the user if it differs from --size."""

    size_bytes: int
    note: str | None = None


def plan_area(profile: Profile, requested_bytes: int | None) -> AreaSize:
    """The test area for `profile`: --size rounded down to a whole number of the profile's
    largest block (and of the preparation's block), or a UsageError when that leaves less
    than two of its largest blocks.

    Each test reads or writes whole blocks, and fio writes no partial last block: a 2.5 MiB
    area was prepared as 2 MiB, and the check that the preparation wrote the whole area then
    blamed the device ("very slow"). Rounding makes every accepted size work with every
    profile.
    """
    largest = max(test.block_size_bytes for test in profile.tests)
    unit = math.lcm(largest, PREPARE_BLOCK_BYTES)
    minimum = max(2 * largest, unit)
    if requested_bytes is None:
        return AreaSize(profile.default_size_bytes)
    rounded = requested_bytes // unit * unit
    if rounded < minimum:
        raise UsageError(
            f"--size {format_size(requested_bytes)} is too small for the {profile.name} "
            f"profile: its largest block is {format_size(largest)}; use at least "
            f"{format_size(minimum)}"
        )
    if rounded == requested_bytes:
        return AreaSize(rounded)
    return AreaSize(
        rounded,
        f"--size {format_size(requested_bytes)} rounded down to {format_size(rounded)}, "
        f"a whole number of {format_size(unit)} blocks (the {profile.name} profile's largest)",
    )


class Progress(Protocol):
    """What measure() reports while it works; the CLI draws it (bars on a terminal)."""

    def begin(self, step: str, number: int, total: int, expected_s: float | None) -> None: ...

    def update(self, fraction: float | None, status: str) -> None: ...

    def end(self, step: str, summary: str) -> None: ...


class SilentProgress:
    def begin(self, step: str, number: int, total: int, expected_s: float | None) -> None:
        pass

    def update(self, fraction: float | None, status: str) -> None:
        pass

    def end(self, step: str, summary: str) -> None:
        pass


def plan_tests(profile: Profile, settings: Settings, target: Target) -> Plan:
    warnings: list[str] = []
    if not settings.direct:
        warnings.append(
            "buffered I/O (--buffered): the page cache is part of every figure; "
            "these are not the device's own speeds"
        )
    if target.kind is TargetKind.DEVICE and not settings.destructive:
        tests = tuple(spec for spec in profile.tests if not spec.writes)
        skipped = tuple(spec.name for spec in profile.tests if spec.writes)
        if skipped:
            warnings.append(
                f"read-only run on {target.path}: {len(skipped)} write tests skipped "
                "(--destructive runs them and overwrites the test area)"
            )
        if profile.workloads and settings.workload_scale > 0:
            warnings.append(
                "workloads skipped: they need a folder on a mounted filesystem, not a raw device"
            )
        return Plan(tests, skipped, prepare=False, warnings=tuple(warnings))
    workloads = profile.workloads if settings.workload_scale > 0 else ()
    return Plan(profile.tests, (), prepare=True, warnings=tuple(warnings), workloads=workloads)


def measure(
    target: Target,
    profile: Profile,
    settings: Settings,
    runner: FioRunner,
    progress: Progress | None = None,
    roots: SystemRoots | None = None,
) -> Run:
    """Run the plan against the target and grade it. Removes its test file whatever happens.

    With `roots`, the device's /proc/diskstats counters are sampled every second during each
    test (TestResult.monitor), and the profile's workloads run after the tests."""
    progress = progress or SilentProgress()
    watch = _DeviceWatch(target, roots)
    fio_version = runner.version()  # fails before anything is created when fio is unusable
    plan = plan_tests(profile, settings, target)
    started = _now()
    results: list[TestResult] = []
    command: tuple[str, ...] = ()
    total = len(plan.tests) + (1 if plan.prepare else 0) + (1 if plan.workloads else 0)
    left_behind: list[str] = []
    with _test_area(target, settings, roots, left_behind) as area:
        number = 0
        if plan.prepare:
            number += 1
            job = prepare_job(settings, area.filename)
            progress.begin(PREPARE_JOB_NAME, number, total, None)
            output = runner.run(job, progress.update, folder_fd=area.folder_fd)
            rate = parse_prepare_output(output, settings.size_bytes, PREPARE_TIME_LIMIT_S)
            progress.end(PREPARE_JOB_NAME, f"{rate / 1e6:.1f} MB/s")
        for spec in plan.tests:
            number += 1
            job = job_for_test(
                spec,
                settings,
                area.filename,
                readonly=target.kind is TargetKind.DEVICE and not settings.destructive,
                log_folder=runner.log_folder,
            )
            progress.begin(spec.name, number, total, job.expected_s)
            with watch.monitor() as monitor:
                output = runner.run(job, progress.update, folder_fd=area.folder_fd)
            result = parse_test_output(spec, job, output)
            if monitor is not None:
                result = dataclasses.replace(result, monitor=monitor.series())
            command = command or output.argv
            results.append(result)
            progress.end(spec.name, _summary(result))
    workloads = _run_workloads(target, profile, settings, results, roots, progress, plan)
    return Run(
        started_at=started,
        finished_at=_now(),
        target=target,
        settings=settings,
        host=host_info(),
        fio=FioInfo(version=fio_version, command=command),
        tests=tuple(results),
        grades=grade_results(results),
        warnings=plan.warnings
        + tuple(left_behind)
        + watch.warnings
        + _workload_warnings(workloads),
        tests_skipped=plan.skipped,
        workloads=workloads,
    )


class _DeviceWatch:
    """Monitors the target's device during each test, when its diskstats line can be read."""

    def __init__(self, target: Target, roots: SystemRoots | None) -> None:
        self.roots = roots
        self.device: str | None = None
        self.warnings: tuple[str, ...] = ()
        if roots is None:
            return
        if target.kind is TargetKind.DEVICE:
            self.device = normalise_device_name(target.path)
        elif target.folder:
            self.device = device_for_path(Path(target.folder), roots)

    @contextlib.contextmanager
    def monitor(self) -> Iterator[DiskMonitor | None]:
        if self.roots is None or self.device is None:
            yield None
            return
        try:
            monitor = DiskMonitor(self.device, self.roots, MONITOR_INTERVAL_S).start()
        except Interrupted:  # a signal is not "no diskstats line": stop and clean up
            raise
        except FlashmarkError as error:  # no diskstats line: measure without the monitor
            self.warnings = (f"device activity not recorded: {error}",)
            self.device = None
            yield None
            return
        try:
            yield monitor
        finally:
            monitor.stop()


def _run_workloads(
    target: Target,
    profile: Profile,
    settings: Settings,
    results: list[TestResult],
    roots: SystemRoots | None,
    progress: Progress,
    plan: Plan,
) -> tuple[WorkloadResult, ...]:
    if roots is None or not plan.workloads:
        return ()
    assert target.folder is not None  # plan_tests only plans workloads for folders
    step = f"workloads ({', '.join(plan.workloads)})"
    total = len(plan.tests) + (1 if plan.prepare else 0) + 1
    progress.begin(step, total, total, None)  # the last step
    rand_write = next((r for r in results if r.spec.name == "rand-write-4k"), None)
    workloads = run_workloads(
        plan.workloads,
        Path(target.folder),
        scale=settings.workload_scale,
        roots=roots,
        progress=lambda fraction: progress.update(fraction, ""),
        interval_s=MONITOR_INTERVAL_S,
        random_write_iops=rand_write.write.iops if rand_write and rand_write.write else None,
    )
    progress.end(
        step,
        ", ".join(
            f"{w.name} {w.seconds:.1f} s" if w.seconds is not None else f"{w.name} skipped"
            for w in workloads
        ),
    )
    return workloads


def _workload_warnings(workloads: tuple[WorkloadResult, ...]) -> tuple[str, ...]:
    return tuple(f"workload {w.name} skipped: {w.skipped}" for w in workloads if w.skipped)


@contextlib.contextmanager
def _test_area(
    target: Target, settings: Settings, roots: SystemRoots | None, left_behind: list[str]
) -> Iterator[TestArea]:
    """What fio measures, for the time of the fio steps. Each runner.run has stopped and reaped
    fio before it returns or raises, so the test file is only removed once nothing uses it."""
    if target.kind is TargetKind.DEVICE:
        try:
            with contextlib.ExitStack() as held:
                if settings.destructive:
                    # Every member of the device's stack stays opened with O_EXCL until the
                    # last write: nothing can mount or claim them meanwhile (device_safety.py).
                    held.enter_context(claim_for_writing(target.path, roots or SystemRoots()))
                yield TestArea(filename=target.path, folder_fd=None)
        except NotEnoughSpace as error:
            # A block device has no free space to run out of: writes past its end fail with
            # ENOSPC when it shrank to nothing, which is how a pulled card looks.
            raise DeviceFailed(
                f"{target.path} stopped taking writes (it vanished or shrank): {error}"
            ) from None
        return
    with created_test_file(target, direct=settings.direct, left_behind=left_behind) as area:
        try:
            yield area
        except ReadOnlyTarget as error:
            # The test file was created, so the filesystem was writable when the run began:
            # turning read-only since is the kernel's answer to I/O errors (ext4
            # errors=remount-ro, ext4(5)), a failing device.
            raise DeviceFailed(
                f"the filesystem turned read-only while being measured ({error}); "
                "the kernel does that after I/O errors: see `dmesg`"
            ) from None


def _summary(result: TestResult) -> str:
    parts = []
    for label, direction in (("read", result.read), ("write", result.write)):
        if direction is not None:
            parts.append(f"{label} {direction.bw_bytes / 1e6:.1f} MB/s {direction.iops:.0f} IOPS")
    return ", ".join(parts)


def host_info() -> HostInfo:
    uname = platform.uname()
    return HostInfo(
        hostname=uname.node,
        kernel=uname.release,
        machine=uname.machine,
        python=platform.python_version(),
        flashmark_version=__version__,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def default_settings(
    profile: Profile,
    *,
    size_bytes: int | None,
    runtime_s: int | None,
    buffered: bool,
    destructive: bool,
    workload_scale: float | None = None,
) -> Settings:
    return Settings(
        profile=profile.name,
        size_bytes=size_bytes or profile.default_size_bytes,
        runtime_s=runtime_s or profile.default_runtime_s,
        ramp_s=profile.default_ramp_s,
        direct=not buffered,
        destructive=destructive,
        workload_scale=profile.default_workload_scale if workload_scale is None else workload_scale,
    )
