"""Plan and run a benchmark: the only step that touches the device (through a FioRunner).

    resolve_target (target.py) -> plan_tests -> measure -> Run (graded, not yet saved)

Read-only device runs keep the tests that only read; a destructive device run and every folder
run first write the whole test area (`prepare`), so reads read data that was really written.
"""

from __future__ import annotations

import contextlib
import platform
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from flashmark import __version__
from flashmark.errors import DeviceFailed, NotEnoughSpace
from flashmark.fio.jobs import (
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
from flashmark.profiles import Profile
from flashmark.target import created_test_file


@dataclass(frozen=True)
class Plan:
    tests: tuple[TestSpec, ...]
    skipped: tuple[str, ...]
    prepare: bool
    warnings: tuple[str, ...]

    def expected_seconds(self, settings: Settings) -> float:
        return len(self.tests) * float(settings.runtime_s + settings.ramp_s)


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
        return Plan(tests, skipped, prepare=False, warnings=tuple(warnings))
    return Plan(profile.tests, (), prepare=True, warnings=tuple(warnings))


def measure(
    target: Target,
    profile: Profile,
    settings: Settings,
    runner: FioRunner,
    progress: Progress | None = None,
) -> Run:
    """Run the plan against the target and grade it. Removes its test file whatever happens."""
    progress = progress or SilentProgress()
    fio_version = runner.version()  # fails before anything is created when fio is unusable
    plan = plan_tests(profile, settings, target)
    started = _now()
    results: list[TestResult] = []
    command: tuple[str, ...] = ()
    total = len(plan.tests) + (1 if plan.prepare else 0)
    with _test_area(target, settings) as filename:
        number = 0
        if plan.prepare:
            number += 1
            job = prepare_job(settings, filename)
            progress.begin(PREPARE_JOB_NAME, number, total, None)
            output = runner.run(job, progress.update)
            rate = parse_prepare_output(output, settings.size_bytes, PREPARE_TIME_LIMIT_S)
            progress.end(PREPARE_JOB_NAME, f"{rate / 1e6:.1f} MB/s")
        for spec in plan.tests:
            number += 1
            job = job_for_test(
                spec,
                settings,
                filename,
                readonly=target.kind is TargetKind.DEVICE and not settings.destructive,
            )
            progress.begin(spec.name, number, total, job.expected_s)
            output = runner.run(job, progress.update)
            result = parse_test_output(spec, job, output)
            command = command or output.argv
            results.append(result)
            progress.end(spec.name, _summary(result))
    return Run(
        started_at=started,
        finished_at=_now(),
        target=target,
        settings=settings,
        host=host_info(),
        fio=FioInfo(version=fio_version, command=command),
        tests=tuple(results),
        grades=grade_results(results),
        warnings=plan.warnings,
        tests_skipped=plan.skipped,
    )


@contextlib.contextmanager
def _test_area(target: Target, settings: Settings) -> Iterator[str]:
    if target.kind is TargetKind.DEVICE:
        try:
            yield target.path
        except NotEnoughSpace as error:
            # A block device has no free space to run out of: writes past its end fail with
            # ENOSPC when it shrank to nothing, which is how a pulled card looks.
            raise DeviceFailed(
                f"{target.path} stopped taking writes (it vanished or shrank): {error}"
            ) from None
        return
    with created_test_file(target, direct=settings.direct) as path:
        yield str(path)


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
) -> Settings:
    return Settings(
        profile=profile.name,
        size_bytes=size_bytes or profile.default_size_bytes,
        runtime_s=runtime_s or profile.default_runtime_s,
        ramp_s=profile.default_ramp_s,
        direct=not buffered,
        destructive=destructive,
    )
