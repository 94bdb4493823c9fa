"""The surface scan: sequential passes over a medium, per-slice rates, verification, and a map
of what could not be read, made the way ddrescue makes it (GNU ddrescue manual, "Algorithm").

    scan = SurfaceScan(medium, target, settings, nonce=new_nonce())
    scan.run()               # write pass (if asked), read pass, then the retries
    result = scan.snapshot() # in a finally: after Ctrl-C or a failure it is marked incomplete

A write counts once the flush after it returned. The method: docs/surface.md, "Method".
"""

from __future__ import annotations

import bisect
import errno
import heapq
import mmap
import statistics
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields

from flashmark import __version__
from flashmark.errors import DeviceFailed, Interrupted
from flashmark.surface.cache import CacheEstimate, estimate_cache
from flashmark.surface.medium import Medium
from flashmark.surface.pattern import Kind, Pattern, Range, merge
from flashmark.surface.pipeline import Done, Flushed, Pipeline, SkipRule
from flashmark.surface.result import (
    Integrity,
    Outlier,
    PassStats,
    ResumeState,
    SliceStats,
    SurfaceResult,
    SurfaceSettings,
    SurfaceTarget,
)
from flashmark.system.watchdog import Watchdog
from flashmark.units import utc_text

# errno values a medium error comes as: EIO from the block layer (also what the loop device and
# FUSE give for any failure), EILSEQ/ENODATA/EBADMSG/EREMOTEIO from some drivers for an
# uncorrectable sector (include/linux/blk_types.h, blk_status_to_errno).
MEDIA_ERRORS = frozenset({errno.EIO, errno.EILSEQ, errno.ENODATA, errno.EBADMSG, errno.EREMOTEIO})
GONE_ERRORS = frozenset({errno.ENODEV, errno.ENXIO, errno.ENOMEDIUM})
RETRY_DIVISOR = 16  # each retry round reads blocks this many times smaller
GONE_AFTER = 8  # failed requests in a row before checking the device still answers
MAX_SKIP_SHARE = 100  # the skip grows up to 1/100 of the surface (ddrescue's default maximum)
OUTLIER_FACTOR = 8  # a request this many times slower than the pass's median is an outlier
MAX_OUTLIERS = 16  # the slowest ones kept per pass
# Points kept for the cache estimate: beyond this many (a 64 GiB device in 1 MiB blocks), every
# other one is dropped and the stride doubles, so a 1 TB disk keeps the same memory.
MAX_CACHE_POINTS = 1 << 16
# The write pass flushes after every 2 s of writing. A flush costs one round trip to the device
# (0.1 ms through the emulated card's stack, a few ms on a card), and the cached data it writes
# out was to be written anyway: under 0.5% of the pass for flushes up to 10 ms. What a power cut
# can cost is the writing since the last flush: at most these 2 s are written again on resume.
FLUSH_EVERY_NS = 2_000_000_000
# Checkpoints (the scan saved as it stands, for a resume after SIGKILL or a power cut): in the
# write pass after a flush (so every durable step is kept), at most once a second, and never
# more often than keeps their own cost (the document built and saved: milliseconds for 256
# slices, up to a second for 65536) under 1/20 of the scan.
CHECKPOINT_EVERY_NS = 1_000_000_000
CHECKPOINT_COST_SHARE = 20
# A folder's free space is read this often while the files are written: statvfs(2) costs
# microseconds, and at 1 GB/s another writer's growth is seen within 250 MB.
SPACE_WATCH_NS = 250_000_000

Progress = Callable[[str, int, int], None]  # phase, bytes done, bytes in the phase
Checkpoint = Callable[["SurfaceResult"], None]  # the scan as it stands, resumable from there
# A write handed back by the I/O thread, not yet durable: offset, length, its result (None for
# a failed block) and the ranges its retries found unwritable.
_Unflushed = tuple[int, int, "Done | None", "tuple[Range, ...]"]


@dataclass(slots=True)
class _Slice:
    """A slice's counters while the scan runs (times as floats: requests share them)."""

    start: int
    length: int
    read_bytes: int
    read_ns: float
    write_bytes: int
    write_ns: float
    read_max_latency_ns: int
    write_max_latency_ns: int
    unreadable_bytes: int
    mismatched_bytes: int

    @classmethod
    def of(cls, stats: SliceStats) -> _Slice:
        return cls(**{f.name: getattr(stats, f.name) for f in fields(SliceStats)})

    def frozen(self) -> SliceStats:
        return SliceStats(**{f.name: round(getattr(self, f.name)) for f in fields(SliceStats)})


# What the interrupted scans before a resumed one add to a pass when there were none.
_NOTHING_TIMED = PassStats(bytes=0, ns=0, requests=0, median_latency_ns=0, max_latency_ns=0)


@dataclass(slots=True)
class _PassClock:
    """One pass's bytes, time and latencies (this session), and the previous sessions'."""

    previous: PassStats | None
    bytes: int = 0
    ns: float = 0.0
    stall_ns: int = 0
    flushes: int = 0
    flush_ns: int = 0
    latencies: array[int] = field(default_factory=lambda: array("q"))
    # a heap of (latency, offset, length)
    slowest: list[tuple[int, int, int]] = field(default_factory=list)

    def add(self, offset: int, length: int, latency: int, interval: float) -> None:
        self.bytes += length
        self.ns += interval
        self.latencies.append(latency)
        item = (latency, offset, length)
        if len(self.slowest) < 4 * MAX_OUTLIERS:
            heapq.heappush(self.slowest, item)
        elif latency > self.slowest[0][0]:
            heapq.heapreplace(self.slowest, item)

    def stats(self) -> PassStats | None:
        if not self.latencies:
            return self.previous
        before = self.previous or _NOTHING_TIMED
        median = int(statistics.median_low(self.latencies))
        mine = [
            Outlier(offset, length, latency)
            for latency, offset, length in self.slowest
            if latency > OUTLIER_FACTOR * median
        ]
        outliers = sorted([*before.outliers, *mine], key=lambda o: -o.latency_ns)[:MAX_OUTLIERS]
        return PassStats(
            bytes=self.bytes + before.bytes,
            ns=round(self.ns) + before.ns,
            requests=len(self.latencies) + before.requests,
            median_latency_ns=median,
            max_latency_ns=max(max(self.latencies), before.max_latency_ns),
            host_stall_ns=self.stall_ns + before.host_stall_ns,
            outliers=tuple(sorted(outliers, key=lambda o: o.offset)),
            flushes=self.flushes + before.flushes,
            flush_ns=self.flush_ns + before.flush_ns,
        )


class SurfaceScan:
    """One scan (or the continuation of an interrupted one: `previous`)."""

    def __init__(
        self,
        medium: Medium,
        target: SurfaceTarget,
        settings: SurfaceSettings,
        *,
        nonce: int,
        previous: SurfaceResult | None = None,
        progress: Progress | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        checkpoint: Checkpoint | None = None,
        watchdog: Watchdog | None = None,
        space_watch: Callable[[int], None] | None = None,
    ) -> None:
        if settings.block_bytes % medium.sector_bytes or settings.block_bytes <= 0:
            raise ValueError("the block size must be a multiple of the device's logical block")
        self.medium = medium
        self.target = target
        self.settings = settings
        self.pattern = Pattern(nonce)
        self._clock = clock
        self._watchdog = watchdog or Watchdog()
        self._progress = progress or (lambda phase, done, total: None)
        self._buffer = mmap.mmap(-1, settings.block_bytes)  # page-aligned, as O_DIRECT needs
        self._previous = previous
        # A new scan starts where a scan that measured nothing yet would stand.
        if previous is None:
            first = "write" if settings.write else "read"
            state = ResumeState(nonce=nonce, phase=first, next_offset=0, pending=())
            integrity = Integrity(0, 0, 0, 0, ranges=())
            slices = _empty_slices(medium.size_bytes, settings.slices, medium.sector_bytes)
        else:
            state, integrity, slices = previous.state, previous.integrity, previous.slices
        self._started_at = previous.started_at if previous else utc_text(time.time())
        self.phase, self.next_offset = state.phase, state.next_offset
        self._pending = [list(p) for p in state.pending]
        self._verified, self._mismatched = integrity.verified_bytes, integrity.mismatched_bytes
        self._slices = [_Slice.of(s) for s in slices]
        self._bounds = [s.start for s in slices]
        self._ranges = list(integrity.ranges)
        self._write_clock = _PassClock(previous.write if previous else None)
        self._read_clock = _PassClock(previous.read if previous else None)
        self._cache = previous.cache if previous else None
        self._points: list[tuple[int, int]] = []
        self._point_count = 0
        self._point_stride = 1
        self._last_good: int | None = None
        self._stop_reason: str | None = None
        self._unflushed: list[_Unflushed] = []
        self._written_to = self.next_offset  # the end of the last write handed back
        self._charged = 0
        self._base = 0
        self._on_checkpoint = checkpoint
        # A folder's free space, read again while writing: it raises when, with the bytes
        # still to write, the filesystem would end below its reserve (system/disk_space.py).
        self._space_watch = space_watch
        self._space_checked_ns: int | None = None
        self._last_checkpoint_ns = 0
        self._checkpoint_cost_ns = 0

    # -- running ------------------------------------------------------------------------------
    def run(self) -> None:
        self._checkpoint(force=True)  # a scan killed from now on can be resumed
        if self.phase == "write":
            try:
                self._write_pass()
            except (Interrupted, KeyboardInterrupt):
                self._flush_on_stop()
                raise
            self._cache = self._cache_estimate()
            self.phase, self.next_offset = "read", 0
            self._checkpoint(force=True)
        if self.phase == "read":
            self._read_pass()
            self.phase = "retry"  # the pending areas become a stack, lowest start on top
        if self.phase == "retry":
            self._pending.sort(key=lambda p: -p[0])  # also when resumed in this phase
            self._retry()
            self.phase = "done"

    def stopped(self, reason: str) -> None:
        """Say why the scan stopped early (shown with the incomplete result)."""
        self._stop_reason = reason

    def _write_pass(self) -> None:
        """Write the pattern from `next_offset` to the end, durable in steps: what a write did
        to the scan's figures is counted when the flush after it returned (`_commit`), so that
        `next_offset`, the resume point, is never past what is on the device."""
        size = self.medium.size_bytes
        base = self.next_offset
        # x: bytes written in this session (a resumed session starts from a cache that may
        # have drained meanwhile: its cliff is counted from where it started)
        self._points = [(0, 0)]
        self._charged = 0  # the write pass's time so far, host stalls left out (the cache's)
        self._base = base
        failures = 0
        with self._pipeline(write=True) as pipeline:
            for done in pipeline.results():
                if isinstance(done, Flushed):
                    if done.error is not None:
                        raise self._flush_failed(done.error)
                    self._commit(done.upto, done.ns)
                    continue
                pos, length = done.offset, done.length
                if done.error is not None:
                    failures = self._failed_in_a_row(done.error, pos, failures, write=True)
                    unwritable = self._map_write_failure(done.view, pos)
                    self._sync_retries()
                    self._unflushed.append((pos, length, None, unwritable))
                else:
                    failures = 0
                    self._last_good = pos
                    self._unflushed.append((pos, length, done, ()))
                self._written_to = pos + length
                pipeline.release(done)
                self._watch_space(size - self._written_to)
                self._progress("write", self._written_to, size)

    def _pipeline(self, *, write: bool, skip: SkipRule | None = None) -> Pipeline:
        """The pass's requests from `next_offset` to the end (pipeline.py)."""
        return Pipeline(
            self.medium,
            write=write,
            start=self.next_offset,
            size=self.medium.size_bytes,
            block=self.settings.block_bytes,
            clock=self._clock,
            pattern=self.pattern if write else None,
            skip=skip,
            watchdog=self._watchdog,
            place=self.target.path,
            flush_every_ns=FLUSH_EVERY_NS if write else None,
        )

    def _watch_space(self, left_bytes: int) -> None:
        """Read the free space again, at most every SPACE_WATCH_NS."""
        if self._space_watch is None:
            return
        now = self._clock()
        if self._space_checked_ns is None or now - self._space_checked_ns >= SPACE_WATCH_NS:
            self._space_checked_ns = now
            self._space_watch(left_bytes)

    def _commit(self, upto: int, flush_ns: int, *, checkpoint: bool = True) -> None:
        """The writes before `upto` are durable: count them, and the flush's time (the write
        is done when it is durable: fio's end_fsync)."""
        clock = self._write_clock
        for pos, length, done, unwritable in self._unflushed:
            for found in unwritable:
                self._add_range(found, unreadable=False)
            if done is None:
                continue
            if done.timed:
                self._time(done, clock, write=True)
                self._charged += done.interval_ns
                self._keep_point(pos + length - self._base, self._charged)
            else:  # the ramp: the time line starts after it
                self._points = [(pos + length - self._base, 0)]
        self._unflushed = []
        clock.ns += flush_ns
        clock.flushes += 1
        clock.flush_ns += flush_ns
        self._charged += flush_ns
        if self._slices and upto > 0:
            self._slices[self._slices_of(upto - 1, 1)[0]].write_ns += flush_ns
        if self._points:
            x, y = self._points[-1]
            self._points[-1] = (x, y + flush_ns)
        self.next_offset = upto
        if checkpoint:
            self._checkpoint()

    def _flush_on_stop(self) -> None:
        """A stop by a signal: what was written is flushed, so that a resumed scan need not
        write it again. If the flush fails (or the device stopped answering: DeviceHung), the
        resume point stays at the last durable step."""
        if not self._unflushed:
            return
        started = self._clock()
        try:
            self.medium.sync()
        except (OSError, DeviceFailed):
            return
        self._commit(self._written_to, self._clock() - started, checkpoint=False)

    def _sync_retries(self) -> None:
        """The pieces of a failed block were rewritten from this thread, after the I/O thread
        may have flushed their step: flush them before that step is counted."""
        try:
            self.medium.sync()
        except OSError as error:
            raise self._flush_failed(error) from None

    def _flush_failed(self, error: OSError) -> DeviceFailed:
        return DeviceFailed(f"{self.target.path}: flushing the writes failed: {error.strerror}")

    def _read_pass(self) -> None:
        size, block = self.medium.size_bytes, self.settings.block_bytes
        sector = self.medium.sector_bytes
        clock = self._read_clock
        verify = self.settings.verify
        max_skip = max(block, (size // MAX_SKIP_SHARE) // sector * sector)

        def skip(failures: int, offset: int, length: int) -> int:
            # ddrescue: skip ahead after an error, doubling on successive errors
            return 0 if failures == 1 else min(max_skip, block << (failures - 2))

        failures = 0
        with self._pipeline(write=False, skip=skip) as pipeline:
            for done in pipeline.results():
                assert isinstance(done, Done)  # reads are never flushed
                pos, length = done.offset, done.length
                if done.error is not None:
                    failures = self._failed_in_a_row(done.error, pos, failures, write=False)
                    self._pending.append([pos, length, _smaller(length, sector)])
                    if done.skipped:
                        self._pending.append([pos + length, done.skipped, block])
                else:
                    failures = 0
                    self._last_good = pos
                    if done.timed:
                        self._time(done, clock, write=False)
                    if verify:
                        self._verify(bytes(done.view), pos)
                self.next_offset = pos + length + done.skipped
                pipeline.release(done)
                self._progress("read", self.next_offset, size)
                self._checkpoint()

    def _checkpoint(self, *, force: bool = False) -> None:
        """Hand the scan as it stands to `checkpoint` (the CLI saves it in the history), so
        that a scan killed outright (SIGKILL, a power cut) can be resumed from there. At
        most once per CHECKPOINT_EVERY_NS, and never more often than keeps the checkpoints'
        own cost under 1/CHECKPOINT_COST_SHARE of the scan's time."""
        if self._on_checkpoint is None:
            return
        now = self._clock()
        wait = max(CHECKPOINT_EVERY_NS, CHECKPOINT_COST_SHARE * self._checkpoint_cost_ns)
        if not force and now - self._last_checkpoint_ns < wait:
            return
        self._on_checkpoint(self.snapshot(checkpoint=True))
        self._last_checkpoint_ns = self._clock()
        self._checkpoint_cost_ns = self._last_checkpoint_ns - now

    def _cache_estimate(self) -> CacheEstimate | None:
        """A cliff found by an earlier session stands (that session started with the cache
        as the scan found it); otherwise this session's estimate, as far as it got."""
        if self._cache is not None and self._cache.found:
            return self._cache
        return estimate_cache(self._points) or self._cache

    def _keep_point(self, written: int, elapsed_ns: int) -> None:
        self._point_count += 1
        if self._point_count % self._point_stride:
            return
        self._points.append((written, elapsed_ns))
        if len(self._points) > MAX_CACHE_POINTS:
            self._points = self._points[::2]
            self._point_stride *= 2

    def _retry(self) -> None:
        sector = self.medium.sector_bytes
        total = sum(p[1] for p in self._pending)
        done = 0
        failures = 0
        while self._pending:
            start, length, size = self._pending[-1]
            piece = min(size, length)
            view = memoryview(self._buffer)[:piece]
            failed = False
            try:
                self.medium.read(view, start)
            except OSError as error:
                self._check_error(error, start, write=False)
                failed = True
                failures += 1
                if failures >= GONE_AFTER and failures % GONE_AFTER == 0:
                    self._check_answering(start)
            else:
                failures = 0
                self._last_good = start
                if self.settings.verify:
                    self._verify(bytes(view), start)
            if length > piece:
                self._pending[-1] = [start + piece, length - piece, size]
            else:
                self._pending.pop()
            if failed and piece > sector:
                self._pending.append([start, piece, _smaller(piece, sector)])
            elif failed:
                self._add_range(Range(start, piece, Kind.UNREADABLE), unreadable=True)
            if not failed or piece <= sector:
                done += piece
            self._progress("retry", done, total)
            self._checkpoint()

    def _map_write_failure(self, block: memoryview, pos: int) -> tuple[Range, ...]:
        """Write the failed block again in smaller pieces (`block` still holds its pattern);
        the sectors no write gets into (mapped once their step is durable)."""
        sector = self.medium.sector_bytes
        unwritable: list[Range] = []
        stack = [(pos, len(block), _smaller(len(block), sector))]
        while stack:
            start, span, size = stack.pop()
            for at in range(start, start + span, size):
                piece = min(size, start + span - at)
                try:
                    self.medium.write(block[at - pos : at - pos + piece], at)
                except OSError as error:
                    self._check_error(error, at, write=True)
                    if piece > sector:
                        stack.append((at, piece, _smaller(piece, sector)))
                    else:
                        unwritable.append(Range(at, piece, Kind.UNWRITABLE))
        return tuple(unwritable)

    # -- bookkeeping --------------------------------------------------------------------------
    def _failed_in_a_row(self, error: OSError, offset: int, before: int, *, write: bool) -> int:
        """A pass's request failed, after `before` in a row: a failure other than the medium's
        ends the scan (_check_error); from GONE_AFTER in a row on, the device must still answer
        (_check_answering). The failures in a row, this one counted."""
        self._check_error(error, offset, write=write)
        if before + 1 >= GONE_AFTER:
            self._check_answering(offset)
        return before + 1

    def _check_error(self, error: OSError, offset: int, *, write: bool) -> None:
        what = "writing" if write else "reading"
        if error.errno in MEDIA_ERRORS:
            return
        if error.errno in GONE_ERRORS:
            raise DeviceFailed(
                f"{self.target.path} is gone ({error.strerror}) while {what} offset {offset}"
            ) from None
        raise DeviceFailed(
            f"{self.target.path}: {what} offset {offset} failed: {error.strerror}"
        ) from None

    def _check_answering(self, offset: int) -> None:
        """After many failures in a row: does a block that read fine before still read?"""
        sector = self.medium.sector_bytes
        probe = self._last_good
        view = memoryview(self._buffer)[:sector]
        try:
            if probe is None:
                raise OSError(errno.EIO, "no request has succeeded yet")
            self.medium.read(view, probe)
        except OSError:
            raise DeviceFailed(
                f"{self.target.path} stopped answering at offset {offset}: {GONE_AFTER} "
                "requests in a row failed"
                + (f", and offset {probe}, read before, fails too" if probe is not None else "")
            ) from None

    def _verify(self, data: bytes, offset: int) -> None:
        found = self.pattern.classify(data, offset)
        found = [piece for r in found for piece in self._outside_unwritable(r)]
        bad = sum(r.length for r in found)
        self._verified += len(data) - bad
        self._mismatched += bad
        for r in found:
            self._add_range(r, unreadable=False)

    def _outside_unwritable(self, mismatch: Range) -> list[Range]:
        """A range that was never written is not a mismatch: it is mapped as unwritable."""
        pieces = [mismatch]
        for bad in self._ranges:
            if bad.kind != Kind.UNWRITABLE:
                continue
            cut: list[Range] = []
            for r in pieces:
                if bad.end <= r.start or r.end <= bad.start:
                    cut.append(r)
                    continue
                if r.start < bad.start:
                    cut.append(Range(r.start, bad.start - r.start, r.kind, r.source))
                if bad.end < r.end:
                    shift = bad.end - r.start
                    source = None if r.source is None else r.source + shift
                    cut.append(Range(bad.end, r.end - bad.end, r.kind, source))
            pieces = cut
        return pieces

    def _add_range(self, found: Range, *, unreadable: bool) -> None:
        merge(self._ranges, found)
        for piece, overlap in self._overlaps(found.start, found.length):
            if unreadable:
                piece.unreadable_bytes += overlap
            elif found.kind != Kind.UNWRITABLE:
                piece.mismatched_bytes += overlap

    def _slices_of(self, start: int, length: int) -> range:
        first = max(0, bisect.bisect_right(self._bounds, start) - 1)
        last = max(0, bisect.bisect_right(self._bounds, start + length - 1) - 1)
        return range(first, last + 1)

    def _overlaps(self, start: int, length: int) -> Iterator[tuple[_Slice, int]]:
        """The slices [start, start + length) falls in, each with its bytes of it."""
        for index in self._slices_of(start, length):
            piece = self._slices[index]
            yield piece, min(piece.start + piece.length, start + length) - max(piece.start, start)

    def _time(self, done: Done, clock: _PassClock, *, write: bool) -> None:
        """A timed request of a pass, counted in the pass and in its slices (its time shared
        by the bytes each slice holds of it)."""
        pos, length = done.offset, done.length
        latency, interval = done.done_ns - done.started_ns, done.interval_ns
        clock.add(pos, length, latency, interval)
        clock.stall_ns += done.stall_ns
        for piece, overlap in self._overlaps(pos, length):
            share = overlap / length
            if write:
                piece.write_bytes += overlap
                piece.write_ns += interval * share
                piece.write_max_latency_ns = max(piece.write_max_latency_ns, latency)
            else:
                piece.read_bytes += overlap
                piece.read_ns += interval * share
                piece.read_max_latency_ns = max(piece.read_max_latency_ns, latency)

    # -- the result ---------------------------------------------------------------------------
    def snapshot(self, *, checkpoint: bool = False) -> SurfaceResult:
        """What was measured so far; complete once run() returned. In the write phase only
        what is durable counts (`_commit`). A `checkpoint` says that the scan was running."""
        complete = self.phase == "done"
        ranges = _normalised(self._ranges)
        integrity = Integrity(
            verified_bytes=self._verified,
            mismatched_bytes=self._mismatched,
            unreadable_bytes=sum(r.length for r in ranges if r.kind == Kind.UNREADABLE),
            unwritable_bytes=sum(r.length for r in ranges if r.kind == Kind.UNWRITABLE),
            ranges=ranges,
        )
        cache = self._cache_estimate() if self.phase == "write" else self._cache
        state = ResumeState(
            nonce=self.pattern.nonce,
            phase=self.phase,
            next_offset=self.next_offset,
            pending=tuple((a, b, c) for a, b, c in sorted(self._pending)),
            stop_reason=None if complete else (RUNNING if checkpoint else self._stop_reason),
        )
        return SurfaceResult(
            target=self.target,
            settings=self.settings,
            started_at=self._started_at,
            finished_at=utc_text(time.time()),
            complete=complete,
            read=self._read_clock.stats(),
            write=self._write_clock.stats(),
            slices=tuple(s.frozen() for s in self._slices),
            integrity=integrity,
            cache=cache,
            state=state,
            flashmark_version=__version__,
            resumed_from=None if self._previous is None else self._previous.id,
            warnings=tuple(self._previous.warnings if self._previous else ()),
        )


# The stop reason of a checkpoint: what a scan that never saved its end was doing.
RUNNING = (
    "running at its last checkpoint: if no scan runs now, it was killed (SIGKILL, a power "
    "cut) and --resume continues from there"
)


def _smaller(length: int, sector: int) -> int:
    return max(sector, (length // RETRY_DIVISOR) // sector * sector)


def _empty_slices(size: int, count: int, sector: int) -> tuple[SliceStats, ...]:
    count = max(1, min(count, size // sector))
    bounds = [(i * size // count) // sector * sector for i in range(count)] + [size]
    return tuple(
        SliceStats(start=bounds[i], length=bounds[i + 1] - bounds[i]) for i in range(count)
    )


def _normalised(ranges: list[Range]) -> tuple[Range, ...]:
    out: list[Range] = []
    for found in sorted(ranges, key=lambda r: (r.start, r.kind)):
        merge(out, found)
    return tuple(out)
