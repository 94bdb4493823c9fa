"""The whole benchmark as one library call, shared by the CLI, scans and the results service.

    request -> plan_benchmark: resolve the target, probe it, plan the tests and their fio jobs
            -> run_benchmark:  measure -> grade -> claim findings + warnings -> Run

Nothing here prints, asks or saves: the caller confirms between the two calls, then renders
and saves. `open_benchmark(request)` is the command's way: fio's work folder and runner made
for the plan (a recorded replay when FLASHMARK_FIO_REPLAY names one), then `.run(progress)`.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from flashmark import __version__
from flashmark.bench.grading.claims import claim_findings
from flashmark.bench.grading.classes import grade_results
from flashmark.bench.grading.conditions import judge_probe
from flashmark.bench.job_hash import job_hash, job_identity
from flashmark.bench.measure import Measurement, MeasurementStopped, Progress, measure
from flashmark.bench.model import HostInfo, Target
from flashmark.bench.passport import card_passports
from flashmark.bench.plan import Plan, default_settings, plan_area, plan_tests
from flashmark.bench.preflight import check_plan, fio_work_folder
from flashmark.bench.profiles import get_profile
from flashmark.bench.run_result import Partial, Run
from flashmark.bench.target import resolve_target
from flashmark.errors import EnvironmentProblem, FlashmarkError, Interrupted, StoppedEarly
from flashmark.fio.runner import FioRunner, ReplayRunner, runner_from_environment
from flashmark.history.store import History
from flashmark.probe.model import ProbeReport
from flashmark.probe.target import probe_target
from flashmark.system.disk_space import SpacePlan, plan_space
from flashmark.system.sysroot import SystemRoots
from flashmark.system.watchdog import DEFAULT_FLOOR_S, Watchdog
from flashmark.workloads.needs import workload_needs


class BenchmarkStopped(StoppedEarly[Run]):
    """A step failed after tests were measured: `partial` is the run with those tests (its
    `partial` says what failed), `cause` the error, whose exit status this one carries."""


@dataclass(frozen=True)
class BenchmarkRequest:
    """What a user asks for: the command line of `flashmark run`, as data."""

    target: str  # a folder, a file (its folder is measured) or a block device
    profile: str = "quick"
    size_bytes: int | None = None  # None: the profile's default
    runtime_s: int | None = None
    ramp_s: int | None = None  # None: the profile's default; 0: no warm-up
    buffered: bool = False
    destructive: bool = False
    workload_scale: float | None = None
    stall_timeout_s: float = DEFAULT_FLOOR_S  # the watchdog's floor (flashmark.system.watchdog)


@dataclass(frozen=True)
class Benchmark:
    """A planned run with the fio runner and OS roots it was planned for (`open_benchmark`)."""

    request: BenchmarkRequest
    plan: Plan
    runner: FioRunner
    roots: SystemRoots

    def run(self, progress: Progress | None = None) -> Run:
        """Measure, grade and judge the plan (run_benchmark); BenchmarkStopped with the tests
        measured when a later step fails."""
        watchdog = Watchdog(self.request.stall_timeout_s)
        return run_benchmark(self.plan, self.runner, self.roots, progress, watchdog)

    def job_hash_document(self) -> dict[str, object]:
        """What `run --job-hash` prints: the hash of the benchmark this plan runs and what it
        is made of (flashmark and fio versions, target kind, settings; job_hash.py)."""
        identity = job_identity(
            __version__, self.runner.version(), self.plan.target.kind, self.plan.settings
        )
        return {"job_hash": job_hash(identity), "job": identity}


@contextmanager
def open_benchmark(
    request: BenchmarkRequest,
    *,
    roots: SystemRoots | None = None,
    probe: bool = True,
    check_room_for_output: bool = True,
) -> Iterator[Benchmark]:
    """The run of `request`, planned (plan_benchmark, probed unless `probe` is False), with
    fio's work folder, removed on the way out, and the runner working in it: fio itself, or
    the recorded outputs FLASHMARK_FIO_REPLAY names (tests, bug reports)."""
    roots = roots or SystemRoots.from_environment()
    with fio_work_folder(check_room_for_output=check_room_for_output) as workdir:
        runner = runner_from_environment(Path(workdir))
        plan = _for_runner(plan_benchmark(request, roots, runner.log_folder, probe=probe), runner)
        yield Benchmark(request, plan, runner, roots)


def plan_benchmark(
    request: BenchmarkRequest, roots: SystemRoots, log_folder: str, *, probe: bool = True
) -> Plan:
    """Resolve, probe and plan; nothing is written. `log_folder` is the runner's folder for
    fio's logs (it is named in the jobs). Raises UsageError and the target's errors."""
    profile = get_profile(request.profile)
    area = plan_area(profile, request.size_bytes)
    settings = default_settings(
        profile,
        size_bytes=area.size_bytes,
        runtime_s=request.runtime_s,
        buffered=request.buffered,
        destructive=request.destructive,
        workload_scale=request.workload_scale,
        ramp_s=request.ramp_s,
    )
    target = resolve_target(
        request.target, size_bytes=settings.size_bytes, destructive=request.destructive, roots=roots
    )
    plan = plan_tests(profile, settings, target, log_folder=log_folder)
    report, problem = _probe(target, roots) if probe else (None, None)
    return dataclasses.replace(
        plan,
        area_note=area.note,
        probe=report,
        probe_problem=problem,
        space=_space(plan, roots),
    )


def _space(plan: Plan, roots: SystemRoots) -> SpacePlan | None:
    """What a run on a folder writes there at most: its test area, or its workloads, which
    run once the test file is removed."""
    if plan.target.folder is None:
        return None
    settings = plan.settings
    workloads = workload_needs(plan.workloads, settings.workload_scale).bytes
    return plan_space(plan.target.folder, max(settings.size_bytes, workloads), roots)


def _for_runner(plan: Plan, runner: FioRunner) -> Plan:
    """`plan` as `runner` runs it: a recorded replay writes to no device, so no device rests
    before sustained-write (bench/plan.py)."""
    if isinstance(runner, ReplayRunner) and plan.rest is not None:
        return dataclasses.replace(plan, rest=None)
    return plan


def run_benchmark(
    request: BenchmarkRequest | Plan,
    runner: FioRunner,
    roots: SystemRoots | None = None,
    progress: Progress | None = None,
    watchdog: Watchdog | None = None,
) -> Run:
    """Measure, grade and judge a plan (made from `request` when given one). With `roots`,
    device activity is recorded and the workloads run (see measure); `watchdog` sets the
    bounds within which a device must answer (flashmark.system.watchdog). What the later steps need
    is checked first (flashmark.bench.preflight); a step that still fails after tests were measured
    (the device failed or stopped answering, a workload ran out of room) raises
    BenchmarkStopped with those tests, judged."""
    if isinstance(request, Plan):
        plan = request
    else:
        planned = plan_benchmark(request, roots or SystemRoots(), runner.log_folder)
        plan = _for_runner(planned, runner)
    if roots is not None:  # the workloads run only with roots
        check_plan(plan)
    try:
        measured = measure(plan, runner, progress, roots, watchdog)
    except MeasurementStopped as stopped:
        partial = Partial(
            failed_step=stopped.step,
            error=str(stopped.cause),
            exit_status=int(stopped.exit_status),
            not_run=stopped.not_run,
        )
        raise BenchmarkStopped(_judged(plan, stopped.partial, partial), stopped.cause) from None
    return _judged(plan, measured, None)


def _judged(plan: Plan, measured: Measurement, partial: Partial | None) -> Run:
    grades = grade_results(measured.tests)
    report = plan.probe
    return Run(
        flashmark_version=__version__,
        started_at=measured.started_at,
        finished_at=measured.finished_at,
        target=plan.target,
        settings=plan.settings,
        host=host_info(),
        fio=measured.fio,
        tests=measured.tests,
        grades=grades,
        warnings=plan.warnings + measured.warnings + (report.warnings if report else ()),
        tests_skipped=plan.skipped,
        probe=report,
        findings=claim_findings(report, grades) if report else (),
        workloads=measured.workloads,
        partial=partial,
    )


def _probe(target: Target, roots: SystemRoots) -> tuple[ProbeReport | None, str | None]:
    """What the device is and claims, and what would distort the run; read before measuring
    (the probe samples the device's activity, which the benchmark would dominate). A probe
    that fails leaves the run without a description, never stops it."""
    try:
        return judge_probe(probe_target(target.folder or target.path, roots)), None
    except Interrupted:  # a signal is not a failed probe: stop the run
        raise
    except (FlashmarkError, OSError) as error:
        return None, str(error)


def with_card_passport(
    run: Run,
    warn: Callable[[str], None],
    *,
    history: History | None = None,
    db_path: Path | None = None,
) -> Run:
    """`run` with the passport of the measured device's SD/eMMC card (none without one), read
    from `history` as it was before this run is saved; with no history to save to (--no-save),
    from the one at `db_path` (or the default one) if there is one: without a home folder there
    is no default history to look in. A history that cannot be read is said through `warn`."""
    if run.probe is None:
        return dataclasses.replace(run, passport=None)
    if history is None:
        try:
            history = History.locate(db_path)
        except EnvironmentProblem:
            return dataclasses.replace(run, passport=None)
    passports = card_passports(run.probe, history, warn)
    return dataclasses.replace(run, passport=passports[0] if passports else None)


def host_info() -> HostInfo:
    uname = platform.uname()
    return HostInfo(
        hostname=uname.node,
        kernel=uname.release,
        machine=uname.machine,
        python=platform.python_version(),
    )
