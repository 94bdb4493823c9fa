"""What a device did, as data: one `MonitorSample` per interval (the columns of `iostat -x`),
summaries of a whole recording and of named phases, and the recording itself (`MonitorSeries`).
Pure: computed from DiskCounters readings. Counters wrap (32 bits on 32-bit ARM boards):
deltas are taken modulo 2^32 or 2^64.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flashmark.codec import document, written
from flashmark.system.diskstats import FORMAT_FIELDS, SECTOR_BYTES, DiskCounters
from flashmark.upload_rules import (
    KERNEL_NAME,
    MADE_TEXT,
    Always,
    Matching,
    OneOf,
    upload,
    upload_as,
    uploaded,
)

KIB = 1024
# A phase's name (of a run's monitor, a workload's): flashmark's words for what it did.
PHASE_NAME = Matching(r"[a-z][a-z0-9 _-]{0,31}").or_withheld()


# Heuristic for "bound by random writes" (seed 002, "Looking at storage access patterns"): the
# Class 4 card installing a desktop showed ~26 tps of which nearly all writes, 500-1500 kB/s,
# i.e. 20-60 KiB per request, with the device busy all the time. Sequential writers are merged
# by the block layer into requests of 128 KiB and more (the default max_sectors_kb is 512 KiB
# or more on most hosts), so a small mean write request plus a saturated device means the
# device spent its time on small scattered writes.
RANDOM_WRITE_SHARE = 0.75  # writes / all requests
RANDOM_WRITE_MAX_REQUEST_BYTES = 64 * KIB
RANDOM_WRITE_MIN_UTIL_PCT = 60.0


def _delta(new: int | None, old: int | None) -> int | None:
    """new - old for a counter that may have wrapped at 2^32 or 2^64 (iostats.rst)."""
    if new is None or old is None:
        return None
    if new >= old:
        return new - old
    modulus = 2**32 if old < 2**32 else 2**64
    return new + modulus - old


@uploaded
@dataclass(frozen=True, kw_only=True)
class MonitorSample:
    """What the device did during one interval: the columns of `iostat -x`.

    Rates are per second of the interval; bytes are bytes (iostat's kB is KiB: sectors / 2).
    Figures the kernel format lacks (7-field partitions) or that have no requests are None.
    """

    t_s: float = field(metadata=document(digits=3))  # end of the interval, since the start
    interval_s: float = field(metadata=document(digits=4))
    read_iops: float = field(metadata=document(digits=2))
    write_iops: float = field(metadata=document(digits=2))
    read_bps: float = field(metadata=document(digits=1))
    write_bps: float = field(metadata=document(digits=1))
    read_ios: int
    write_ios: int
    read_bytes: int
    write_bytes: int
    avg_request_bytes: float | None = field(metadata=document(digits=1))  # iostat's areq-sz
    avg_read_request_bytes: float | None = field(metadata=document(digits=1))
    avg_write_request_bytes: float | None = field(metadata=document(digits=1))
    # mean time of a read, queue included (iostat r_await)
    read_await_ms: float | None = field(metadata=document(digits=3))
    write_await_ms: float | None = field(metadata=document(digits=3))
    # mean requests in flight (iostat aqu-sz)
    avg_queue: float | None = field(metadata=document(digits=3))
    # share of the interval the device was busy (iostat %util)
    util_pct: float | None = field(metadata=document(digits=2))
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


@uploaded
@dataclass(frozen=True)
class MonitorSummary:
    """A whole run (or phase) of one device: seed 002's iostat table condensed to a verdict."""

    seconds: float = field(metadata=document(digits=3))
    read_ios: int
    write_ios: int
    read_bytes: int
    write_bytes: int
    read_iops: float = field(metadata=document(digits=2))  # mean over the whole span
    write_iops: float = field(metadata=document(digits=2))
    read_bps: float = field(metadata=document(digits=1))
    write_bps: float = field(metadata=document(digits=1))
    # highest interval, when there are samples
    peak_read_iops: float | None = field(metadata=document(digits=2))
    peak_write_iops: float | None = field(metadata=document(digits=2))
    avg_read_request_bytes: float | None = field(metadata=document(digits=1))
    avg_write_request_bytes: float | None = field(metadata=document(digits=1))
    write_share_ops: float | None = field(metadata=document(digits=4))  # writes / all requests
    write_share_bytes: float | None = field(metadata=document(digits=4))
    util_pct: float | None = field(metadata=document(digits=2))
    avg_queue: float | None = field(metadata=document(digits=3))
    flush_ios: int | None
    random_write_bound: bool | None  # None: cannot tell (no I/O, or no busy-time counter)
    verdict: str = field(metadata=upload(MADE_TEXT.or_withheld()))  # the reasons, in words

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops


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


@uploaded
@dataclass(frozen=True)
class PhaseSummary:
    name: str = field(metadata=upload(PHASE_NAME))
    start_s: float = field(metadata=document(digits=3))
    end_s: float = field(metadata=document(digits=3))
    summary: MonitorSummary


@uploaded
@dataclass(frozen=True, kw_only=True)
class MonitorSeries:
    """Everything one monitoring session recorded for one device (its document: a run's
    "device_activity" and a workload's "monitor")."""

    device: str = field(metadata=upload(KERNEL_NAME.or_withheld()))
    interval_s: float
    diskstats_fields: int  # the kernel format seen (FORMAT_FIELDS)
    # time.monotonic() at the first reading (to line up with others): only meaningful within
    # the recording process
    started_monotonic: float = field(default=0.0, metadata=document(saved=False))
    seconds: float  # unrounded: the summary is recomputed from it on reading
    phases: tuple[PhaseSummary, ...] = ()
    samples: tuple[MonitorSample, ...]
    # may name the device's path or the command
    warnings: tuple[str, ...] = field(default=(), metadata=upload(Always(())))
    random_write_iops: float | None = field(default=None)
    # The raw counters at the start and the end: the summary is computed from them.
    first: DiskCounters
    last: DiskCounters

    def summary(self) -> MonitorSummary:
        return summarise(self.first, self.last, self.seconds, self.samples, self.random_write_iops)

    @property
    @upload_as(OneOf(*FORMAT_FIELDS.values(), "unknown").or_withheld())
    @written(before="seconds")
    def diskstats_format(self) -> str:
        return FORMAT_FIELDS.get(self.diskstats_fields, "unknown")

    @property
    @upload_as()
    @written(key="summary", before="phases")
    def written_summary(self) -> MonitorSummary:
        return self.summary()


