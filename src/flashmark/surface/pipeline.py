"""The requests of a sequential pass, issued by a thread of their own.

A real device is idle between two requests: whatever the host does in between (here: building
the pattern for the next block, comparing the last one) would count against its rate. So one
thread only issues the requests, back to back, while the scan's thread prepares and checks the
blocks around them: a few buffers circulate between the two (double buffering). The system
calls release the GIL, so the device waits only for the thread's own loop (microseconds).

The I/O thread decides where the next read goes (the ddrescue skip after errors: scan.py), times
each request, and hands back results in offset order. It touches no scan state: the scan's
thread does all bookkeeping, so a result not yet handed back when the pass stops (Ctrl-C) is
simply done again by a resumed scan.

Writes are made durable in steps: after the write that completes `flush_every_ns` of writing
(and after the pass's last write) the thread flushes the medium (fsync: the device's volatile
cache written out) and hands back a `Flushed` marker after that write's result. Everything
before the marker is on the device; a power cut can only lose what came after it
(scan.py resumes from the last marker).
"""

from __future__ import annotations

import mmap
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from flashmark.surface.medium import Medium
from flashmark.surface.pattern import Pattern

BUFFERS = 3  # one being transferred, one being checked or filled, one spare
_POLL_S = 0.25  # how often a waiting thread looks at the stop flag
# A gap this long between a completion and the next request is a host stall, not charged to
# the device. This thread asks again within microseconds; on a loaded host a thread can wait
# tens of ms for a CPU (docs/emulated-flash.md, absorb_ns: 5 ms was too little at load 5),
# and meanwhile a real device idles. The emulated cards absorb gaps up to the same 50 ms, so
# a shorter gap is charged there as it is to a real device, and a longer one is idle in both.
STALL_GAP_NS = 50_000_000


@dataclass
class Done:
    """One finished request."""

    offset: int
    length: int
    buffer: mmap.mmap
    started_ns: int
    done_ns: int
    interval_ns: int  # the time charged to it: since the previous completion, or its latency
    # after a host stall (0 for a failure)
    stall_ns: int  # the host's gap before it, when that was a stall (not charged)
    timed: bool  # False for the pass's first request (its ramp) and for failures
    error: OSError | None
    skipped: int  # bytes skipped after this failed read (ddrescue's skip), untried

    @property
    def view(self) -> memoryview:
        return memoryview(self.buffer)[: self.length]


@dataclass(frozen=True)
class Flushed:
    """Every write before this marker is durable up to `upto` (or the flush failed: `error`)."""

    upto: int
    ns: int  # the flush's own time (not in any request's interval)
    error: OSError | None


SkipRule = Callable[[int, int, int], int]  # (failures in a row, offset, length) -> bytes to skip


class Pipeline:
    """Requests from `start` to `size` in blocks; iterate `results()`, `release()` each."""

    def __init__(
        self,
        medium: Medium,
        *,
        write: bool,
        start: int,
        size: int,
        block: int,
        clock: Callable[[], int],
        pattern: Pattern | None = None,
        skip: SkipRule | None = None,
        flush_every_ns: int | None = None,
    ) -> None:
        self._medium = medium
        self._write = write
        self._size = size
        self._block = block
        self._clock = clock
        self._pattern = pattern
        self._skip = skip
        self._flush_every_ns = flush_every_ns
        self._start = start
        self._fill_at = start  # writes: the next block to fill (scan thread)
        self._spare: list[mmap.mmap] = []  # writes: buffers the scan thread may fill
        self._free: queue.Queue[mmap.mmap | None] = queue.Queue()  # reads: buffers to read into
        self._work: queue.Queue[tuple[int, mmap.mmap] | None] = queue.Queue()  # writes: to write
        self._results: queue.Queue[Done | Flushed | BaseException | None] = queue.Queue()
        self._stop = threading.Event()
        for _ in range(BUFFERS):
            buffer = mmap.mmap(-1, block)  # page-aligned, as O_DIRECT needs
            (self._spare.append if write else self._free.put)(buffer)
        self._thread = threading.Thread(target=self._run, name="flashmark-surface-io", daemon=True)

    def __enter__(self) -> Pipeline:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._free.put(None)
        self._work.put(None)
        # The request under way finishes first (a system call cannot be abandoned).
        self._thread.join()

    def results(self) -> Iterator[Done | Flushed]:
        while True:
            if self._write:
                self._fill()
            item = self._next()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def release(self, done: Done) -> None:
        if self._write:
            self._spare.append(done.buffer)
        else:
            self._free.put(done.buffer)

    # -- the scan's thread --------------------------------------------------------------------
    def _fill(self) -> None:
        assert self._pattern is not None
        while self._spare and self._fill_at < self._size:
            buffer = self._spare.pop()
            length = min(self._block, self._size - self._fill_at)
            words = self._pattern.expected(self._fill_at, length)
            memoryview(buffer)[:length] = memoryview(words).cast("B")
            self._work.put((self._fill_at, buffer))
            self._fill_at += length

    def _next(self) -> Done | Flushed | BaseException | None:
        while True:
            try:
                return self._results.get(timeout=_POLL_S)
            except queue.Empty:
                if not self._thread.is_alive():
                    return None

    # -- the I/O thread -----------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as error:  # handed to the scan's thread, raised there
            self._results.put(error)
        else:
            self._results.put(None)

    def _take(self) -> tuple[int, mmap.mmap] | None:
        if self._write:
            return self._work.get()
        buffer = self._free.get()
        return None if buffer is None else (-1, buffer)

    def _loop(self) -> None:
        pos = self._start
        failures = 0
        first = True
        last = last_flush = self._clock()
        while pos < self._size and not self._stop.is_set():
            taken = self._take()
            if taken is None or self._stop.is_set():
                return
            offset, buffer = taken
            if self._write:
                pos = offset  # filled in order by the scan's thread
            length = min(self._block, self._size - pos)
            view = memoryview(buffer)[:length]
            error: OSError | None = None
            started = self._clock()
            try:
                if self._write:
                    self._medium.write(view, pos)
                else:
                    self._medium.read(view, pos)
            except OSError as failed:
                error = failed
            done = self._clock()
            skipped = stall = 0
            timed = error is None and not first
            if error is None:
                failures = 0
                gap = started - last
                if first:
                    # The ramp: a device may wake from power saving on it, and one that was
                    # busy until just before (the other pass) may still be finishing that.
                    interval, first = 0, False
                elif gap > STALL_GAP_NS:  # the host did not run this thread: the device idled
                    interval, stall = done - started, gap
                else:
                    interval = done - last
                last = done
            else:
                failures += 1
                interval, last = 0, done  # failures are not timed, nor the time they took
                if self._skip is not None:
                    skipped = min(self._skip(failures, pos, length), self._size - pos - length)
            self._results.put(
                Done(pos, length, buffer, started, done, interval, stall, timed, error, skipped)
            )
            pos += length + skipped
            if self._write and (
                pos >= self._size
                or (self._flush_every_ns is not None and done - last_flush >= self._flush_every_ns)
            ):
                flushed = self._flush(pos)
                self._results.put(flushed)
                if flushed.error is not None:
                    return
                last = last_flush = self._clock()  # the flush is charged on its own

    def _flush(self, upto: int) -> Flushed:
        started = self._clock()
        try:
            self._medium.sync()
        except OSError as error:
            return Flushed(upto, self._clock() - started, error)
        return Flushed(upto, self._clock() - started, None)
