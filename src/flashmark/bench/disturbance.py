"""Know when the device was not ours: a test's fio runs compared with what the device did
meanwhile, and how long fio waited for a CPU.

While a test runs, the whole disk under the target (mmcblk0 for a folder on mmcblk0p2: a writer
on another partition of the same card takes the same card's time) is sampled every
SAMPLE_EVERY_S, with fio's own wait for a CPU and the host's CPU pressure. Each fio run's window
(fio's own runtime: from the end of its ramp to the end of its final flush, which ends at fio's
report, `timestamp_ms`) is cut out of the samples, and the device's sectors and requests
completed in it are compared with fio's own bytes and I/Os per direction: its per-I/O log's
completions, placed on the samples' clock (`aligned`), else its JSON's io_bytes and
total_ios. What is left beyond the test's own I/O and its filesystem's share is another
process's; past the bounds below the test was disturbed, and its checks are "uncertain"
(grading.classes), after up to RETRIES runs again once the device has been quiet
(`RetryBudget.wait_for_quiet`).

Not checked: buffered runs (writeback moves the device's writes outside the window), targets
without a block device (tmpfs, overlay, network), recorded fio outputs (their windows are not
now). The CPUs are not checked where neither fio's schedstat nor /proc/pressure can be read.
docs/methodology.md, "Know when the device was not ours".
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import astuple, dataclass
from typing import Any

import psutil

from flashmark.bench.model import Disturbance, DisturbanceStatus, Target
from flashmark.errors import FioOutputError, FlashmarkError
from flashmark.fio.runner import DelegatingRunner, FioOutput, FioRunner
from flashmark.fio.window import Completion, completions_by_direction
from flashmark.system.diskstats import (
    SECTOR_BYTES,
    DiskCounters,
    normalise_device_name,
    read_device_counters,
)
from flashmark.system.mounts import mount_of, read_mounts
from flashmark.system.sysroot import SystemRoots
from flashmark.units import KiB, format_rate

# How often the device's counters and the CPU pressure are read during a test: a window is cut
# out of the samples by interpolation, so its edges are exact to the rate within one step; ten
# reads of two small procfs files a second cost well under 1% of a core.
SAMPLE_EVERY_S = 0.1

# Bounds on the device's I/O beyond the test's own, per second of the window, past which the
# test was disturbed. What must be named: a writer of 1 MB/s, or of 10% of the test's rate. What
# must not: a journald-like writer of ~20 kB/s on the same disk (buffered appends, written back
# in bursts every 5 s: ext4's commit interval, ext4(5) "commit"; a 5 s burst of ~100 kB plus its
# journal blocks in a 2 s window is ~60 kB/s), and the filesystem's own share (`allowance`).
# - FLOOR_BPS 128 kB/s: twice such a burst in a 2 s window, six times the writer's mean.
# - SHARE 3% of the test's rate: a third of the 10% that must be named, since a writer sharing
#   the device gets less than its own rate: one of 10% of a 4 KiB random-write test, inside the
#   same card's throttle, measured 7 to 8% of the test's rate (benchmarks/disturbance.py).
# - CEILING_BPS 500 kB/s: half the 1 MB/s that must be named, however fast the test.
# A bound is max(FLOOR, min(SHARE * rate, CEILING)) on top of the allowance: a writer at 10% of
# a test slower than 1.28 MB/s stays under the floor (at 500 IOPS of 4 KiB the requests tell).
FLOOR_BPS = 128_000
SHARE = 0.03
CEILING_BPS = 500_000
# Requests beyond the test's own, per second: a writer of small requests at 10% of a 4 KiB
# random test's IOPS is a few hundred kB/s, under the byte bound; its requests are not. Counted
# only for tests of small blocks (REQUESTS_MAX_BLOCK): a large request is split by the device's
# max_sectors_kb and btrfs's extents (a 1 MiB fio write was 2 device writes on ext4 over a
# loop device, 18 on btrfs), which no count of fio's foresees. The journald-like writer's burst
# is a few merged requests.
FLOOR_REQUESTS = 20.0
REQUESTS_MAX_BLOCK = 64 * KiB

# The filesystem's share of a test's own writes, which the device writes beside them: journal
# blocks of ext4's unwritten-extent conversions, btrfs's copy-on-write metadata (checksum and
# extent trees) and its log tree at the final fsync. Calibrated on idle loop devices (direct
# I/O, 2 s windows, random 4 KiB and sequential 1 MiB writes; docs/methodology.md): ext4 wrote
# 19 bytes and 0.0002 requests per fio write beyond the data, btrfs 227 bytes and 0.014
# requests (random 4 KiB), 1.7 kB and 16 split requests (sequential 1 MiB, requests not
# counted): 0.16% of btrfs's bytes, 0.01% of ext4's. The allowances are three to ten times
# those, and as btrfs's for filesystems not calibrated; a block device has no filesystem. The
# share of bytes stays small: at 100 MB/s on ext4 it allows 100 kB/s, so a 1 MB/s writer is
# still named (on btrfs it allows 500 kB/s: from 100 MB/s up, a 1 MB/s writer may pass).


@dataclass(frozen=True)
class FilesystemShare:
    bytes_per_write: float
    requests_per_write: float
    of_bytes: float  # of the bytes written: the sequential writes' metadata


FILESYSTEM_SHARES = {
    **dict.fromkeys(("ext2", "ext3", "ext4", "xfs"), FilesystemShare(64, 0.01, 0.001)),
    "btrfs": FilesystemShare(1024, 0.06, 0.005),
    "device": FilesystemShare(0, 0.0, 0.0),
}
OTHER_FILESYSTEM_SHARE = FilesystemShare(1024, 0.06, 0.005)  # f2fs, any other not calibrated

# The host. fio's own threads' time waiting on a run queue (/proc/PID/task/TID/schedstat,
# "run_delay": Documentation/scheduler/sched-stats.rst) is time fio could not submit: at queue
# depth 1 the rate falls by about that share. Past FIO_WAIT_PCT of the window the test was
# starved. On a 2-core host shared with other test suites fio waited 0.4 to 1.1% of a window in
# single runs, more at times (benchmarks/disturbance.py, docs/methodology.md). Where schedstat
# is not readable, "some" CPU pressure (/proc/pressure/cpu, Documentation/accounting/psi.rst:
# the share of time at least one runnable task waited for a CPU) decides instead: at
# CPU_SOME_PCT some task waited four fifths of the window (1 to 23% on the same shared host
# during runs; pressure says nothing of whose task waited, hence the high bound). With
# neither, the CPUs are not checked.
FIO_WAIT_PCT = 20.0
CPU_SOME_PCT = 80.0
_FIO_SCAN_EVERY_S = 1.0  # how often fio's processes are looked for among flashmark's children

# Runs again after a disturbance: each waits for the device to be quiet (QUIET_S without I/O
# beyond the floors, the CPU pressure under its bound), at most QUIET_WAIT_S; the waits of a
# whole run are bounded by RUN_WAIT_BUDGET_S, so a writer that never stops costs a run at most
# that much more than its tests.
RETRIES = 2
QUIET_S = 2.0
QUIET_WAIT_S = 10.0
RUN_WAIT_BUDGET_S = 60.0
# A smaller budget, in seconds (0: measure on at once). For the test suite, whose own load keeps
# a 2-core host's CPUs saturated: its runs that judge no figure would otherwise wait out the
# whole budget in every run (tests/conftest.py).
WAIT_BUDGET_ENV = "FLASHMARK_QUIET_WAIT_BUDGET_S"

# fio's report comes after its window (timestamp_ms is taken when the JSON is written,
# github.com/axboe/fio/issues/1176; fio 3.36's job_start is not in Debian 12's 3.33): its time
# less its runtime places the window late by that lag (15 ms on a quiet host, 100 ms and more
# behind busy CPUs), and the test's own completions there would pass for another's (a 20 MB/s
# test loses 2 MB to a 100 ms lag). The lag, at most MAX_REPORT_LAG_MS, is the shift that best
# lines the test's per-I/O log up with the device's samples (`aligned`); a little below 0 too,
# as fio logs a completion when it reaps it, after the device counted it.
MAX_REPORT_LAG_MS = 300
MIN_REPORT_LAG_MS = -20
_LAG_PROBE_STEPS = 20  # sample steps at each end of a window that the lag is fitted on

_COUNTER_WRAP = 2**32  # diskstats counters are unsigned long: 32 bits on 32-bit boards


@dataclass(frozen=True)
class DeviceSample:
    """The device's counters at one moment, cumulative since sampling started; or, cut out of
    them, their growth over a window (`at` its length)."""

    at: float  # wall clock (time.time): fio's timestamp_ms is one too
    read_bytes: int  # cumulative since sampling started, wraps undone
    write_bytes: int
    reads: int
    writes: int
    cpu_some_us: int | None  # /proc/pressure/cpu "some" total, None without one
    fio_wait_ns: int | None  # fio's threads' run_delay since sampling started, None unread

    def since(self, first: DeviceSample) -> DeviceSample:
        """The growth of every counter from `first` to this one, `at` the time between."""
        return _combined(first, self, self.at - first.at, lambda a, b: b - a)


def _combined(
    one: DeviceSample, two: DeviceSample, at: float, counter: Callable[[int, int], int]
) -> DeviceSample:
    """A sample at `at` whose every counter is `counter` of `one`'s and `two`'s; None where
    either has none."""
    counters = zip(astuple(one)[1:], astuple(two)[1:], strict=True)
    values: list[Any] = [None if None in pair else counter(*pair) for pair in counters]
    return DeviceSample(at, *values)


def _grown(before: int, after: int) -> int:
    return after - before if after >= before else (after - before) % _COUNTER_WRAP


def read_cpu_some_us(roots: SystemRoots) -> int | None:
    """The "some" line's total of /proc/pressure/cpu in microseconds; None without it."""
    text = roots.read_proc("pressure/cpu")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("some "):
            for field in line.split()[1:]:
                key, _, value = field.partition("=")
                if key == "total" and value.isdigit():
                    return int(value)
    return None


class CounterSampler:
    """The disk's counters and the CPU pressure, sampled every SAMPLE_EVERY_S by a thread from
    `start` to `stop`; `between` cuts a window out of them."""

    def __init__(self, device: str, roots: SystemRoots, every_s: float = SAMPLE_EVERY_S) -> None:
        self.device = device
        self.roots = roots
        self.every_s = every_s
        self.samples: list[DeviceSample] = []
        self._last: DiskCounters | None = None
        self._fio_pids: list[int] = []
        self._fio_scanned_at = float("-inf")
        self._fio_threads: dict[int, int] = {}  # tid -> its last run_delay
        self._fio_wait_ns: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> None:
        counters = read_device_counters(self.roots, self.device)
        cpu = read_cpu_some_us(self.roots)
        fio_wait = self._read_fio_wait()
        now = time.time()
        if self._last is None or not self.samples:
            self.samples.append(DeviceSample(now, 0, 0, 0, 0, cpu, fio_wait))
        else:
            last, previous = self.samples[-1], self._last
            self.samples.append(
                DeviceSample(
                    now,
                    last.read_bytes
                    + _grown(previous.sectors_read, counters.sectors_read) * SECTOR_BYTES,
                    last.write_bytes
                    + _grown(previous.sectors_written, counters.sectors_written) * SECTOR_BYTES,
                    last.reads + _grown(previous.reads, counters.reads),
                    last.writes + _grown(previous.writes, counters.writes),
                    cpu,
                    fio_wait,
                )
            )
        self._last = counters

    def _read_fio_wait(self) -> int | None:
        """fio's threads' run_delay summed since first seen (a thread's growth only: one that
        ended takes nothing back); None until a fio thread was read."""
        now = time.monotonic()
        if now - self._fio_scanned_at >= _FIO_SCAN_EVERY_S:
            self._fio_scanned_at = now
            with contextlib.suppress(psutil.Error):
                self._fio_pids = [
                    child.pid
                    for child in psutil.Process().children(recursive=True)
                    if child.name() == "fio"
                ]
        for pid in self._fio_pids:
            try:
                tids = os.listdir(self.roots.proc_path(f"{pid}/task"))
            except OSError:
                continue
            for tid in tids:
                text = self.roots.read_proc(f"{pid}/task/{tid}/schedstat")
                fields = text.split() if text else []
                if len(fields) < 2 or not fields[1].isdigit():
                    continue
                delay, key = int(fields[1]), int(tid)
                before = self._fio_threads.get(key)
                self._fio_threads[key] = delay
                if self._fio_wait_ns is None:
                    self._fio_wait_ns = 0
                if before is not None and delay > before:
                    self._fio_wait_ns += delay - before
        return self._fio_wait_ns

    def start(self) -> None:
        self._read()  # raises when the device has no diskstats line: then nothing is checked
        self._thread = threading.Thread(target=self._loop, name="disturbance", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            with contextlib.suppress(FlashmarkError):
                self._read()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with contextlib.suppress(FlashmarkError):
            self._read()

    def between(self, start: float, end: float) -> DeviceSample | None:
        """The growth of every counter from `start` to `end` (interpolated between samples),
        its `at` the window's length; None when the samples do not cover the window."""
        samples = self.samples
        if len(samples) < 2 or start < samples[0].at or end > samples[-1].at or end <= start:
            return None
        first, last = _at(samples, start), _at(samples, end)
        return last.since(first)


def _at(samples: list[DeviceSample], moment: float) -> DeviceSample:
    """The counters at `moment`, linear between the samples either side (a constant rate
    within one step); the CPU total likewise."""
    after = next(index for index, sample in enumerate(samples) if sample.at >= moment)
    if after == 0:
        return samples[0]
    one, two = samples[after - 1], samples[after]
    part = (moment - one.at) / (two.at - one.at) if two.at > one.at else 1.0
    return _combined(one, two, moment, lambda a, b: round(a + (b - a) * part))


@dataclass(frozen=True)
class FioCounts:
    """One fio run's own I/O in its window, and the window in wall-clock seconds."""

    read_bytes: int
    write_bytes: int
    reads: int
    writes: int
    start: float
    end: float


def fio_counts(output: FioOutput, returned_at: float) -> FioCounts | None:
    """fio's bytes and I/Os per direction from its JSON, and its window: from its report's
    time less its runtime (the window after the ramp, and the final flush) to when it
    returned. None when the output has no usable JSON."""
    try:
        data = json.loads(output.json_text)
        stamp_s = float(data["timestamp_ms"]) / 1000.0
        parts = [job[direction] for job in data["jobs"] for direction in ("read", "write")]
        read_bytes, write_bytes, reads, writes = (
            sum(int(part[key]) for part in parts[side::2])
            for key in ("io_bytes", "total_ios")
            for side in (0, 1)
        )
        runtime_ms = max((int(part["runtime"]) for part in parts), default=0)
    except (ValueError, KeyError, TypeError):
        return None
    if runtime_ms <= 0:
        return None
    start = stamp_s - runtime_ms / 1000.0
    return FioCounts(read_bytes, write_bytes, reads, writes, start, max(returned_at, stamp_s))


class _OwnIO:
    """One direction's completions from fio's per-I/O log, as running totals to count any
    stretch of time by bisection."""

    def __init__(self, completions: list[Completion]) -> None:
        self.times_s = [c.time_ms / 1000.0 for c in completions]
        self.bytes_before = list(itertools.accumulate((c.bytes for c in completions), initial=0))

    def upto(self, seconds: float) -> tuple[int, int]:
        """Bytes and I/Os completed by `seconds` after the window's start."""
        done = bisect.bisect_right(self.times_s, seconds)
        return self.bytes_before[done], done

    def between(self, start: float, end: float) -> tuple[int, int]:
        """Bytes and I/Os completed after `start` and by `end`."""
        (bytes_start, ios_start), (bytes_end, ios_end) = self.upto(start), self.upto(end)
        return bytes_end - bytes_start, ios_end - ios_start


def aligned(
    counts: FioCounts, output: FioOutput, sampler: CounterSampler
) -> tuple[FioCounts, DeviceSample] | None:
    """fio's own I/O and the device's between the first and the last sample inside the run's
    window, fio's completions placed on the samples' clock by the report's lag (see
    MAX_REPORT_LAG_MS): the lag that leaves the device's I/O beyond fio's, sample step by
    sample step, most even. Whole samples, not interpolated: a device completes in bursts
    (a throttle's slices, a card's cache), and a burst cut by an edge is not spread evenly.
    None without a per-I/O log or three samples inside the window."""
    try:
        completions = completions_by_direction(output.logs)
    except FioOutputError:
        return None
    reads, writes = _OwnIO(completions.get(0, [])), _OwnIO(completions.get(1, []))
    if not reads.times_s and not writes.times_s:
        return None
    inside = [s for s in sampler.samples if counts.start <= s.at <= counts.end]
    if len(inside) < 3:
        return None

    def own_bytes(start_s: float, at: float) -> int:
        return reads.upto(at - start_s)[0] + writes.upto(at - start_s)[0]

    device = [s.read_bytes + s.write_bytes for s in inside]
    steps = list(range(len(inside) - 1))
    if len(steps) > 2 * _LAG_PROBE_STEPS:  # a long window: its ends tell the lag
        steps = steps[:_LAG_PROBE_STEPS] + steps[-_LAG_PROBE_STEPS:]
    probed = sorted({k for step in steps for k in (step, step + 1)})
    best: tuple[float, float] | None = None  # (spread, window start)
    for lag_ms in range(MIN_REPORT_LAG_MS, MAX_REPORT_LAG_MS + 1):
        start_s = counts.start - lag_ms / 1000.0
        done = {k: own_bytes(start_s, inside[k].at) for k in probed}
        beyond = [device[k + 1] - device[k] - done[k + 1] + done[k] for k in steps]
        mean = sum(beyond) / len(beyond)
        spread = sum((b - mean) ** 2 for b in beyond)
        if best is None or spread < best[0]:
            best = (spread, start_s)
    assert best is not None
    start_s = best[1]
    first, last = inside[0], inside[-1]
    (read_bytes, read_ios), (write_bytes, write_ios) = (
        own_io.between(first.at - start_s, last.at - start_s) for own_io in (reads, writes)
    )
    own = FioCounts(read_bytes, write_bytes, read_ios, write_ios, first.at, last.at)
    return own, last.since(first)


@dataclass(frozen=True)
class _Excess:
    """One run's I/O beyond the test's own and what it is allowed, per second of its window."""

    read_bps: float
    write_bps: float
    reads_per_s: float
    writes_per_s: float
    cpu_some_pct: float | None
    fio_wait_pct: float | None
    over: tuple[str, ...]  # what passed its bound, in words ("wrote 3.1 MB/s to")
    starved: bool


def byte_bound(test_bps: float) -> float:
    """The foreign bytes per second past which a test at `test_bps` was disturbed (on top of
    its filesystem's allowance): see FLOOR_BPS."""
    return max(FLOOR_BPS, min(SHARE * test_bps, CEILING_BPS))


def request_bound(test_iops: float) -> float:
    return max(FLOOR_REQUESTS, SHARE * test_iops)


def _excess(counts: FioCounts, device: DeviceSample, filesystem: str, block_bytes: int) -> _Excess:
    seconds = device.at
    test_bps = (counts.read_bytes + counts.write_bytes) / seconds
    test_iops = (counts.reads + counts.writes) / seconds
    share = FILESYSTEM_SHARES.get(filesystem, OTHER_FILESYSTEM_SHARE)
    write_allowance = share.bytes_per_write * counts.writes + share.of_bytes * counts.write_bytes
    request_allowance = share.requests_per_write * counts.writes
    read_bps = max(0, device.read_bytes - counts.read_bytes) / seconds
    write_bps = max(0, device.write_bytes - counts.write_bytes) / seconds
    reads_per_s = max(0, device.reads - counts.reads) / seconds
    writes_per_s = max(0, device.writes - counts.writes) / seconds
    over = []
    bound = byte_bound(test_bps)
    if write_bps > bound + write_allowance / seconds:
        over.append(f"wrote {format_rate(write_bps)} to")
    if read_bps > bound:
        over.append(f"read {format_rate(read_bps)} from")
    if block_bytes <= REQUESTS_MAX_BLOCK and not over:
        requests = request_bound(test_iops)
        if writes_per_s > requests + request_allowance / seconds:
            over.append(f"made {writes_per_s:.0f} write requests/s to")
        if reads_per_s > requests:
            over.append(f"made {reads_per_s:.0f} read requests/s from")
    cpu = None if device.cpu_some_us is None else device.cpu_some_us / 1e6 / seconds * 100
    fio_wait = None if device.fio_wait_ns is None else device.fio_wait_ns / 1e9 / seconds * 100
    if fio_wait is not None:
        starved = fio_wait >= FIO_WAIT_PCT
    else:
        starved = cpu is not None and cpu >= CPU_SOME_PCT
    return _Excess(
        read_bps, write_bps, reads_per_s, writes_per_s, cpu, fio_wait, tuple(over), starved
    )


class _RecordingRunner(DelegatingRunner):
    """`runner`, noting each run's output and when it returned."""

    def __init__(self, runner: FioRunner, runs: list[tuple[FioOutput, float]]) -> None:
        super().__init__(runner)
        self.runs = runs

    def ran(self, output: FioOutput) -> None:
        self.runs.append((output, time.time()))


def not_checked(reason: str, device: str | None = None) -> Disturbance:
    return Disturbance(status=DisturbanceStatus.NOT_CHECKED, reason=reason, device=device)


class TestWatch:
    """One attempt of one test: the device sampled while it runs (`watching`), its fio runs
    recorded (`runner`), and `judged` against them."""

    __test__ = False  # not a pytest test class

    def __init__(
        self, test: str, device: str, roots: SystemRoots, filesystem: str, block_bytes: int
    ) -> None:
        self.test = test
        self.device = device
        self.filesystem = filesystem
        self.block_bytes = block_bytes
        self.sampler = CounterSampler(device, roots)
        self.runs: list[tuple[FioOutput, float]] = []
        self.problem: str | None = None

    def runner(self, runner: FioRunner) -> FioRunner:
        return _RecordingRunner(runner, self.runs)

    @contextlib.contextmanager
    def watching(self) -> Iterator[TestWatch]:
        try:
            self.sampler.start()
        except FlashmarkError:  # the monitor's warning says why (bench/measure.py)
            self.problem = f"not checked (no counters of {self.device} in /proc/diskstats)"
            yield self
            return
        try:
            yield self
        finally:
            self.sampler.stop()

    def judged(self, retries: int) -> Disturbance:
        """Disturbed when any of the test's fio runs was (its worst run's figures); clean
        when all were checked and none was."""
        if self.problem is not None:
            return not_checked(self.problem, self.device)
        worst: _Excess | None = None
        for output, returned_at in self.runs:
            counts = fio_counts(output, returned_at)
            device = None if counts is None else self.sampler.between(counts.start, counts.end)
            if counts is not None and device is not None:
                counts, device = aligned(counts, output, self.sampler) or (counts, device)
            if counts is None or device is None:
                return not_checked(
                    "not checked (fio's window is not in the device's samples: a recorded run)",
                    self.device,
                )
            excess = _excess(counts, device, self.filesystem, self.block_bytes)
            if worst is None or _rank(excess) > _rank(worst):
                worst = excess
        if worst is None:
            return not_checked("not checked (no fio run)", self.device)
        reasons = []
        if worst.over:
            reasons.append(
                f"another process {' and '.join(worst.over)} {self.device} during {self.test}"
            )
        if worst.starved and worst.fio_wait_pct is not None:
            reasons.append(
                f"the host's CPUs were busy during {self.test}: fio waited for a CPU "
                f"{worst.fio_wait_pct:.0f}% of the time"
            )
        elif worst.starved:
            reasons.append(
                f"the host's CPUs were saturated during {self.test}: a task waited for a CPU "
                f"{worst.cpu_some_pct:.0f}% of the time (/proc/pressure/cpu)"
            )
        cpu_note = ""
        if worst.fio_wait_pct is None and worst.cpu_some_pct is None:
            cpu_note = "CPUs not checked (no schedstat, no /proc/pressure/cpu)"
        return Disturbance(
            status=DisturbanceStatus.DISTURBED if reasons else DisturbanceStatus.CLEAN,
            reason="; ".join(reasons) or cpu_note,
            device=self.device,
            read_bytes_per_s=worst.read_bps,
            write_bytes_per_s=worst.write_bps,
            read_requests_per_s=worst.reads_per_s,
            write_requests_per_s=worst.writes_per_s,
            cpu_some_pct=worst.cpu_some_pct,
            fio_cpu_wait_pct=worst.fio_wait_pct,
            retries=retries,
        )


def _rank(excess: _Excess) -> tuple[bool, float]:
    return (bool(excess.over) or excess.starved, excess.read_bps + excess.write_bps)


class RetryBudget:
    """The run's waits for quiet after a disturbance, bounded by RUN_WAIT_BUDGET_S."""

    def __init__(self) -> None:
        self.left_s = RUN_WAIT_BUDGET_S
        with contextlib.suppress(ValueError):
            self.left_s = min(self.left_s, float(os.environ.get(WAIT_BUDGET_ENV, self.left_s)))

    def wait_for_quiet(
        self,
        device: str,
        roots: SystemRoots,
        say: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> bool:
        """Watch the device until it has been quiet for QUIET_S (nothing beyond the floors:
        nothing of flashmark's runs meanwhile) and the CPUs unstarved; False when that took
        longer than QUIET_WAIT_S or the run's budget."""
        limit = min(QUIET_WAIT_S, self.left_s)
        if limit < QUIET_S:
            return False
        sampler = CounterSampler(device, roots)
        started = clock()
        quiet_since = started
        try:
            sampler.start()
        except FlashmarkError:
            return False
        try:
            while (waited := clock() - started) < limit:
                say(f"the device or the CPUs were busy: waiting for quiet ({waited:.0f} s)")
                time.sleep(0.5)
                latest = sampler.samples[-1].at
                window = sampler.between(latest - 0.5, latest)
                if window is None:
                    continue
                if _busy(window):
                    quiet_since = clock()
                elif clock() - quiet_since >= QUIET_S:
                    return True
            return False
        finally:
            sampler.stop()
            self.left_s -= clock() - started


def _busy(window: DeviceSample) -> bool:
    seconds = window.at
    cpu = None if window.cpu_some_us is None else window.cpu_some_us / 1e6 / seconds * 100
    return (
        (window.read_bytes + window.write_bytes) / seconds > FLOOR_BPS
        or (window.reads + window.writes) / seconds > FLOOR_REQUESTS
        or (cpu is not None and cpu >= CPU_SOME_PCT)
    )


def target_disk(target: Target, device: str | None, roots: SystemRoots) -> str | None:
    """The whole disk under the target, from its diskstats `device` when known, else from its
    mount's source: a btrfs folder's st_dev is an anonymous device (0:N), which no diskstats
    line names. None on no block device (tmpfs, overlay, network)."""
    if device is None and target.folder:
        mount = mount_of(os.path.realpath(target.folder), read_mounts(roots))
        if mount is not None and mount.source.startswith("/dev/"):
            device = normalise_device_name(mount.source)
    return None if device is None else whole_disk(device, roots)


def whole_disk(device: str, roots: SystemRoots) -> str:
    """The disk a partition belongs to (mmcblk0p2 -> mmcblk0): another partition's I/O takes
    the same device's time."""
    return roots.disk_of(device) or device
