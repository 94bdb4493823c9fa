"""An iostat equivalent built on /proc/diskstats: what the device itself saw, interval by interval.

Seed 002 explains install times with `iostat 20`: the tps column pinned near the card's random
write IOPS while kB/s stayed low. This module records the same figures for one device while a
test or workload runs, as a time series (one `MonitorSample` per interval) plus summaries of the
whole run and of named phases.

Formats (Documentation/admin-guide/iostats.rst and Documentation/ABI/testing/procfs-diskstats,
https://www.kernel.org/doc/Documentation/admin-guide/iostats.rst): every line is
"major minor name" followed by
- 11 counters (14 fields): kernels 2.6.25 to 4.17, and every disk line since 2.6;
- 15 counters (18 fields): 4.18 added discards (completed, merged, sectors, ms);
- 17 counters (20 fields): 5.5 added flushes (completed, ms);
- 4 counters (7 fields): partition lines of 2.6.0 to 2.6.24 (reads issued, sectors read,
  writes issued, sectors written); no merges, times or queue figures exist in that format.
Any other field count is refused loudly, quoting the line.

Sectors in these files are always 512 bytes whatever the device's sector size
(Documentation/block/stat.rst: "standard UNIX 512-byte sectors"). The counters are unsigned
long (32 bits on 32-bit ARM boards, which most SBCs still run) or unsigned int, and wrap:
deltas are taken modulo 2^32 or 2^64 (iostats.rst: "applications should be prepared to deal
with it").

The sampler costs one read of /proc/diskstats per interval (benchmarks/monitor_overhead.py
measures it: well under 1% of one core at 1 s).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from flashmark.errors import EnvironmentProblem, FlashmarkError, TargetNotFound
from flashmark.sysroot import SystemRoots

# History of the `monitor --json` document (docs/workloads.md), which the history also keeps:
#   1: first version.
MONITOR_SCHEMA = "flashmark.monitor/1"

SECTOR_BYTES = 512  # Documentation/block/stat.rst: diskstats sectors are always 512 bytes
KIB = 1024

# Number of whitespace-separated fields per line for each kernel format (see module doc).
FORMAT_FIELDS = {
    7: "2.6.0-2.6.24 partition",
    14: "2.6.25-4.17",
    18: "4.18-5.4 (discards)",
    20: "5.5+ (discards, flushes)",
}

# Heuristic for "bound by random writes" (seed 002, "Looking at storage access patterns"): the
# Class 4 card installing a desktop showed ~26 tps of which nearly all writes, 500-1500 kB/s,
# i.e. 20-60 KiB per request, with the device busy all the time. Sequential writers are merged
# by the block layer into requests of 128 KiB and more (the default max_sectors_kb is 512 KiB
# or more on most hosts), so a small mean write request plus a saturated device means the
# device spent its time on small scattered writes.
RANDOM_WRITE_SHARE = 0.75  # writes / all requests
RANDOM_WRITE_MAX_REQUEST_BYTES = 64 * KIB
RANDOM_WRITE_MIN_UTIL_PCT = 60.0


class DiskstatsFormatError(FlashmarkError):
    """/proc/diskstats (or a recorded copy) has a shape no kernel has produced."""


class MonitorDeviceNotFound(TargetNotFound):
    """The device to monitor is not listed in /proc/diskstats."""


class DiskstatsUnreadable(EnvironmentProblem):
    """/proc/diskstats cannot be read (no procfs, or a moved root without the file)."""


@dataclass(frozen=True)
class DiskCounters:
    """One line of /proc/diskstats. Counters a kernel format lacks are None."""

    major: int
    minor: int
    name: str
    fields: int  # 7, 14, 18 or 20: the kernel format (FORMAT_FIELDS)
    reads: int  # completed (7-field partitions: issued)
    sectors_read: int
    writes: int
    sectors_written: int
    reads_merged: int | None = None
    read_ms: int | None = None
    writes_merged: int | None = None
    write_ms: int | None = None
    in_flight: int | None = None
    io_ms: int | None = None  # time the device had at least one request in flight
    weighted_io_ms: int | None = None  # sum of in-flight time of all requests
    discards: int | None = None
    discards_merged: int | None = None
    sectors_discarded: int | None = None
    discard_ms: int | None = None
    flushes: int | None = None
    flush_ms: int | None = None


def parse_diskstats_line(line: str) -> DiskCounters:
    parts = line.split()
    count = len(parts)
    if count not in FORMAT_FIELDS:
        raise DiskstatsFormatError(
            f"diskstats line has {count} fields, expected 7, 14, 18 or 20 "
            f"(Documentation/admin-guide/iostats.rst): {line.strip()!r}"
        )
    try:
        major, minor = int(parts[0]), int(parts[1])
        values = [int(value) for value in parts[3:]]
    except ValueError:
        raise DiskstatsFormatError(
            f"diskstats line has a field that is not a whole number: {line.strip()!r}"
        ) from None
    name = parts[2]
    if count == 7:
        return DiskCounters(
            major, minor, name, count,
            reads=values[0], sectors_read=values[1], writes=values[2], sectors_written=values[3],
        )  # fmt: skip
    extra: dict[str, int] = {}
    if count >= 18:
        extra.update(
            discards=values[11],
            discards_merged=values[12],
            sectors_discarded=values[13],
            discard_ms=values[14],
        )
    if count == 20:
        extra.update(flushes=values[15], flush_ms=values[16])
    return DiskCounters(
        major,
        minor,
        name,
        count,
        reads=values[0],
        reads_merged=values[1],
        sectors_read=values[2],
        read_ms=values[3],
        writes=values[4],
        writes_merged=values[5],
        sectors_written=values[6],
        write_ms=values[7],
        in_flight=values[8],
        io_ms=values[9],
        weighted_io_ms=values[10],
        **extra,
    )


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    """Every device of a /proc/diskstats text, by name."""
    devices: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        if line.strip():
            counters = parse_diskstats_line(line)
            devices[counters.name] = counters
    return devices


def read_diskstats(roots: SystemRoots) -> dict[str, DiskCounters]:
    text = roots.read_proc("diskstats")
    if text is None:
        raise DiskstatsUnreadable(
            f"cannot read {roots.proc_path('diskstats')}: the I/O monitor needs procfs "
            "(check FLASHMARK_PROCFS_ROOT if you moved it)"
        )
    return parse_diskstats(text)


def read_device_counters(roots: SystemRoots, device: str) -> DiskCounters:
    devices = read_diskstats(roots)
    counters = devices.get(device)
    if counters is None:
        known = ", ".join(sorted(devices)) or "none"
        raise MonitorDeviceNotFound(
            f"device {device!r} is not in {roots.proc_path('diskstats')} (devices listed: "
            f"{known}); give a name such as mmcblk0 or /dev/sda"
        )
    return counters


def normalise_device_name(device: str) -> str:
    """'/dev/mmcblk0' or a /dev/disk/by-* or /dev/mapper link -> 'mmcblk0' / 'dm-0'."""
    if device.startswith("/"):
        return Path(os.path.realpath(device)).name
    return device


def device_for_path(path: Path, roots: SystemRoots) -> str | None:
    """The diskstats name of the whole device holding `path`, or None (tmpfs, overlay, NFS).

    A partition resolves to its disk (mmcblk0p2 -> mmcblk0), as in seed 002's iostat tables:
    the card is one device whatever partition a file is on, and only the disk line counts
    flushes (iostats.rst, field 16: "Not tracked for partitions").
    """
    try:
        st_dev = os.stat(path).st_dev
    except OSError:
        return None
    major, minor = os.major(st_dev), os.minor(st_dev)
    if major == 0:  # anonymous block device: tmpfs, overlayfs, btrfs subvolumes, network
        return None
    try:
        devices = read_diskstats(roots)
    except (DiskstatsUnreadable, DiskstatsFormatError):
        return None
    name = next((c.name for c in devices.values() if (c.major, c.minor) == (major, minor)), None)
    if name is None:
        return None
    # /sys/class/block/NAME/partition exists for partitions; the parent folder is the disk.
    class_path = roots.sys_path(f"class/block/{name}")
    if (class_path / "partition").exists():
        parent = Path(os.path.realpath(class_path)).parent.name
        if parent in devices:
            return parent
    return name


def _delta(new: int | None, old: int | None) -> int | None:
    """new - old for a counter that may have wrapped at 2^32 or 2^64 (iostats.rst)."""
    if new is None or old is None:
        return None
    if new >= old:
        return new - old
    modulus = 2**32 if old < 2**32 else 2**64
    return new + modulus - old


@dataclass(frozen=True)
class MonitorSample:
    """What the device did during one interval: the columns of `iostat -x`.

    Rates are per second of the interval; bytes are bytes (iostat's kB is KiB: sectors / 2).
    Figures the kernel format lacks (7-field partitions) or that have no requests are None.
    """

    t_s: float  # end of the interval, seconds since monitoring started
    interval_s: float
    read_ios: int
    write_ios: int
    read_bytes: int
    write_bytes: int
    read_iops: float
    write_iops: float
    read_bps: float
    write_bps: float
    avg_request_bytes: float | None  # iostat's areq-sz, in bytes
    avg_read_request_bytes: float | None
    avg_write_request_bytes: float | None
    read_await_ms: float | None  # mean time of a read, queue included (iostat r_await)
    write_await_ms: float | None
    avg_queue: float | None  # mean requests in flight (iostat aqu-sz)
    util_pct: float | None  # share of the interval the device was busy (iostat %util)
    in_flight: int | None  # requests in flight at the end of the interval
    discard_ios: int | None = None
    flush_ios: int | None = None
    # Requests the block layer merged into a neighbour (iostat rrqm, wrqm): each merged request
    # adds its bytes but no completion, so bytes = request size x (ios + merges).
    read_merges: int | None = None
    write_merges: int | None = None

    @property
    def iops(self) -> float:
        """iostat's tps: completed requests per second, reads and writes."""
        return self.read_iops + self.write_iops

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MonitorSample:
        """The inverse of to_dict (its keys are the field names); absent keys are None."""
        values: dict[str, Any] = {f.name: d.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "t_s": round(self.t_s, 3),
            "interval_s": round(self.interval_s, 4),
            "read_iops": round(self.read_iops, 2),
            "write_iops": round(self.write_iops, 2),
            "read_bps": round(self.read_bps, 1),
            "write_bps": round(self.write_bps, 1),
            "read_ios": self.read_ios,
            "write_ios": self.write_ios,
            "read_bytes": self.read_bytes,
            "write_bytes": self.write_bytes,
            "avg_request_bytes": _round(self.avg_request_bytes, 1),
            "avg_read_request_bytes": _round(self.avg_read_request_bytes, 1),
            "avg_write_request_bytes": _round(self.avg_write_request_bytes, 1),
            "read_await_ms": _round(self.read_await_ms, 3),
            "write_await_ms": _round(self.write_await_ms, 3),
            "avg_queue": _round(self.avg_queue, 3),
            "util_pct": _round(self.util_pct, 2),
            "in_flight": self.in_flight,
            "discard_ios": self.discard_ios,
            "flush_ios": self.flush_ios,
            "read_merges": self.read_merges,
            "write_merges": self.write_merges,
        }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _ratio(numerator: int | None, denominator: int | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def compute_sample(
    old: DiskCounters, new: DiskCounters, interval_s: float, t_s: float
) -> MonitorSample:
    """The interval between two readings of the same device."""
    if interval_s <= 0:
        raise ValueError(f"interval must be positive, got {interval_s}")
    read_ios = _delta(new.reads, old.reads) or 0
    write_ios = _delta(new.writes, old.writes) or 0
    read_bytes = (_delta(new.sectors_read, old.sectors_read) or 0) * SECTOR_BYTES
    write_bytes = (_delta(new.sectors_written, old.sectors_written) or 0) * SECTOR_BYTES
    interval_ms = interval_s * 1000.0
    io_ms = _delta(new.io_ms, old.io_ms)
    weighted = _delta(new.weighted_io_ms, old.weighted_io_ms)
    return MonitorSample(
        t_s=t_s,
        interval_s=interval_s,
        read_ios=read_ios,
        write_ios=write_ios,
        read_bytes=read_bytes,
        write_bytes=write_bytes,
        read_iops=read_ios / interval_s,
        write_iops=write_ios / interval_s,
        read_bps=read_bytes / interval_s,
        write_bps=write_bytes / interval_s,
        avg_request_bytes=_ratio(read_bytes + write_bytes, read_ios + write_ios),
        avg_read_request_bytes=_ratio(read_bytes, read_ios),
        avg_write_request_bytes=_ratio(write_bytes, write_ios),
        read_await_ms=_ratio(_delta(new.read_ms, old.read_ms), read_ios),
        write_await_ms=_ratio(_delta(new.write_ms, old.write_ms), write_ios),
        avg_queue=None if weighted is None else weighted / interval_ms,
        # io_ms advances in jiffies and can overshoot the wall clock slightly: cap at 100%.
        util_pct=None if io_ms is None else min(100.0, 100.0 * io_ms / interval_ms),
        in_flight=new.in_flight,
        discard_ios=_delta(new.discards, old.discards),
        flush_ios=_delta(new.flushes, old.flushes),
        read_merges=_delta(new.reads_merged, old.reads_merged),
        write_merges=_delta(new.writes_merged, old.writes_merged),
    )


@dataclass(frozen=True)
class MonitorSummary:
    """A whole run (or phase) of one device: seed 002's iostat table condensed to a verdict."""

    seconds: float
    read_ios: int
    write_ios: int
    read_bytes: int
    write_bytes: int
    read_iops: float  # mean over the whole span
    write_iops: float
    read_bps: float
    write_bps: float
    peak_read_iops: float | None  # highest interval, when there are samples
    peak_write_iops: float | None
    avg_read_request_bytes: float | None
    avg_write_request_bytes: float | None
    write_share_ops: float | None  # writes / all requests
    write_share_bytes: float | None
    util_pct: float | None
    avg_queue: float | None
    flush_ios: int | None
    random_write_bound: bool | None  # None: cannot tell (no I/O, or no busy-time counter)
    verdict: str  # the reasons, in words

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MonitorSummary:
        values: dict[str, Any] = {f.name: d.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "read_ios": self.read_ios,
            "write_ios": self.write_ios,
            "read_bytes": self.read_bytes,
            "write_bytes": self.write_bytes,
            "read_iops": round(self.read_iops, 2),
            "write_iops": round(self.write_iops, 2),
            "read_bps": round(self.read_bps, 1),
            "write_bps": round(self.write_bps, 1),
            "peak_read_iops": _round(self.peak_read_iops, 2),
            "peak_write_iops": _round(self.peak_write_iops, 2),
            "avg_read_request_bytes": _round(self.avg_read_request_bytes, 1),
            "avg_write_request_bytes": _round(self.avg_write_request_bytes, 1),
            "write_share_ops": _round(self.write_share_ops, 4),
            "write_share_bytes": _round(self.write_share_bytes, 4),
            "util_pct": _round(self.util_pct, 2),
            "avg_queue": _round(self.avg_queue, 3),
            "flush_ios": self.flush_ios,
            "random_write_bound": self.random_write_bound,
            "verdict": self.verdict,
        }


def summarise(
    first: DiskCounters,
    last: DiskCounters,
    seconds: float,
    samples: tuple[MonitorSample, ...] = (),
    random_write_iops: float | None = None,
) -> MonitorSummary:
    """Totals between two readings, peaks from the samples in between, and the verdict.

    `random_write_iops`, when the caller knows the device's measured 4K random-write IOPS
    (from `flashmark run`), adds how close the write rate came to it (seed 002 compared tps
    with iozone's 4K figure).
    """
    span = max(seconds, 1e-9)
    whole = compute_sample(first, last, span, seconds)
    total_ios = whole.read_ios + whole.write_ios
    total_bytes = whole.read_bytes + whole.write_bytes
    write_share_ops = whole.write_ios / total_ios if total_ios else None
    write_share_bytes = whole.write_bytes / total_bytes if total_bytes else None
    bound, verdict = _random_write_verdict(whole, write_share_ops, random_write_iops)
    return MonitorSummary(
        seconds=seconds,
        read_ios=whole.read_ios,
        write_ios=whole.write_ios,
        read_bytes=whole.read_bytes,
        write_bytes=whole.write_bytes,
        read_iops=whole.read_iops,
        write_iops=whole.write_iops,
        read_bps=whole.read_bps,
        write_bps=whole.write_bps,
        peak_read_iops=max((s.read_iops for s in samples), default=None),
        peak_write_iops=max((s.write_iops for s in samples), default=None),
        avg_read_request_bytes=whole.avg_read_request_bytes,
        avg_write_request_bytes=whole.avg_write_request_bytes,
        write_share_ops=write_share_ops,
        write_share_bytes=write_share_bytes,
        util_pct=whole.util_pct,
        avg_queue=whole.avg_queue,
        flush_ios=whole.flush_ios,
        random_write_bound=bound,
        verdict=verdict,
    )


def _random_write_verdict(
    whole: MonitorSample, write_share: float | None, random_write_iops: float | None
) -> tuple[bool | None, str]:
    if write_share is None:
        return None, "no I/O reached the device"
    request = whole.avg_write_request_bytes
    reasons = [f"{write_share:.0%} of requests were writes"]
    if request is not None:
        reasons.append(f"mean write request {request / KIB:.0f} KiB")
    if whole.util_pct is not None:
        reasons.append(f"device busy {whole.util_pct:.0f}% of the time")
    if random_write_iops:
        reasons.append(
            f"{whole.write_iops:.0f} write IOPS = {whole.write_iops / random_write_iops:.0%} of "
            f"its {random_write_iops:.0f} random-write IOPS"
        )
    small_writes = (
        write_share >= RANDOM_WRITE_SHARE
        and request is not None
        and request <= RANDOM_WRITE_MAX_REQUEST_BYTES
    )
    detail = "; ".join(reasons)
    if not small_writes:
        return False, f"not bound by random writes: {detail}"
    if whole.util_pct is None:
        return None, f"small writes dominate but the kernel reports no busy time: {detail}"
    if whole.util_pct < RANDOM_WRITE_MIN_UTIL_PCT:
        return False, f"small writes dominate but the device was mostly idle: {detail}"
    return True, f"looks bound by random writes: {detail}"


@dataclass(frozen=True)
class PhaseSummary:
    name: str
    start_s: float
    end_s: float
    summary: MonitorSummary

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PhaseSummary:
        return cls(d["name"], d["start_s"], d["end_s"], MonitorSummary.from_dict(d["summary"]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "start_s": round(self.start_s, 3),
            "end_s": round(self.end_s, 3),
            "summary": self.summary.to_dict(),
        }


@dataclass(frozen=True)
class MonitorSeries:
    """Everything one monitoring session recorded for one device."""

    device: str
    interval_s: float
    diskstats_fields: int  # the kernel format seen (FORMAT_FIELDS)
    started_monotonic: float  # time.monotonic() at the first reading (to line up with others)
    seconds: float
    first: DiskCounters
    last: DiskCounters
    samples: tuple[MonitorSample, ...]
    phases: tuple[PhaseSummary, ...] = ()
    warnings: tuple[str, ...] = ()
    random_write_iops: float | None = field(default=None)

    def summary(self) -> MonitorSummary:
        return summarise(self.first, self.last, self.seconds, self.samples, self.random_write_iops)

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "interval_s": self.interval_s,
            "diskstats_fields": self.diskstats_fields,
            "diskstats_format": FORMAT_FIELDS.get(self.diskstats_fields, "unknown"),
            "seconds": self.seconds,  # unrounded: the summary is recomputed from it on reading
            "summary": self.summary().to_dict(),
            "phases": [phase.to_dict() for phase in self.phases],
            "samples": [sample.to_dict() for sample in self.samples],
            "warnings": list(self.warnings),
            "random_write_iops": self.random_write_iops,
            # The raw counters at the start and the end: the summary is computed from them.
            "first": dataclasses.asdict(self.first),
            "last": dataclasses.asdict(self.last),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MonitorSeries:
        """The inverse of to_dict, for results read back from the history."""
        return cls(
            device=d["device"],
            interval_s=d["interval_s"],
            diskstats_fields=d["diskstats_fields"],
            started_monotonic=0.0,  # only meaningful within the recording process
            seconds=d["seconds"],
            first=DiskCounters(**d["first"]),
            last=DiskCounters(**d["last"]),
            samples=tuple(MonitorSample.from_dict(s) for s in d["samples"]),
            phases=tuple(PhaseSummary.from_dict(p) for p in d["phases"]),
            warnings=tuple(d["warnings"]),
            random_write_iops=d.get("random_write_iops"),
        )


class DiskMonitor:
    """Samples one device's /proc/diskstats line in a background thread.

        with DiskMonitor("mmcblk0", SystemRoots.from_environment()) as monitor:
            monitor.mark("unpack")       # optional named phases
            ...
        series = monitor.series()

    The first reading happens in __enter__ (so a missing device fails at once, in the caller's
    thread); samples are taken every `interval_s` on a drift-free schedule; __exit__ takes a
    final reading, so the last (possibly shorter) interval is recorded too.
    """

    def __init__(
        self,
        device_name: str,
        roots: SystemRoots,
        interval_s: float = 1.0,
        *,
        random_write_iops: float | None = None,
        on_sample: Callable[[MonitorSample], None] | None = None,
    ) -> None:
        if not interval_s > 0 or math.isinf(interval_s):
            raise ValueError(f"interval must be a positive number of seconds, got {interval_s}")
        self.device = normalise_device_name(device_name)
        self.roots = roots
        self.interval_s = interval_s
        self.random_write_iops = random_write_iops
        # Called from the sampler thread with each MonitorSample (the live view uses it).
        self._on_sample = on_sample
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0
        self._first: DiskCounters | None = None
        self._previous: tuple[float, DiskCounters] | None = None
        self._samples: list[MonitorSample] = []
        self._marks: list[tuple[str, float, DiskCounters]] = []
        self._end: tuple[float, DiskCounters] | None = None
        self._warnings: list[str] = []

    # -- life cycle ---------------------------------------------------------------------------
    def start(self) -> DiskMonitor:
        first = read_device_counters(self.roots, self.device)
        now = time.monotonic()
        with self._lock:
            self._start = now
            self._first = first
            self._previous = (now, first)
        self._thread = threading.Thread(target=self._run, name="flashmark-monitor", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self._end is None and self._previous is not None:
                self._take_sample_locked(final=True)

    def __enter__(self) -> DiskMonitor:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- sampling -----------------------------------------------------------------------------
    def _run(self) -> None:
        next_at = self._start + self.interval_s
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            with self._lock:
                sample = self._take_sample_locked(final=False)
            if sample is not None and self._on_sample is not None:
                self._on_sample(sample)
            next_at += self.interval_s
            # After a long stall (suspend, overloaded host) skip missed slots, keep the phase.
            now = time.monotonic()
            if next_at < now:
                next_at += math.ceil((now - next_at) / self.interval_s) * self.interval_s

    def _read(self) -> DiskCounters | None:
        try:
            return read_device_counters(self.roots, self.device)
        except (MonitorDeviceNotFound, DiskstatsUnreadable) as error:
            message = f"monitoring stopped: {error}"
            if message not in self._warnings:
                self._warnings.append(message)
            return None

    def _take_sample_locked(self, *, final: bool) -> MonitorSample | None:
        assert self._previous is not None
        counters = self._read()
        now = time.monotonic()
        if counters is None:  # the device went away: keep what was recorded
            self._end = self._previous
            self._stop.set()
            return None
        previous_at, previous = self._previous
        sample = None
        # A final interval shorter than a tenth of the interval says little: fold it into the
        # totals (which use first/last readings) without a sample of its own.
        if now - previous_at > (0.1 * self.interval_s if final else 0.0):
            sample = compute_sample(previous, counters, now - previous_at, now - self._start)
            self._samples.append(sample)
        self._previous = (now, counters)
        if final:
            self._end = (now, counters)
        return sample

    # -- phases and results -------------------------------------------------------------------
    def mark(self, phase: str) -> None:
        """Start a named phase now (the previous one ends here). Takes an exact reading."""
        counters = self._read()
        if counters is None:
            return
        with self._lock:
            self._marks.append((phase, time.monotonic(), counters))

    def series(self) -> MonitorSeries:
        """The recording so far (complete once the monitor is stopped)."""
        with self._lock:
            if self._first is None or self._previous is None:
                raise RuntimeError("DiskMonitor.series() called before start()")
            end_at, end = self._end if self._end is not None else self._previous
            samples = tuple(self._samples)
            phases = self._phases(end_at, end, samples)
            return MonitorSeries(
                device=self.device,
                interval_s=self.interval_s,
                diskstats_fields=self._first.fields,
                started_monotonic=self._start,
                seconds=end_at - self._start,
                first=self._first,
                last=end,
                samples=samples,
                phases=phases,
                warnings=tuple(self._warnings),
                random_write_iops=self.random_write_iops,
            )

    def _phases(
        self, end_at: float, end: DiskCounters, samples: tuple[MonitorSample, ...]
    ) -> tuple[PhaseSummary, ...]:
        phases = []
        bounds = [*self._marks, ("", end_at, end)]
        for (name, start_at, start), (_, stop_at, stop) in itertools.pairwise(bounds):
            start_s, end_s = start_at - self._start, stop_at - self._start
            inside = tuple(s for s in samples if start_s < s.t_s <= end_s)
            summary = summarise(start, stop, stop_at - start_at, inside, self.random_write_iops)
            phases.append(PhaseSummary(name, start_s, end_s, summary))
        return tuple(phases)


@contextlib.contextmanager
def optional_monitor(
    device: str | None,
    roots: SystemRoots,
    interval_s: float = 1.0,
    *,
    random_write_iops: float | None = None,
) -> Iterator[DiskMonitor | None]:
    """A started DiskMonitor for `device`, or None when there is no device to watch."""
    if device is None:
        yield None
        return
    with DiskMonitor(device, roots, interval_s, random_write_iops=random_write_iops) as monitor:
        yield monitor
