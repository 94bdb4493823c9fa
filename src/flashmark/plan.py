"""The plan of a run: which tests, on which area, with which fio jobs. Computed once, from the
profile, the user's settings and the resolved target; nothing here touches the device.

    profile + settings + target -> Plan (tests, skipped ones and why, the exact fio jobs)

Read-only device runs keep the tests that only read; a destructive device run and every folder
run first write the whole test area (`prepare`), so reads read data that was really written.
The jobs are built here and nowhere else: `--show-fio` prints them, measure() runs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flashmark.errors import UsageError
from flashmark.fio.jobs import (
    PREPARE_BLOCK_BYTES,
    FioJob,
    job_for_test,
    prepare_job,
    sustained_size_limit,
)
from flashmark.model import Settings, Target, TargetKind, TestSpec
from flashmark.probe.model import ProbeReport
from flashmark.profiles import Profile
from flashmark.sustained import SUSTAINED_WRITE_NAME, sustained_stop_rule
from flashmark.units import format_size


@dataclass(frozen=True)
class Plan:
    """What a run will do. `jobs` pairs with `tests`; `prepare_job` runs first when set."""

    profile: Profile
    settings: Settings
    target: Target
    tests: tuple[TestSpec, ...]
    jobs: tuple[FioJob, ...]  # one per test, in the same order
    prepare_job: FioJob | None  # writes the whole area first (folders, destructive devices)
    skipped: tuple[str, ...]  # names of tests left out, with the reason in `warnings`
    warnings: tuple[str, ...]
    workloads: tuple[str, ...] = ()  # run after the tests, in the target folder
    area_note: str | None = None  # how --size was rounded, when it was
    probe: ProbeReport | None = None  # the device and host, judged, read before measuring
    probe_problem: str | None = None  # why the device could not be identified

    @property
    def prepare(self) -> bool:
        return self.prepare_job is not None

    @property
    def all_jobs(self) -> tuple[FioJob, ...]:
        """Every fio invocation in the order it runs."""
        return ((self.prepare_job,) if self.prepare_job else ()) + self.jobs

    def expected_seconds(self) -> float:
        """The time-based tests' time; the size- or steady-state-bound sustained write, whose
        time depends on the device, is not counted (see `sustained_note`)."""
        timed = sum(1 for job in self.jobs if job.expected_s is not None)
        return timed * float(self.settings.runtime_s + self.settings.ramp_s)

    @property
    def sustained_note(self) -> str | None:
        """The sustained write's stop rules, when the plan runs it."""
        if not any(test.name == SUSTAINED_WRITE_NAME for test in self.tests):
            return None
        return sustained_stop_rule(sustained_size_limit(self.settings))


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


def default_settings(
    profile: Profile,
    *,
    size_bytes: int | None,
    runtime_s: int | None,
    buffered: bool,
    destructive: bool,
    workload_scale: float | None = None,
    ramp_s: int | None = None,
) -> Settings:
    """The run's settings: what was asked for, the profile's defaults for the rest (None).
    A ramp of 0 is a choice (no warm-up), not a missing value."""
    return Settings(
        profile=profile.name,
        size_bytes=size_bytes or profile.default_size_bytes,
        runtime_s=runtime_s or profile.default_runtime_s,
        ramp_s=profile.default_ramp_s if ramp_s is None else ramp_s,
        direct=not buffered,
        destructive=destructive,
        workload_scale=profile.default_workload_scale if workload_scale is None else workload_scale,
    )


def plan_tests(profile: Profile, settings: Settings, target: Target, *, log_folder: str) -> Plan:
    """The plan for `target`. `log_folder` is the runner's folder for fio's bandwidth logs.

    A block device without --destructive is the one read-only case: its write tests are left
    out, nothing prepares it, and fio runs with --readonly as a second guard."""
    warnings: list[str] = []
    if not settings.direct:
        warnings.append(
            "buffered I/O (--buffered): the page cache is part of every figure; "
            "these are not the device's own speeds"
        )
    readonly = target.kind is TargetKind.DEVICE and not settings.destructive
    filename = target.test_file if target.kind is TargetKind.FILE else target.path
    assert filename is not None  # resolve_target names a folder target's test file
    tests, workloads = profile.tests, profile.workloads
    skipped: tuple[str, ...] = ()
    if readonly:
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
        workloads = ()
    if settings.workload_scale <= 0:
        workloads = ()
    return Plan(
        profile=profile,
        settings=settings,
        target=target,
        tests=tests,
        jobs=tuple(
            job_for_test(spec, settings, filename, readonly=readonly, log_folder=log_folder)
            for spec in tests
        ),
        prepare_job=None
        if readonly or not _needs_prepare(tests, target)
        else prepare_job(settings, filename),
        skipped=skipped,
        warnings=tuple(warnings),
        workloads=workloads,
    )


def _needs_prepare(tests: tuple[TestSpec, ...], target: Target) -> bool:
    """A folder's test file must be written before fio uses it (else fio lays it out itself);
    a device needs it only for tests that read. A device run of writes alone (the sustained
    profile) is not prepared: the preparation would fill the write cache the sustained write
    is there to find."""
    return target.kind is not TargetKind.DEVICE or any(spec.pattern.reads for spec in tests)
