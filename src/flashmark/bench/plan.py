"""The plan of a run: which tests, on which area, with which fio jobs. Computed once, from the
profile, the user's settings and the resolved target; nothing here touches the device.

    profile + settings + target -> Plan (tests, skipped ones and why, the exact fio jobs)

Read-only device runs keep the tests that only read; a destructive device run and a folder run
that read write the whole test area (`prepare`) before the first test that reads, so reads read
data that was really written. The sequential writes that come before it (`sustained-write` and
`seq-write`, first in every profile that reads) write the start of the area themselves: the
preparation writes only the rest (`rest_of_prepare`) instead of writing the area once more. A
folder's test file is allocated, not written, before the first test (bench/target.py), so a run
of writes alone (the sustained profile) writes nothing before it.

`sustained-write` is there to find the write cache, so it must start with the cache empty: it
runs first (before `seq-write`, which would fill the cache), and on a folder after a rest
(`rest`, SUSTAINED_REST_S): the test file's allocation and the filesystem's pending writes go to
the card just before it. After it, `seq-write` measures the rate past the cache, which is what
it is there for (docs/methodology.md).

Without --runtime, the other timed tests measure a short first window, extended or measured
again only when it was not enough (flashmark.bench.lengths). The jobs are built here and nowhere
else: `--show-fio` prints them, measure() runs them.

Each timed job has its own ramp: the profile's for the run's first test, for the first after
the preparation and for the first after a test that is not time-based (`sustained-write`);
a shorter one (FOLLOW_RAMP_S) for a test that directly follows another timed test, and for
a test extended or run again at full length right after its own first window; none
(DEPTH_CHANGE_RAMP_S) for a test that follows the same I/O at another queue depth. --ramp sets
every ramp.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from flashmark.bench.grading.classes import graded_tests
from flashmark.bench.jobs import (
    PREPARE_BLOCK_BYTES,
    PREPARE_JOB_NAME,
    job_for_test,
    prepare_job,
    sustained_size_limit,
)
from flashmark.bench.lengths import first_window_s
from flashmark.bench.model import Pattern, Settings, Target, TargetKind, TestSpec
from flashmark.bench.profiles import Profile
from flashmark.bench.sustained import (
    SUSTAINED_REST_S,
    SUSTAINED_REST_WHY,
    SUSTAINED_WRITE_NAME,
    sustained_length_text,
    sustained_stop_rule,
)
from flashmark.errors import UsageError
from flashmark.fio.job import FioJob
from flashmark.probe.model import ProbeReport
from flashmark.system.disk_space import SpacePlan
from flashmark.units import format_duration, format_size

# The ramp of a timed test that directly follows another timed test. The profile's ramp lets a
# device settle into a workload from rest, or after the preparation's long sequential write or the
# size-bound sustained write. A test following a timed test starts on a device already busy with
# I/O: 1 s covers fio's start and the change of pattern, and a transient still left in the first
# window widens its 95% interval past +-1%, so the test is extended and the first window, its rate
# outside the next window's interval, left out, or the test runs again at full length
# (flashmark.bench.lengths) rather than reporting it.
# Saves 1 s per such test (2 s in the standard profile).
FOLLOW_RAMP_S = 1
# The ramp of a timed test that directly follows one of the same I/O at another queue depth
# (rand-read-4k-q32 after rand-read-4k): the same pattern and block size on the same area,
# so nothing has to settle but the queue, which the first I/Os fill. The profiles that grade
# run such pairs one after the other for this (profiles.py). Not with --ramp, which sets every
# ramp.
DEPTH_CHANGE_RAMP_S = 0


# The name of the rest step (measure.py), in the progress and in a partial result's steps.
REST_STEP_NAME = "rest"


@dataclass(frozen=True)
class Rest:
    """The device left idle before test `before`, so that its write cache can empty."""

    before: int  # the index of the test it precedes
    seconds: int
    why: str  # "so that ...", for the plan and the progress


@dataclass(frozen=True)
class PlannedStep:
    """One step of the run as measure() runs them, for the progress and its ETA: `expected_s`
    for a step of known length (a timed test's ramp and first window, a rest); `bytes_to_write`
    for a size-bound step (the preparation, the sustained write: its time is those bytes at
    the rate seen once it runs; the sustained write may stop sooner on a steady rate); neither
    for a step of unknown length (the workloads)."""

    name: str
    expected_s: float | None
    bytes_to_write: int | None = None


@dataclass(frozen=True)
class Plan:
    """What a run will do. `jobs` pairs with `tests`; `prepare_job` runs after the first
    `prepare_after` tests when set; `rest` before the test it names."""

    profile: Profile
    settings: Settings
    target: Target
    tests: tuple[TestSpec, ...]
    jobs: tuple[FioJob, ...]  # one per test, in the same order (a short first window or full)
    prepare_job: FioJob | None  # writes the whole area (folders, destructive devices)
    skipped: tuple[str, ...]  # names of tests left out, with the reason in `warnings`
    warnings: tuple[str, ...]
    workloads: tuple[str, ...] = ()  # run after the tests, in the target folder
    area_note: str | None = None  # how --size was rounded, when it was
    probe: ProbeReport | None = None  # the device and host, judged, read before measuring
    probe_problem: str | None = None  # why the device could not be identified
    # How many tests run before the preparation: the sequential writes leading the plan write
    # the start of the area, and the preparation then writes only what they did not.
    prepare_after: int = 0
    filename: str = ""  # what the jobs name: a folder's test file or the device node
    log_folder: str = ""
    rest: Rest | None = None  # the device left idle before a test (sustained-write on a folder)
    # The tests that follow the same I/O at another depth: their ramp is DEPTH_CHANGE_RAMP_S.
    depth_changes: frozenset[int] = frozenset()
    # A folder: the most the run writes there (its test area, or its workloads, which run once
    # the test file is gone) and the filesystem's reserve (flashmark.system.disk_space).
    space: SpacePlan | None = None

    @property
    def prepare(self) -> bool:
        return self.prepare_job is not None

    @property
    def all_jobs(self) -> tuple[FioJob, ...]:
        """Every fio invocation in the order it runs, as planned: the preparation may be
        shortened to what the tests before it did not write, and a test whose first window was
        not enough is extended (`extension_job`) or runs again at full length
        (`full_length_job`)."""
        before, after = self.jobs[: self.prepare_after], self.jobs[self.prepare_after :]
        return before + ((self.prepare_job,) if self.prepare_job else ()) + after

    def expected_seconds(self) -> float:
        """The time-based tests' time at their planned windows and the rest; the size- or
        steady-state-bound sustained write and the preparation, whose time depends on the
        device, are not counted (`describe` names them), nor tests measured again at full
        length."""
        return sum(step.expected_s for step in self.steps() if step.expected_s is not None)

    def steps(self) -> tuple[PlannedStep, ...]:
        """The run's steps in the order measure() runs them: the rest, the tests, the
        preparation among them, the workloads."""
        steps: list[PlannedStep] = []
        for index, (spec, job) in enumerate(zip(self.tests, self.jobs, strict=True)):
            if self.rest is not None and index == self.rest.before:
                steps.append(PlannedStep(REST_STEP_NAME, float(self.rest.seconds)))
            if index == self.prepare_after and self.prepare_job is not None:
                steps.append(PlannedStep(PREPARE_JOB_NAME, None, self.settings.size_bytes))
            steps.append(PlannedStep(spec.name, job.expected_s, job.size_limit_bytes))
        if self.workloads:
            steps.append(PlannedStep(f"workloads ({', '.join(self.workloads)})", None))
        return tuple(steps)

    def describe(self) -> str:
        """What the run does and how long it takes, in one line, in the order it runs, e.g.
        "a 30 s rest so that the card's write cache can empty, then sustained-write until its
        rate is steady or 112 MiB are written (about 30s, plus as long as the device takes to
        write up to 112 MiB)" or "seq-write 10 s; 5 tests x 5 s (...) (about 31s, plus writing
        what seq-write leaves of the 128 MiB area)". A size-bound step is named with what bounds
        it, never given a time it does not have."""
        parts: list[str] = []
        limits: list[int] = []  # what the size-bound tests write at most
        timed = 0  # tests measuring a first window (every timed test with --runtime)
        for index, (spec, job) in enumerate(zip(self.tests, self.jobs, strict=True)):
            if job.size_limit_bytes is not None:
                text = sustained_length_text(job.size_limit_bytes)
                if self.rest is not None and index == self.rest.before:
                    text = f"a {self.rest.seconds} s rest {self.rest.why}, then {text}"
                parts.append(text)
                limits.append(job.size_limit_bytes)
            elif self.settings.first_window_s is not None and not self.is_first_window(index):
                # A leading sequential write runs its full length (see plan_tests), or until
                # it has written the area.
                until = " at most, until the area is written" if job.ends_when_written else ""
                parts.append(f"{spec.name} {job.expected_s or 0:g} s{until}")
            else:
                timed += 1
        if timed:
            parts.append(self._timed_lengths(timed))
        if not parts:
            return "nothing to run"
        text = "; ".join(parts)
        known = self.expected_seconds()
        plus = [f"as long as the device takes to write up to {format_size(n)}" for n in limits]
        if self.prepare_job is not None:
            size = format_size(self.settings.size_bytes)
            if self.prepare_after == 0:
                text += f" after preparing {size}"
                plus.append("preparation")
            else:
                first = " and ".join(spec.name for spec in self.tests[: self.prepare_after])
                leave = "leaves" if self.prepare_after == 1 else "leave"
                plus.append(f"writing what {first} {leave} of the {size} area")
        if not plus:
            text += f" (about {format_duration(known)})"
        elif not known:
            text += f" ({', then '.join(plus)})"
        elif plus == ["preparation"]:
            text += f" (about {format_duration(known)} plus preparation)"
        else:
            text += f" (about {format_duration(known)}, plus {', plus '.join(plus)})"
        if self.workloads:
            text += f", then workloads {', '.join(self.workloads)}"
        return text

    def _timed_lengths(self, count: int) -> str:
        """How long the `count` timed tests take, e.g. "6 tests x 10 s" or, with adaptive
        lengths and shorter ramps after a timed test, "6 tests x 5 s (4 s after a timed test,
        3 s after the same I/O at another depth; 4 to 9 s more where 3 s are not enough)": a
        first window extended by another, or measured again at full length
        (flashmark.bench.lengths); the ramp after the same I/O at another depth where a test
        has it (`depth_changes`)."""
        settings = self.settings
        runtime = settings.runtime_s
        ramp, follow, first = settings.ramp_s, settings.follow_ramp_s, settings.first_window_s
        tests = f"{count} test{'s' if count != 1 else ''}"
        window = runtime if first is None else first
        ramps = [f"{follow + window} s after a timed test"] if follow != ramp else []
        if self.depth_changes:
            ramps.append(f"{DEPTH_CHANGE_RAMP_S + window} s after the same I/O at another depth")
        notes = [", ".join(ramps)] if ramps else []
        if first is not None:
            extension = follow + min(first, runtime - first)
            notes.append(f"{extension} to {follow + runtime} s more where {first} s are not enough")
        text = f"{tests} x {ramp + window} s"
        return f"{text} ({'; '.join(notes)})" if notes else text

    def stops_on_verdict(self, index: int) -> bool:
        """Whether test `index` stops once every threshold it serves is decided and is judged
        on its decision interval (flashmark.bench.lengths): a test a class reads, in a profile
        that exists to grade, with adaptive lengths (not --runtime). A leading sequential
        write is not stopped on its verdict: it ends once it has written the area, which the
        preparation would write otherwise (`_until_written`)."""
        return (
            self.profile.stops_on_verdict
            and self.settings.first_window_s is not None
            and self.tests[index].name in graded_tests()
        )

    def first_window_enough(self, index: int) -> bool:
        """Whether test `index` keeps its first window however wide its interval: a test no
        class reads, in a profile that exists to grade with adaptive lengths (quick's
        seq-read). Its figure is shown with the interval it has; the time goes to the verdict
        (docs/methodology.md, "Test lengths and ramps")."""
        return (
            self.profile.stops_on_verdict
            and self.settings.first_window_s is not None
            and not self.stops_on_verdict(index)
        )

    def is_first_window(self, index: int) -> bool:
        """Whether test `index` measures a short first window (flashmark.bench.lengths)."""
        window = self.jobs[index].window_s
        return window is not None and window < self.settings.runtime_s

    def full_length_job(
        self, index: int, window_s: int, *, after_first_window: bool = True
    ) -> FioJob:
        """Test `index` again, measuring `window_s` seconds (flashmark.bench.lengths). Right after
        its own first window the device is busy with the same I/O: the follow ramp. Measured
        at full length at once (`after_first_window` False), in place of its first window:
        the ramp that one had."""
        ramp_s = self.settings.follow_ramp_s if after_first_window else self.jobs[index].ramp_s
        return self._rerun_job(index, window_s, ramp_s, again=True)

    def extension_job(self, index: int, window_s: int, extension: int) -> FioJob:
        """Test `index`'s `extension`th run extending its first window by `window_s` seconds
        (flashmark.bench.lengths), after the follow ramp: the device is busy with the same I/O."""
        return self._rerun_job(index, window_s, self.settings.follow_ramp_s, extension=extension)

    def _rerun_job(
        self, index: int, window_s: int, ramp_s: int, *, again: bool = False, extension: int = 0
    ) -> FioJob:
        """Test `index` run once more after its planned job: the same target and checks."""
        return job_for_test(
            self.tests[index],
            self.settings,
            self.filename,
            readonly=self.jobs[index].readonly,
            log_folder=self.log_folder,
            window_s=window_s,
            again=again,
            ramp_s=ramp_s,
            extension=extension,
        )

    def without_preparation_ramp(self) -> Plan:
        """This plan once its preparation had nothing left to write: the test planned after it
        directly follows a timed test, so it ramps as such (`follow_ramp_s`), not as one after a
        long sequential write."""
        index = self.prepare_after
        if index == 0 or self.jobs[index].ramp_s == self.settings.follow_ramp_s:
            return self
        window = self.jobs[index].window_s
        window_s = self.settings.runtime_s if window is None else round(window)
        job = self._rerun_job(index, window_s, self.settings.follow_ramp_s)
        return replace(self, jobs=(*self.jobs[:index], job, *self.jobs[index + 1 :]))

    def rest_of_prepare(self, written_bytes: int) -> FioJob | None:
        """The preparation of what the tests before it did not write (`written_bytes` from the
        area's start, rounded down to a preparation block); None when they wrote it all."""
        start = self.prepare_start(written_bytes)
        if self.prepare_job is None or start >= self.settings.size_bytes:
            return None
        if start == 0:
            return self.prepare_job
        return prepare_job(self.settings, self.filename, offset_bytes=start)

    def prepare_start(self, written_bytes: int) -> int:
        """Where the preparation starts when the tests before it wrote `written_bytes`."""
        whole_blocks = written_bytes // PREPARE_BLOCK_BYTES * PREPARE_BLOCK_BYTES
        return min(whole_blocks, self.settings.size_bytes)

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


def default_follow_ramp_s(profile: Profile) -> int:
    """The ramp of a timed test directly after another one, without --ramp."""
    return min(profile.default_ramp_s, FOLLOW_RAMP_S)


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
    A ramp of 0 is a choice (no warm-up), not a missing value. Without `runtime_s` the timed
    tests measure a short first window, extended or measured again up to the profile's
    runtime only when it was not enough (flashmark.bench.lengths); `runtime_s` fixes every test's
    length. Without `ramp_s` a test following a timed test ramps FOLLOW_RAMP_S at most;
    `ramp_s` is every test's ramp."""
    return Settings(
        profile=profile.name,
        size_bytes=size_bytes or profile.default_size_bytes,
        runtime_s=runtime_s or profile.default_runtime_s,
        ramp_s=profile.default_ramp_s if ramp_s is None else ramp_s,
        follow_ramp_s=default_follow_ramp_s(profile) if ramp_s is None else ramp_s,
        direct=not buffered,
        destructive=destructive,
        workload_scale=profile.default_workload_scale if workload_scale is None else workload_scale,
        first_window_s=None if runtime_s else first_window_s(profile.default_runtime_s),
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
    if target.kind is TargetKind.DEVICE:
        # Read-only or destructive alike: a raw device has no folder to install packages in.
        if profile.workloads and settings.workload_scale > 0:
            warnings.append(
                "workloads skipped: they need a folder on a mounted filesystem, not a raw device"
            )
        workloads = ()
    if settings.workload_scale <= 0:
        workloads = ()
    prepared = not readonly and _needs_prepare(tests)
    leading = _leading_sequential_writes(tests) if prepared else 0
    ramps, depth_changes = _ramps(tests, settings, leading if prepared else None)
    return Plan(
        profile=profile,
        settings=settings,
        target=target,
        tests=tests,
        jobs=tuple(
            job_for_test(
                spec,
                settings,
                filename,
                readonly=readonly,
                log_folder=log_folder,
                # The leading sequential writes measure their full length: the preparation
                # writes what they do not, so it costs no time. In a profile that grades, the
                # time the area takes is enough (`_until_written`).
                window_s=None if index < leading else settings.first_window_s,
                ramp_s=ramps[index],
                until_written=index < leading and _until_written(profile, settings, spec),
            )
            for index, spec in enumerate(tests)
        ),
        prepare_job=prepare_job(settings, filename) if prepared else None,
        skipped=skipped,
        warnings=tuple(warnings),
        workloads=workloads,
        prepare_after=leading,
        filename=filename,
        log_folder=log_folder,
        rest=_rest(tests, target),
        depth_changes=depth_changes,
    )


def _until_written(profile: Profile, settings: Settings, spec: TestSpec) -> bool:
    """Whether a leading sequential write ends once it has written the area (jobs.py,
    `until_written`): in a profile that grades with adaptive lengths, where the verdict needs
    the area written (the reads after it read it) and not the precision of a full window.
    Its window keeps a floor, the first window's length: one shorter is measured again
    (measure.py)."""
    return (
        profile.stops_on_verdict
        and settings.first_window_s is not None
        and spec.pattern is Pattern.SEQ_WRITE
        and spec.name != SUSTAINED_WRITE_NAME
    )


def _rest(tests: tuple[TestSpec, ...], target: Target) -> Rest | None:
    """The rest before sustained-write on a folder (SUSTAINED_REST_S): the test file's
    allocation and the filesystem's pending writes reach the card just before it (module doc).
    A device has nothing written before it."""
    names = [spec.name for spec in tests]
    if target.kind is TargetKind.DEVICE or SUSTAINED_WRITE_NAME not in names:
        return None
    return Rest(names.index(SUSTAINED_WRITE_NAME), SUSTAINED_REST_S, SUSTAINED_REST_WHY)


def _ramps(
    tests: tuple[TestSpec, ...], settings: Settings, prepare_at: int | None
) -> tuple[list[int], frozenset[int]]:
    """Each test's ramp: the settings' ramp for the first test, for the first after the
    preparation (`prepare_at`; None without one), which follows a long sequential write, and
    for the first after a test that is not time-based (the sustained write); the follow ramp
    for every other, which directly follows a timed test, but none for one after the same I/O
    at another depth (with the profile's ramps). (The sustained write's job has no ramp at
    all.) And those tests at another depth."""
    ramps, depth_changes = [], set()
    for index in range(len(tests)):
        if index in (0, prepare_at) or tests[index - 1].name == SUSTAINED_WRITE_NAME:
            ramps.append(settings.ramp_s)
        elif at_another_depth(tests[index - 1], tests[index]) and ramp_not_given(settings):
            ramps.append(DEPTH_CHANGE_RAMP_S)
            depth_changes.add(index)
        else:
            ramps.append(settings.follow_ramp_s)
    return ramps, frozenset(depth_changes)


def follows_at_another_depth(tests: Sequence[TestSpec]) -> bool:
    """Whether any of `tests`, in the order they ran, follows the same I/O at another depth
    (DEPTH_CHANGE_RAMP_S): what the ramps of a saved run say."""
    return any(at_another_depth(a, b) for a, b in itertools.pairwise(tests))


def at_another_depth(before: TestSpec, test: TestSpec) -> bool:
    """Whether `test` is the I/O of `before` at another queue depth (DEPTH_CHANGE_RAMP_S)."""
    return (
        replace(before, name=test.name, description=test.description, iodepth=test.iodepth) == test
    )


def ramp_not_given(settings: Settings) -> bool:
    """Whether the ramps are the profile's: --ramp sets every ramp alike (default_settings)."""
    return settings.follow_ramp_s != settings.ramp_s


def _leading_sequential_writes(tests: tuple[TestSpec, ...]) -> int:
    """How many tests may run before the preparation: the sequential writes before the first
    test that reads, time-based ones and the size-bound sustained write alike (they write the
    area from its start, as the preparation would, and log their offsets). 0 when no test
    reads (there is no preparation then)."""
    first_read = next((i for i, spec in enumerate(tests) if spec.pattern.reads), None)
    if first_read is None:
        return 0
    writes = itertools.takewhile(lambda spec: spec.pattern is Pattern.SEQ_WRITE, tests[:first_read])
    return len(list(writes))


def _needs_prepare(tests: tuple[TestSpec, ...]) -> bool:
    """Only tests that read need the area written: unwritten file extents and never written
    flash would be answered without the device's work. A folder's test file is allocated before
    the first test (bench/target.py), so a run of writes alone (the sustained profile) is not
    prepared, on a folder as on a device: the preparation would fill the write cache the
    sustained write is there to find."""
    return any(spec.pattern.reads for spec in tests)
