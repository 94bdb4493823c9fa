"""Run a plan: the only step that touches the device (through a FioRunner).

    Plan (plan.py) -> measure -> Measurement (what fio and the workloads saw, not yet judged)

Each fio job of the plan runs with the device's /proc/diskstats counters sampled alongside;
the test file or the device's claim lives exactly as long as the fio steps. A folder's test
file is allocated to the whole area when it is made (bench/target.py), and the plan's rest (the
device left idle before sustained-write on a folder, plan.py) is a step of its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from flashmark.bench.disturbance import (
    RETRIES,
    RetryBudget,
    TestWatch,
    not_checked,
    target_disk,
)
from flashmark.bench.grading.classes import undecided
from flashmark.bench.jobs import PREPARE_JOB_NAME, PREPARE_TIME_LIMIT_S
from flashmark.bench.lengths import (
    AT_ONCE,
    FastestRates,
    FullLength,
    at_once,
    extension_s,
    full_length,
    still_settling,
    too_few_transfers,
)
from flashmark.bench.model import (
    Disturbance,
    DisturbanceStatus,
    FioInfo,
    Settings,
    Target,
    TargetKind,
    TestResult,
    TestSpec,
)
from flashmark.bench.plan import REST_STEP_NAME, Plan, Rest
from flashmark.bench.preflight import full_temporary_folder
from flashmark.bench.results import (
    ParsedRun,
    parse_prepare_output,
    parse_run,
    pooled_result,
    written_window,
)
from flashmark.bench.slow_moments import SlowMoments, pauses_of_writes
from flashmark.bench.target import TestArea, created_test_file
from flashmark.errors import (
    DeviceFailed,
    FioFailed,
    FioOutputError,
    FlashmarkError,
    Interrupted,
    NotEnoughSpace,
    ReadOnlyTarget,
    StoppedEarly,
    TargetError,
)
from flashmark.fio.job import FioJob
from flashmark.fio.runner import DelegatingRunner, FioOutput, FioRunner
from flashmark.fio.window import written_extent
from flashmark.monitor.sampler import DiskMonitor
from flashmark.system.device_safety import claim_for_writing
from flashmark.system.disk_space import SpaceWatch
from flashmark.system.diskstats import (
    DiskCounters,
    device_for_path,
    normalise_device_name,
    read_device_counters,
)
from flashmark.system.private_folder import open_checked_folder
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import held, held_path
from flashmark.system.watchdog import StallWatch, Watchdog
from flashmark.units import format_iops, format_rate, format_size
from flashmark.workloads.result import WorkloadResult
from flashmark.workloads.session import run_workloads

# Seconds between two readings of the device's counters during tests and workloads: iostat's
# usual interval; the monitor costs well under 1% of a core at it (benchmarks/).
MONITOR_INTERVAL_S = 1.0


class Progress(Protocol):
    """What measure() reports while it works; the CLI draws it (bars on a terminal).
    `expected_s` is a step's planned length; when a test then runs longer than planned (an
    extension of its first window, a second run at full length, its full length at once),
    `update` says so with `left_s`, the run's own length, as it starts."""

    def begin(self, step: str, number: int, total: int, expected_s: float | None) -> None: ...

    def update(
        self, fraction: float | None, status: str, *, left_s: float | None = None
    ) -> None: ...

    def end(self, step: str, summary: str) -> None: ...


class SilentProgress:
    def begin(self, step: str, number: int, total: int, expected_s: float | None) -> None:
        pass

    def update(self, fraction: float | None, status: str, *, left_s: float | None = None) -> None:
        pass

    def end(self, step: str, summary: str) -> None:
        pass


@dataclass(frozen=True)
class Measurement:
    """What a plan measured, before grading."""

    started_at: str  # ISO 8601, UTC
    finished_at: str
    fio: FioInfo
    tests: tuple[TestResult, ...]
    workloads: tuple[WorkloadResult, ...]
    warnings: tuple[str, ...]  # what went wrong on the way without spoiling the figures


class MeasurementStopped(StoppedEarly[Measurement]):
    """A step failed after tests were measured (a device that failed or stopped answering, a
    workload that ran out of room): `partial` holds those tests, `step` names the step that
    failed, `not_run` what did not run after it, `cause` the error (its exit status is this
    one's)."""

    def __init__(
        self, partial: Measurement, step: str, not_run: tuple[str, ...], cause: BaseException
    ) -> None:
        super().__init__(partial, cause)
        self.step = step
        self.not_run = not_run


def measure(
    plan: Plan,
    runner: FioRunner,
    progress: Progress | None = None,
    roots: SystemRoots | None = None,
    watchdog: Watchdog | None = None,
) -> Measurement:
    """Run the plan's jobs against its target. Removes its test file whatever happens.

    With `roots`, the device's /proc/diskstats counters are sampled every second during each
    test (TestResult.monitor), and the plan's workloads run after the tests. Every fio run is
    watched (`watchdog`, default bounds: flashmark.system.watchdog): a device that stops answering
    raises DeviceHung. A device failure once tests were measured raises MeasurementStopped,
    which keeps them."""
    progress = progress or SilentProgress()
    target = plan.target
    watch = _DeviceWatch(target, roots)
    watchdog = watchdog or Watchdog()
    watched = _WatchedRunner(runner, watchdog, watch.counters, target.folder or target.path)
    fio_version = runner.version()  # fails before anything is created when fio is unusable
    started = _now()
    results: list[TestResult] = []
    left_behind: list[str] = []
    steps = tuple(step.name.split(" ")[0] for step in plan.steps())  # workloads: "workloads"
    done: list[str] = []  # the steps finished, in order
    commands: list[tuple[str, ...]] = []  # each fio run's command line

    def measured(workloads: tuple[WorkloadResult, ...], warnings: tuple[str, ...]) -> Measurement:
        return Measurement(
            started_at=started,
            finished_at=_now(),
            fio=FioInfo(version=fio_version, command=commands[0] if commands else ()),
            tests=tuple(results),
            workloads=workloads,
            warnings=tuple(left_behind) + watch.warnings + warnings,
        )

    try:
        with _held_target(target):
            with _test_area(plan, roots, left_behind) as area:
                _measure_tests(
                    plan, watched, watchdog, progress, area, watch, results, done, commands
                )
            workloads = _run_workloads(plan, results, roots, progress)
    except Exception as error:  # a signal is a BaseException: it stops the run as it is
        if not results or isinstance(error, Interrupted):
            raise
        failed = next((step for step in steps if step not in done), "the end of the run")
        not_run = tuple(step for step in steps if step not in done and step != failed)
        raise MeasurementStopped(measured((), ()), failed, not_run, error) from error
    skipped = tuple(f"workload {w.name} skipped: {w.skipped}" for w in workloads if w.skipped)
    return measured(workloads, skipped)


class _WatchedRunner(DelegatingRunner):
    """`runner` with every fio run watched by `watchdog` (flashmark.system.watchdog): the bound for
    the job's request size, progress from the device's counters (`counters`)."""

    def __init__(
        self,
        runner: FioRunner,
        watchdog: Watchdog,
        counters: Callable[[], DiskCounters | None],
        place: str,
    ) -> None:
        super().__init__(runner)
        self.watchdog = watchdog
        self.counters = counters
        self.place = place

    def watch(self, job: FioJob, stall: StallWatch | None) -> StallWatch:
        bound = self.watchdog.bound(job.block_bytes)
        return stall or StallWatch(bound, f"{self.place} ({job.name})", self.counters)


def _slowest_s(result: TestResult) -> float:
    """The longest a request of `result` took (fio's maximum latency), in seconds."""
    return max(
        (d.lat_ns.max / 1e9 for d in (result.read, result.write) if d is not None), default=0.0
    )


def _measure_tests(
    plan: Plan,
    runner: FioRunner,
    watchdog: Watchdog,
    progress: Progress,
    area: TestArea,
    watch: _DeviceWatch,
    results: list[TestResult],
    done: list[str],
    commands: list[tuple[str, ...]],
) -> None:
    """Run the plan's tests (and its preparation before the first that reads) into `results`,
    noting each finished step in `done` and each test's fio command line in `commands`."""
    settings = plan.settings
    # A folder's free space is read again before each test (flashmark.system.disk_space): when
    # something else filled the filesystem into its reserve, DiskFilling stops the run, and the
    # tests measured so far are kept (MeasurementStopped). The test file holds its whole area
    # already, so the reserve must be free then. The workloads check their own room before each
    # of them (flashmark.workloads.session).
    space = SpaceWatch(plan.space) if plan.space is not None else None
    total = len(plan.steps())
    number = 0
    written = 0  # how far from its start the tests so far wrote the area sequentially
    bursty: TestSpec | None = None  # the test that found the device completing in bursts
    fastest = FastestRates()
    slow = SlowMoments()  # the pauses of the writes so far (flashmark.bench.slow_moments)
    for index, spec in enumerate(plan.tests):
        if space is not None:
            space.check()
        if plan.rest is not None and index == plan.rest.before:
            number += 1
            _rest(plan.rest, progress, number, total)
            done.append(REST_STEP_NAME)
        if index == plan.prepare_after and plan.prepare_job is not None:
            number += 1
            if not _prepare(plan, runner, progress, area, written, number, total):
                plan = plan.without_preparation_ramp()
            done.append(PREPARE_JOB_NAME)
        number += 1
        job = plan.jobs[index]
        progress.begin(spec.name, number, total, job.expected_s)
        retries = 0
        disturbed: TestResult | None = None  # its last run that another process disturbed
        try:
            while True:  # again when another process disturbed it and has stopped since
                check = watch.test_watch(spec, plan.settings)
                watching = check.watching() if check else contextlib.nullcontext()
                with watch.monitor() as monitor, watching:
                    runs = _TestRuns(
                        plan, index, check.runner(runner) if check else runner, progress,
                        area.folder_fd, slow,
                    )  # fmt: skip
                    result, output, found_bursty = _measure_test(runs, bursty, fastest)
                disturbance = watch.judged(check, retries, plan.settings)
                if not watch.again(disturbance, progress):
                    break
                disturbed = dataclasses.replace(result, disturbance=disturbance)
                retries += 1
        except Exception:
            # Measured, if disturbed (and said so: it grades nothing): a run stopped by a later
            # failure, the device gone silent while it was measured again, keeps it.
            if disturbed is not None:
                results.append(disturbed)
            raise
        result = dataclasses.replace(result, disturbance=disturbance)
        fastest = fastest.seen(result)
        if spec.pattern.writes:  # its last run's (the test's own, or its last extension's)
            slow = slow.seen(pauses_of_writes(output.logs))
        if found_bursty and (bursty is None or spec.iodepth < bursty.iodepth):
            bursty = spec
        if monitor is not None:
            result = dataclasses.replace(result, monitor=monitor.series())
        if index < plan.prepare_after:
            written = max(written, written_extent(output.logs, settings.size_bytes))
        commands.append(output.argv)
        results.append(result)
        watchdog.saw_latency(_slowest_s(result))
        done.append(spec.name)
        progress.end(spec.name, _summary(result))


@contextlib.contextmanager
def _held_target(target: Target) -> Iterator[None]:
    """The folder or device held for the whole measurement (tests and workloads): a second
    flashmark on it refuses meanwhile (flashmark.system.target_lock)."""
    if target.kind is TargetKind.DEVICE:
        with held_path(target.path):
            yield
        return
    assert target.folder is not None
    try:
        descriptor = open_checked_folder(target.folder, target.folder_identity)
    except OSError as error:
        raise TargetError(f"cannot open the folder {target.folder}: {error.strerror}") from None
    try:
        with held(descriptor, target.folder):
            yield
    finally:
        os.close(descriptor)


def _rest(rest: Rest, progress: Progress, number: int, total: int) -> None:
    """Leave the device idle for the rest's time, saying how long is left each second. A
    signal ends it as it ends any step."""
    progress.begin(REST_STEP_NAME, number, total, float(rest.seconds))
    started = time.monotonic()
    while (left := rest.seconds - (time.monotonic() - started)) > 0:
        progress.update(1.0 - left / rest.seconds, f"idle, {left:.0f} s left, {rest.why}")
        time.sleep(min(1.0, left))
    progress.end(REST_STEP_NAME, f"the device rested {rest.seconds} s {rest.why}")


def _prepare(
    plan: Plan,
    runner: FioRunner,
    progress: Progress,
    area: TestArea,
    written: int,
    number: int,
    total: int,
) -> bool:
    """Write what the tests before the first read did not: the whole area, the rest of it, or
    nothing (the step then says so). Whether it wrote anything."""
    job = plan.rest_of_prepare(written)
    progress.begin(PREPARE_JOB_NAME, number, total, None)
    if job is None:
        progress.end(PREPARE_JOB_NAME, "nothing left to write: the tests before wrote it all")
        return False
    left = plan.settings.size_bytes - plan.prepare_start(written)
    with _temporary_folder_checked(runner):
        output = runner.run(job, progress.update, folder_fd=area.folder_fd)
        rate = parse_prepare_output(output, left, PREPARE_TIME_LIMIT_S)
    done = "" if left == plan.settings.size_bytes else f"the {format_size(left)} not yet written, "
    progress.end(PREPARE_JOB_NAME, done + format_rate(rate))
    return True


@dataclass(frozen=True)
class _TestRuns:
    """How test `index` of `plan` is run, each run parsed and pooled: what every one of its
    runs (planned, extending, at full length) shares. `slow`: the pauses of the writes before
    it (flashmark.bench.slow_moments)."""

    plan: Plan
    index: int
    runner: FioRunner
    progress: Progress
    folder_fd: int | None
    slow: SlowMoments

    @property
    def spec(self) -> TestSpec:
        return self.plan.tests[self.index]

    @property
    def on_verdict(self) -> bool:
        return self.plan.stops_on_verdict(self.index)

    def parsed(self, job: FioJob) -> tuple[ParsedRun, FioOutput]:
        """One fio run, parsed once (its windows can be pooled with later runs')."""
        with _temporary_folder_checked(self.runner):
            output = self.runner.run(job, self.progress.update, folder_fd=self.folder_fd)
            return parse_run(self.spec, job, output), output

    def pooled(self, runs: list[ParsedRun]) -> TestResult:
        return pooled_result(self.spec, runs, sequential=self.on_verdict, slow=self.slow)

    def run(self, job: FioJob) -> tuple[TestResult, FioOutput]:
        parsed, output = self.parsed(job)
        return self.pooled([parsed]), output

    def fixed(self, parsed: ParsedRun) -> TestResult:
        """One run judged at the decision's level on its fixed-length interval: a graded test
        whose length no look at its rates decided (the leading seq-write, `_until_written`)."""
        return pooled_result(self.spec, [parsed], decision=True, slow=self.slow)

    def again(
        self, window_s: int, reason: str, *, fixed: bool = False
    ) -> tuple[TestResult, FioOutput]:
        """The test measured again for `window_s`, after its first window; `fixed`: judged on
        that run's fixed-length interval, as `fixed` judges."""
        job = self.plan.full_length_job(self.index, window_s)
        _announce(self.progress, job, reason, again=True)
        if not fixed:
            return self.run(job)
        parsed, output = self.parsed(job)
        return self.fixed(parsed), output

    def undecided(self, result: TestResult) -> tuple[str, ...] | None:
        """For a test that stops on its verdict, its checks still uncertain (() once decided);
        () for a test no class reads in a profile that exists to grade (its first window is
        its figure, Plan.first_window_enough); None for a test measured for its figure (the
        +-1% rule, flashmark.bench.lengths)."""
        if self.on_verdict:
            return undecided(result)
        return () if self.plan.first_window_enough(self.index) else None


def _measure_test(
    runs: _TestRuns, bursty: TestSpec | None, fastest: FastestRates
) -> tuple[TestResult, FioOutput, bool]:
    """The test's planned run, and when that was a short first window that was not enough
    (flashmark.bench.lengths), further windows pooled with it (`_extend`) or one more run at
    full length, which is the result; at full length at once when an earlier test (`bursty`)
    found the device completing in bursts at this test's queue depth or below, or when its
    first window could not hold enough of its transfers at the `fastest` rates so far; either
    way for as long as those transfers need, and once more when the run still holds too few.
    Also whether this test found the device bursty."""
    plan, index, spec = runs.plan, runs.index, runs.spec
    runtime_s = plan.settings.runtime_s
    first_window = plan.is_first_window(index)
    at_once_length = at_once(spec, fastest, runtime_s, bursty) if first_window else None
    if at_once_length is not None:
        job = plan.full_length_job(index, at_once_length.window_s, after_first_window=False)
        _announce(runs.progress, job, at_once_length.reason.removeprefix(AT_ONCE))
        result, output = runs.run(job)
        lengthened, discarded_s = at_once_length.reason, 0.0
        short = too_few_transfers(result, runtime_s)
        if short is not None:  # slower than the fastest rate its length came from
            discarded_s = result.elapsed_s
            result, output = runs.again(short.window_s, short.reason)
            lengthened += f"; then again: {short.reason}"
        result = dataclasses.replace(result, lengthened=lengthened, discarded_s=discarded_s)
        return result, output, False
    if plan.jobs[index].ends_when_written:
        return _until_written(runs)
    first, output = runs.parsed(plan.jobs[index])
    # A test at its full length at once (the leading sequential write) stops on nothing: its
    # fixed-length interval holds, and is judged at the decision's level.
    on_verdict = runs.on_verdict
    result = pooled_result(
        spec, [first], sequential=on_verdict and first_window, decision=on_verdict, slow=runs.slow
    )
    longer = full_length(result, runtime_s, runs.undecided(result)) if first_window else None
    if longer is None:
        return result, output, False
    if longer.extendable:
        return _extend(runs, first, output, longer)
    result, output = runs.again(longer.window_s, longer.reason)
    lengthened = f"its first window was not enough: {longer.reason}"
    result = dataclasses.replace(result, lengthened=lengthened, discarded_s=first.elapsed_s)
    return result, output, longer.bursty


def _until_written(runs: _TestRuns) -> tuple[TestResult, FioOutput, bool]:
    """A leading sequential write that ended once it had written the area (plan.py), judged at
    the decision's level on its fixed-length interval: it stopped on its bytes, not on its
    rates. Where what the ramp left of it is shorter than a first window (a fast card, its
    area written in seconds), that is too few seconds to estimate its spread: it is measured
    again for a first window's length instead, unjudged. Where a threshold it serves is still
    undecided and it measured less than the profile's runtime, it is measured once more at
    full length, on a fresh fixed-length interval (docs/methodology.md: a wrong verdict then
    needs the truth past one end of one of two 99.5% intervals, at most 0.25% each)."""
    plan, index, spec = runs.plan, runs.index, runs.spec
    job = plan.jobs[index]
    floor_s, runtime_s = plan.settings.first_window_s, plan.settings.runtime_s
    assert floor_s is not None  # adaptive lengths (plan._until_written)
    with _temporary_folder_checked(runs.runner):
        output = runs.runner.run(job, runs.progress.update, folder_fd=runs.folder_fd)
    window = written_window(output, job)
    runs_kept = output  # the run whose window is the result
    discarded_s, lengthened, full = 0.0, None, window.capped
    if window.capped or window.ms >= floor_s * 1000:
        result = runs.fixed(parse_run(spec, job, output))
    else:
        area = format_size(plan.settings.size_bytes)
        when = f"{window.ms / 1000:.1f} s after its ramp" if window.ms else "during its ramp"
        lengthened = f"it wrote the {area} area {when}, too short a window"
        result, runs_kept = runs.again(floor_s, lengthened, fixed=True)
        discarded_s = output.elapsed_s
    left = undecided(result)
    if left and not full:
        reason = f"undecided: {'; '.join(left)}"
        discarded_s += runs_kept.elapsed_s
        result, runs_kept = runs.again(runtime_s, reason, fixed=True)
        lengthened = f"{lengthened}; then {reason}" if lengthened else reason
    if lengthened is not None:
        result = dataclasses.replace(result, lengthened=lengthened, discarded_s=discarded_s)
    # The area is written whichever run is kept: the preparation after it, which reads how far
    # the writes reached from their logs, finds the first run's too.
    logs = {**output.logs, **runs_kept.logs}
    return result, dataclasses.replace(runs_kept, logs=logs), False


def _announce(progress: Progress, job: FioJob, reason: str, *, again: bool = False) -> None:
    """Say that a test runs at full length (`again`: after its first window), for how long
    and why, with the run's length for the ETA."""
    how = "measuring again" if again else "measuring its full length at once"
    progress.update(None, f"{how} for {job.window_s:g} s: {reason}", left_s=job.expected_s)


@contextlib.contextmanager
def _temporary_folder_checked(runner: FioRunner) -> Iterator[None]:
    """A fio run that failed because fio's work folder filled up (its JSON missing, a write
    of its log refused) says so, instead of blaming fio or the target."""
    try:
        yield
    except (FioFailed, FioOutputError, NotEnoughSpace) as error:
        full = full_temporary_folder(runner.log_folder)
        if full is not None:
            raise full from error
        raise


def _extend(
    runs: _TestRuns, first: ParsedRun, output: FioOutput, longer: FullLength
) -> tuple[TestResult, FioOutput, bool]:
    """The test's first window (`first`), too wide only by the spread of its rates, extended
    by further windows of the same test, pooled (flashmark.bench.lengths), until the pooled
    interval is enough or the windows together measured the profile's runtime. The first
    window is left out when the first extension shows it was still settling
    (`still_settling`); when the pooled windows' edges grow too wide to pool, the test is
    measured again at full length instead."""
    plan, index = runs.plan, runs.index
    runtime_s = plan.settings.runtime_s
    first_window_s = plan.jobs[index].window_s
    assert first_window_s is not None  # a first window (plan.is_first_window)
    pooled = [first]
    measured_s, extensions, reason = first_window_s, 0, longer.reason
    left_out, discarded_s = "", 0.0
    result = runs.pooled(pooled)
    while (step := extension_s(runtime_s, measured_s)) is not None:
        extensions += 1
        job = plan.extension_job(index, step, extensions)
        runs.progress.update(
            None, f"extending its first window by {step} s: {reason}", left_s=job.expected_s
        )
        parsed, output = runs.parsed(job)
        pooled.append(parsed)
        measured_s += step
        if extensions == 1:
            alone = pooled_result(runs.spec, [parsed], sequential=runs.on_verdict)
            settling = still_settling(result, alone)
            if settling is not None:
                left_out = f"; the first left out: {settling}"
                discarded_s, pooled = pooled[0].elapsed_s, pooled[1:]
                measured_s -= first_window_s  # the windows pooled measure only the rest
        result = runs.pooled(pooled)
        now = full_length(result, runtime_s, runs.undecided(result))
        if now is None:
            break
        reason = now.reason
        if not now.extendable:  # wide at the pooled edges, or short of transfers
            result, output = runs.again(now.window_s, now.reason)
            lengthened = (
                f"its first window was not enough: {longer.reason}; extended {extensions} "
                f"times, then measured again: {now.reason}"
            )
            discarded_s += sum(run.elapsed_s for run in pooled)
            result = dataclasses.replace(result, lengthened=lengthened, discarded_s=discarded_s)
            return result, output, False
    lengthened = (
        f"its first window was not enough: {longer.reason}{left_out}; extended to "
        f"{measured_s:g} s in {len(pooled)} windows, pooled"
    )
    result = dataclasses.replace(result, lengthened=lengthened, discarded_s=discarded_s)
    return result, output, False


class _DeviceWatch:
    """Monitors the target's device during each test, when its diskstats line can be read;
    its counters also tell the watchdog whether requests complete (`counters`), and whether
    another process used the whole disk under it meanwhile (flashmark.bench.disturbance)."""

    def __init__(self, target: Target, roots: SystemRoots | None) -> None:
        self.roots = roots
        self.device: str | None = None
        self.warnings: tuple[str, ...] = ()
        self.filesystem = "device" if target.kind is TargetKind.DEVICE else target.filesystem or ""
        self.retry_budget = RetryBudget()
        self.disk: str | None = None
        if roots is None:
            return
        if target.kind is TargetKind.DEVICE:
            self.device = normalise_device_name(target.path)
        elif target.folder:
            self.device = device_for_path(Path(target.folder), roots)
        self.disk = target_disk(target, self.device, roots)

    def test_watch(self, spec: TestSpec, settings: Settings) -> TestWatch | None:
        """A disturbance check of one run of `spec`; None when none can be made."""
        if self.roots is None or self.disk is None or not settings.direct:
            return None
        return TestWatch(spec.name, self.disk, self.roots, self.filesystem, spec.block_size_bytes)

    def judged(
        self, check: TestWatch | None, retries: int, settings: Settings
    ) -> Disturbance | None:
        if not settings.direct:  # writeback moves the device's writes outside the window
            return not_checked("not checked (buffered)")
        if check is None:
            return None if self.roots is None else not_checked("not checked (no device counters)")
        return check.judged(retries)

    def again(self, disturbance: Disturbance | None, progress: Progress) -> bool:
        """Whether to measure a disturbed test again: fewer than RETRIES so far, and the
        device quiet again within the wait (flashmark.bench.disturbance)."""
        if disturbance is None or disturbance.status is not DisturbanceStatus.DISTURBED:
            return False
        if disturbance.retries >= RETRIES or self.roots is None or disturbance.device is None:
            return False
        return self.retry_budget.wait_for_quiet(
            disturbance.device, self.roots, lambda text: progress.update(None, text)
        )

    def counters(self) -> DiskCounters | None:
        """The device's diskstats line now, or None when it cannot be read."""
        if self.roots is None or self.device is None:
            return None
        try:
            return read_device_counters(self.roots, self.device)
        except FlashmarkError:
            return None

    @contextlib.contextmanager
    def monitor(self) -> Iterator[DiskMonitor | None]:
        if self.roots is None or self.device is None:
            yield None
            return
        monitor = DiskMonitor(self.device, self.roots, MONITOR_INTERVAL_S)
        try:
            monitor.start()
        except Interrupted:  # a signal is not "no diskstats line": stop and clean up
            # Its sampling thread may have started before the signal landed; left running, it
            # is cut off at exit with "Exception ignored in thread started by" (CI, SIGHUP).
            monitor.stop()
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
    plan: Plan, results: list[TestResult], roots: SystemRoots | None, progress: Progress
) -> tuple[WorkloadResult, ...]:
    if roots is None or not plan.workloads:
        return ()
    target, settings = plan.target, plan.settings
    assert target.folder is not None  # plan_tests only plans workloads for folders
    step = f"workloads ({', '.join(plan.workloads)})"
    total = len(plan.steps())
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


@contextlib.contextmanager
def _test_area(plan: Plan, roots: SystemRoots | None, left_behind: list[str]) -> Iterator[TestArea]:
    """What fio measures, for the time of the fio steps. Each runner.run has stopped and reaped
    fio before it returns or raises, so the test file is only removed once nothing uses it."""
    target, settings = plan.target, plan.settings
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
    with created_test_file(
        target, direct=settings.direct, left_behind=left_behind, allocate_bytes=settings.size_bytes
    ) as area:
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
    return ", ".join(
        f"{label} {format_rate(direction.bw_bytes)} {format_iops(direction.iops)} IOPS"
        for label, direction in (("read", result.read), ("write", result.write))
        if direction is not None
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
