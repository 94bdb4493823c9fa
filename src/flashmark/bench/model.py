"""Typed data crossing flashmark's boundaries (plan -> measure -> grade -> store -> present).

All are frozen dataclasses. Units are in the field names: bytes, bytes per second (`_bps`),
nanoseconds (`_ns`), milliseconds (`_ms`), seconds (`_s`). Nothing here does I/O. A run's
document ("flashmark.result/1", flashmark.bench.document) is these classes in the one codec
(flashmark.codec): their fields in order, with the keys and rounding their metadata gives.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from flashmark.codec import document, written
from flashmark.monitor.series import MonitorSeries
from flashmark.probe.model import MOUNT_OPTIONS, MOUNT_POINT
from flashmark.stats import MeanInterval, Verdict
from flashmark.upload_rules import (
    DEVICE_NODE,
    FILESYSTEM_TYPE,
    KERNEL_NAME,
    KERNEL_RELEASE,
    MADE_TEXT,
    VERSION,
    Always,
    Fields,
    ListOf,
    Matching,
    OneOf,
    Withheld,
    upload,
    upload_as,
    uploaded,
)


def _words(name: str, module: str = "flashmark.bench.grading.classes") -> OneOf:
    """flashmark's own words for a run's tests and grades, which a module made of these classes
    holds: read when an upload first needs them (it sends these and no others)."""
    return OneOf(lambda: getattr(importlib.import_module(module), name))


_PROFILES = "flashmark.bench.profiles"
TEST_NAME = _words("TEST_NAMES", _PROFILES)
# What most texts of a run are sent as: flashmark's own, screened (withheld when the screen
# finds an identifier); a kernel's name for a device.
_MADE_TEXT = upload(MADE_TEXT.or_withheld())
_KERNEL_NAME = upload(KERNEL_NAME.or_withheld())


class Pattern(StrEnum):
    """fio's `rw=` values that flashmark uses."""

    SEQ_READ = "read"
    SEQ_WRITE = "write"
    RAND_READ = "randread"
    RAND_WRITE = "randwrite"
    RAND_MIXED = "randrw"

    @property
    def reads(self) -> bool:
        return self in (Pattern.SEQ_READ, Pattern.RAND_READ, Pattern.RAND_MIXED)

    @property
    def writes(self) -> bool:
        return self in (Pattern.SEQ_WRITE, Pattern.RAND_WRITE, Pattern.RAND_MIXED)


class TargetKind(StrEnum):
    FILE = "file"  # a test file that flashmark creates in a folder and removes afterwards
    DEVICE = "device"  # a whole block device or partition, addressed directly


@uploaded
@dataclass(frozen=True, kw_only=True)
class TestSpec:
    """One named test of a profile: what fio is asked to do, independent of the target."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    name: str = field(metadata=upload(TEST_NAME))
    description: str = field(
        default="", metadata=upload(_words("TEST_DESCRIPTIONS", _PROFILES).or_withheld())
    )
    pattern: Pattern
    block_size_bytes: int
    iodepth: int
    rwmix_read_pct: int | None = None  # only for Pattern.RAND_MIXED

    @property
    def writes(self) -> bool:
        return self.pattern.writes


@uploaded
@dataclass(frozen=True)
class Settings:
    """How a run measures: the profile and everything a user can set about it."""

    profile: str = field(metadata=upload(_words("PROFILES", _PROFILES)))
    size_bytes: int  # the test area: the test file's size, or the span of the device used
    runtime_s: int  # measured seconds per timed test
    ramp_s: int  # seconds run before measuring starts (not counted)
    # The ramp of a timed test that directly follows another timed test (or its own first
    # window): the device is already busy with I/O (plan.py FOLLOW_RAMP_S). Equal to ramp_s
    # when --ramp was given, and in results saved before it existed.
    follow_ramp_s: int
    direct: bool  # O_DIRECT; False only with --buffered, and then labelled everywhere
    destructive: bool  # writes allowed on a block device
    ioengine: str = field(default="libaio", metadata=_KERNEL_NAME)
    workload_scale: float = 0.0  # scale of the profile's workloads; 0 runs none
    # Adaptive lengths (flashmark.bench.lengths): the short first window of the timed tests, each
    # extended or run again, up to runtime_s, only when it was not enough. None: every test runs
    # runtime_s
    # (--runtime given, or a profile no longer than the first window).
    first_window_s: int | None = None


@uploaded
@dataclass(frozen=True)
class Target:
    """What is measured: resolved from the TARGET argument before anything is written."""

    given: str = field(metadata=upload(Withheld()))  # as typed by the user: a path
    kind: TargetKind
    # The test file (kind FILE, in its private folder) or the device's /dev/NAME: a device's
    # node is sent, a test file's path not.
    path: str = field(metadata=upload(DEVICE_NODE.or_withheld()))
    # the folder holding the test file (kind FILE)
    folder: str | None = field(metadata=upload(Withheld()))
    # e.g. "/dev/mmcblk0p2", when known
    block_device: str | None = field(metadata=upload(DEVICE_NODE.or_withheld()))
    # e.g. "ext4", for kind FILE when known
    filesystem: str | None = field(metadata=upload(FILESYSTEM_TYPE.or_null()))
    mount_point: str | None = field(metadata=upload(MOUNT_POINT))
    mount_options: str | None = field(metadata=upload(MOUNT_OPTIONS))
    capacity_bytes: int | None  # device size (kind DEVICE) or free space (kind FILE)
    # Kind FILE, for the run only (not saved): the test file's generated name inside the
    # private folder, the folder's (st_dev, st_ino) when it was checked, so the folder opened
    # for the run is known to be the one checked, and the private folder's generated name
    # inside `folder` (target.py, system/private_folder.py).
    test_file: str | None = field(default=None, metadata=document(saved=False))
    folder_identity: tuple[int, int] | None = field(default=None, metadata=document(saved=False))
    private_folder: str | None = field(default=None, metadata=document(saved=False))


@uploaded
@dataclass(frozen=True)
class LatencyNs:
    """Completion latency of every I/O (submission + completion), from fio's lat_ns."""

    min: float
    mean: float
    max: float
    stddev: float
    p50: float
    p90: float
    p99: float
    p99_9: float = field(metadata=document(key="p99.9"))
    p99_99: float = field(metadata=document(key="p99.99"))


@uploaded
@dataclass(frozen=True, kw_only=True)
class BandwidthSeries:
    """Bandwidth per interval of the window (bytes completed in it / its length), its spread."""

    interval_ms: int
    min_bps: float = field(metadata=document(key="min"))
    max_bps: float = field(metadata=document(key="max"))
    mean_bps: float = field(metadata=document(key="mean"))
    stddev_bps: float = field(metadata=document(key="stddev"))
    samples_bps: tuple[float, ...] = field(metadata=document(key="samples"))


@uploaded
@dataclass(frozen=True)
class SubUnitRates:
    """The sustained-write test measured as the SD speed classes are specified
    (flashmark.bench.speed_class_rate): the rate of each whole 4 MiB sub-unit of 512 KiB writes
    after the write cache, the slowest of them (the figure the speed classes grade) and the longest
    busy time of one write against the specification's limit."""

    sub_unit_bytes: int  # 4 MiB
    from_bytes: int  # the first graded sub-unit starts here (bytes from the start of the pass)
    count: int  # whole sub-units graded
    min_bw_bytes: float  # the slowest sub-unit, bytes per second
    # The interval the verdict uses (low, high), bytes per second: from the slowest sub-unit
    # at its lowest to the second slowest at its highest (the log's 1 ms resolution applied):
    # one slow sub-unit alone may be a host delay (flashmark.bench.speed_class_rate).
    min_bw_bounds: tuple[float, float]
    median_bw_bytes: float
    max_busy_ms: float  # the longest busy of one write (its latency; without the latency log,
    # the time between two consecutive completions)
    max_busy_bounds: tuple[float, float]  # from the second longest to the longest, likewise
    busy_over_limit: int  # writes longer than busy_limit_ms
    busy_limit_ms: float  # 250 ms (SD Physical Layer Simplified Specification 4.10, 4.13.3.3)
    # how the times were taken (flashmark.bench.speed_class_rate METHOD_*)
    method: str = field(default="", metadata=_MADE_TEXT)


# Why the sustained-write test ended (fio's steadystate rule, its io_size, or its runtime).
STOPPED_STEADY = "steady"
STOPPED_SIZE_LIMIT = "size limit"
STOPPED_TIME_LIMIT = "time limit"


@uploaded
@dataclass(frozen=True)
class SustainedWrite:
    """The write cliff of the `sustained-write` test: where the rate falls off (the write
    cache) and the rates before and after it (flashmark.surface.cache.estimate_cache).

    `cache_bytes` and `burst_bw_bytes` are None when no cache was found: the whole pass ran at
    `sustained_bw_bytes`. Results saved before the later fields read them as None."""

    cache_bytes: int | None
    burst_bw_bytes: float | None  # bytes per second
    sustained_bw_bytes: float  # bytes per second
    written_bytes: int | None = None  # what the test wrote before it stopped
    stopped_by: str | None = field(  # STOPPED_STEADY, STOPPED_SIZE_LIMIT or STOPPED_TIME_LIMIT
        default=None,
        metadata=upload(OneOf(STOPPED_STEADY, STOPPED_SIZE_LIMIT, STOPPED_TIME_LIMIT).or_null()),
    )
    # True: a fall-off was found (the cache was exceeded). False: none was found and the test
    # stopped at a limit, not on a steady rate: the cache may be larger than what was written
    # and `sustained_bw_bytes` may still be the burst rate. None: none found, but the rate was
    # steady (a device without a cache, as far as the test can tell), or not known (old results).
    cache_exceeded: bool | None = None
    sub_units: SubUnitRates | None = None  # None: no whole sub-unit after the cache


@uploaded
@dataclass(frozen=True)
class RateIntervals:
    """A direction's "ci95" in its document: the 95% intervals of both headline rates, which
    rest on the same samples (the IOPS interval is the bandwidth one scaled), so their
    count, confidence and method are written once; each mean is its headline rate."""

    bw_bytes: tuple[float, float]
    iops: tuple[float, float]
    samples: int
    effective_samples: float
    confidence: float
    method: str = field(metadata=_MADE_TEXT)

    @classmethod
    def of(cls, bw: MeanInterval | None, iops: MeanInterval | None) -> RateIntervals | None:
        if bw is None or iops is None:
            return None
        return cls(
            (bw.low, bw.high),
            (iops.low, iops.high),
            bw.samples,
            bw.effective_samples,
            bw.confidence,
            bw.method,
        )

    def interval(self, low_high: tuple[float, float], mean: float) -> MeanInterval:
        low, high = low_high
        return MeanInterval(
            mean, low, high, self.samples, self.effective_samples, self.confidence, self.method
        )

    @staticmethod
    def read_fields(
        suffix: str, intervals: RateIntervals | None, direction: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The direction's two intervals saved as `suffix` ("ci95": the 95% ones, "decision")
        from its document, their means its headline rates."""
        if intervals is None:
            return {f"bw_{suffix}": None, f"iops_{suffix}": None}
        return {
            f"bw_{suffix}": intervals.interval(intervals.bw_bytes, direction["bw_bytes"]),
            f"iops_{suffix}": intervals.interval(intervals.iops, direction["iops"]),
        }


@uploaded
@dataclass(frozen=True, kw_only=True)
class DirectionResult:
    """What one data direction (read or write) of one test achieved.

    The headline rates `iops` and `bw_bytes` are what the grades read. Reads: the I/O completed
    inside the measuring window per second of it (a transfer straddling an edge in proportion,
    flashmark.fio.window). Writes: the durable rate, the window's bytes over the window plus
    the time the end_fsync took to put them on the device (`fsync_ms`); the window's own rate,
    what the host had accepted, is `accepted_*` beside it.
    """

    iops: float
    bw_bytes: float  # bytes per second
    io_bytes: int  # fio's count: the window's I/O plus those still queued when it closed
    total_ios: int
    runtime_ms: int  # the measuring window (after the ramp)
    # fio's own runtime: the window plus the wait for the I/Os still queued when it closed and,
    # on writes, the final fsync. fio divides by this, which understates a slow device at a
    # deep queue (see flashmark.bench.results); kept to show how long the device took to settle.
    fio_runtime_ms: int
    # Writes only (None for reads, and in results saved before they existed): the rate the host
    # saw completed inside the window, before the end_fsync made it durable.
    accepted_iops: float | None = None
    accepted_bw_bytes: float | None = None
    # Writes only: from the last write's completion to the end of the end_fsync, the time the
    # device took to make the data durable (a card with a volatile cache shows it here).
    fsync_ms: float | None = None
    # 95% intervals of the headline rates, from batch rates of a fraction of a second each
    # (flashmark.stats): Student t for a test of fixed length, the anytime-valid confidence
    # sequence for one that stopped on its verdict. None without a batch (or 2 batches, at or
    # past the test's floor), and in results saved before they existed. Saved as one "ci95"
    # (RateIntervals).
    bw_ci95: MeanInterval | None = field(default=None, metadata=document(saved=False))
    iops_ci95: MeanInterval | None = field(default=None, metadata=document(saved=False))
    # A test that stopped once its verdict was decided (flashmark.bench.lengths): the
    # 1 - DECISION_ALPHA confidence sequence its checks are judged on (flashmark.stats), wider
    # than `ci95`. None for a test of fixed length (judged on `ci95`), and in results saved
    # before it existed. Saved as one "decision" (RateIntervals).
    bw_decision: MeanInterval | None = field(default=None, metadata=document(saved=False))
    iops_decision: MeanInterval | None = field(default=None, metadata=document(saved=False))
    # The `sustained-write` test's write direction only (None elsewhere, and in results saved
    # before it existed): the cache and the rates either side of it.
    sustained: SustainedWrite | None = None
    lat_ns: LatencyNs
    bw_per_second: BandwidthSeries | None

    @property
    @upload_as()
    @written(before="sustained", read=functools.partial(RateIntervals.read_fields, "ci95"))
    def ci95(self) -> RateIntervals | None:
        return RateIntervals.of(self.bw_ci95, self.iops_ci95)

    @property
    @upload_as()
    @written(before="sustained", read=functools.partial(RateIntervals.read_fields, "decision"))
    def decision(self) -> RateIntervals | None:
        return RateIntervals.of(self.bw_decision, self.iops_decision)


class DisturbanceStatus(StrEnum):
    """Whether a test had the device and the host to itself (flashmark.bench.disturbance)."""

    CLEAN = "clean"  # nothing beyond the test's own I/O and its filesystem's share
    DISTURBED = "disturbed"  # another process used the device, or the CPUs were saturated
    NOT_CHECKED = "not checked"  # buffered (writeback leaves the window), no counters, replays


@uploaded
@dataclass(frozen=True, kw_only=True)
class Disturbance:
    """What the device did beyond the test's own I/O over its fio runs (their windows and final
    flushes), and how starved the host's CPUs were meanwhile (flashmark.bench.disturbance). A
    disturbed test passes or fails no grade: its checks are "uncertain" for `reason`."""

    status: DisturbanceStatus
    # Disturbed: what and where, e.g. "another process wrote 3.1 MB/s to mmcblk0 during
    # rand-write-4k"; not checked: why, e.g. "not checked (buffered)"; clean: "".
    # Why not clean is flashmark's own sentence, which names the whole disk (as "path" does
    # for a device) and is screened like every text.
    reason: str = field(default="", metadata=_MADE_TEXT)
    # the whole disk whose counters were compared, e.g. "mmcblk0"
    device: str | None = field(default=None, metadata=_KERNEL_NAME)
    # The device's I/O beyond the test's own, per second of its windows (the worst run's);
    # None when not checked.
    read_bytes_per_s: float | None = field(default=None, metadata=document(digits=0))
    write_bytes_per_s: float | None = field(default=None, metadata=document(digits=0))
    read_requests_per_s: float | None = field(default=None, metadata=document(digits=1))
    write_requests_per_s: float | None = field(default=None, metadata=document(digits=1))
    # Share of the window some task waited for a CPU (/proc/pressure/cpu "some", percent);
    # None when the kernel has no pressure information.
    cpu_some_pct: float | None = field(default=None, metadata=document(digits=1))
    # Share of the window fio's threads waited on a run queue (/proc/PID/task/TID/schedstat);
    # None where it cannot be read (then the pressure decides). Past 20% the test was starved.
    fio_cpu_wait_pct: float | None = field(default=None, metadata=document(digits=1))
    retries: int = 0  # runs of the test again after a disturbance ended


@uploaded
@dataclass(frozen=True, kw_only=True)
class TestResult:
    __test__: ClassVar[bool] = False  # not a pytest test class

    spec: TestSpec = field(metadata=document(flatten=True))  # its keys are the test's
    # wall time of the fio invocation, ramp and fsync included
    elapsed_s: float = field(metadata=document(digits=3))
    # Wall time of this test's fio runs whose windows are not in the result
    # (flashmark.bench.lengths):
    # a first window that was not enough and was measured again or left out as still settling,
    # windows set aside for a run at full length, a run at once that held too few transfers.
    # elapsed_s + discarded_s is all the time the test took.
    discarded_s: float = field(default=0.0, metadata=document(digits=3))
    # Why the test measured longer than a short first window, extended or at its full length
    # (flashmark.bench.lengths: the first was not enough, or an earlier test found the device
    # bursty); None when its first window was enough or lengths were fixed (--runtime).
    lengthened: str | None = field(default=None, metadata=_MADE_TEXT)
    read: DirectionResult | None
    write: DirectionResult | None
    # The exact fio job file, re-runnable with plain fio; of a test extended
    # (flashmark.bench.lengths), its windows' job files in order, each after the one before
    # (stonewall). It names the test file and fio's log folder: the test's name, pattern,
    # block size and depth with the settings and flashmark's version make it again.
    job_file: str = field(metadata=upload(Withheld(), document(key="job")))
    # what the device saw meanwhile (/proc/diskstats)
    monitor: MonitorSeries | None = field(default=None, metadata=document(key="device_activity"))
    # Whether the device and the host were the test's own meanwhile (None: results saved
    # before the check existed).
    disturbance: Disturbance | None = None

    def direction(self, name: str) -> DirectionResult | None:
        """Its "read" side, or else its "write" side (None where the test has none)."""
        return self.read if name == "read" else self.write


@uploaded
@dataclass(frozen=True)
class Check:
    """One threshold of a grade: value vs threshold, with the margin and the method."""

    name: str = field(metadata=upload(_words("CHECK_NAMES").or_withheld()))  # "random 4K read"
    test: str = field(metadata=upload(TEST_NAME))  # the test it reads, e.g. "rand-read-4k"
    metric: str = field(
        metadata=upload(OneOf("read_iops", "write_iops", "write_bw_bytes", "write_busy_ms"))
    )
    unit: str = field(metadata=upload(OneOf("IOPS", "MB/s", "ms")))
    threshold: float  # in `unit`
    value: float | None  # in `unit`; None when the test did not run
    margin_pct: float | None  # (value - threshold) / threshold * 100
    # True only for verdict "pass"; None when the test did not run
    passed: bool | None = field(metadata=document(key="pass"))
    # pass / fail / uncertain by the value's 95% interval (flashmark.stats.judge); without an
    # interval (too few samples, old documents) by the value alone. None when not measured.
    verdict: Verdict | None = None
    # The value's 95% interval in `unit` (low, high); None without one. For a minimum or a
    # maximum (the speed classes' slowest sub-unit, longest write busy) the bounds the log's
    # resolution allows (flashmark.bench.speed_class_rate), not a confidence interval.
    interval: tuple[float, float] | None = None
    # False: the value must be at least the threshold; True: at most (a busy-time limit). The
    # margin is then (threshold - value) / threshold * 100: positive is headroom either way.
    at_most: bool = False


@uploaded
@dataclass(frozen=True, kw_only=True)
class Grade:
    name: str  # "A1", "A2", "C10", "U1", "U3", "V30": the key of the run's grades
    title: str = field(metadata=upload(_words("GRADE_TITLES").or_withheld()))
    # True only for verdict "pass"; None: not every check could be measured (e.g. read-only
    # run) and none clearly failed.
    passed: bool | None = field(metadata=document(key="pass"))
    # "fail" if a check's interval lies wholly below its threshold; else None if a check was
    # not measured; else "uncertain" if a check's interval contains its threshold; else "pass".
    verdict: Verdict | None = None
    # Why a grade is uncertain: which check straddles which threshold ("" otherwise).
    verdict_reason: str = field(default="", metadata=_MADE_TEXT)
    note: str = field(default="", metadata=upload(_words("GRADE_NOTES").or_withheld()))
    source: str = field(metadata=upload(_words("GRADE_SOURCES").or_withheld()))
    checks: tuple[Check, ...]


@uploaded
@dataclass(frozen=True)
class HostInfo:
    """The minimum needed to read a number later; `flashmark probe` records much more."""

    hostname: str = field(metadata=upload(Withheld()))
    kernel: str = field(metadata=upload(KERNEL_RELEASE.or_withheld()))
    machine: str = field(metadata=upload(Matching(r"[a-z0-9_]{1,16}").or_withheld()))
    python: str = field(metadata=upload(VERSION.or_withheld()))


@uploaded
@dataclass(frozen=True)
class FioInfo:
    version: str = field(  # e.g. "fio-3.33"
        metadata=upload(Matching(r"fio-[0-9][0-9A-Za-z.+~_-]{0,31}").or_withheld())
    )
    # argv of one test's invocation, with the job file's and the output's paths
    command: tuple[str, ...] = field(metadata=upload(Always(())))


@uploaded
@dataclass(frozen=True)
class PassportPoint:
    """One point of a card passport (flashmark.bench.passport): a finding with its evidence and the
    source of the rule behind it."""

    topic: str = field(metadata=upload(OneOf("identity", "capacity", "classes", "host")))
    status: str = field(metadata=upload(OneOf("ok", "suspicious", "fake", "unknown", "info")))
    text: str = field(metadata=upload(MADE_TEXT))
    evidence: str = field(metadata=upload(Always("")))  # quotes the serial (PSN 0x...)
    source: str = field(metadata=_MADE_TEXT)


@uploaded
@dataclass(frozen=True)
class Passport:
    """A card's passport: one verdict from everything flashmark knows about the card
    (computed by flashmark.bench.passport; plain data here so that Run can carry it)."""

    device: str = field(metadata=_KERNEL_NAME)
    # the whole CID register, lower-case hex: how the card is recognised (its serial included)
    cid: str | None = field(metadata=upload(Always(None)))
    verdict: str = field(
        metadata=upload(OneOf("fake", "suspicious", "no sign of a fake", "unknown"))
    )
    # An upload sends the verdict and its points without their evidence, which quotes the
    # serial number and this history's result ids.
    points: tuple[PassportPoint, ...] = field(
        metadata=upload(ListOf(Fields(PassportPoint), drop=True))
    )
    # history ids of earlier results of this card (by CID)
    seen_before: tuple[int, ...] = field(metadata=upload(Always(())))
