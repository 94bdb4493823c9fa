"""The requests of a sequential pass, issued back to back by an executor of their own, so that
the host's work between requests (building and checking patterns) does not count against the
device: buffers circulate between the scan's thread and the executor, two requests queued
while the last one succeeded. `ThreadExecutor` serves a medium in this process (tests);
worker.py's process a real device, which may hang its thread for good. Results come back in
offset order within the watchdog's bound. Writes are made durable in steps: a flush is queued
every `flush_every_ns` of writing, and its `Flushed` marker says all before it is on the device.
"""

from __future__ import annotations

import collections
import mmap
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol

from flashmark.surface.medium import Medium
from flashmark.surface.pattern import Pattern
from flashmark.system.watchdog import DeviceHung, Watchdog

BUFFERS = 3  # one being transferred, one being checked or filled, one queued
QUEUED = 2  # requests queued at once while they succeed
# A gap this long between a completion and the next request is a host stall, not charged to
# the device. The executor asks again within microseconds; on a loaded host a thread can wait
# tens of ms for a CPU (docs/emulated-flash.md, absorb_ns: 5 ms was too little at load 5),
# and meanwhile a real device idles. The emulated cards absorb gaps up to the same 50 ms, so
# a shorter gap is charged there as it is to a real device, and a longer one is idle in both.
STALL_GAP_NS = 50_000_000

READ, WRITE, SYNC = "read", "write", "sync"
_FLUSH = -1  # a queued flush's slot: it holds no buffer


@dataclass(frozen=True)
class Reply:
    """What an executor reports for one request: `errno` 0 when it succeeded; an exception
    other than OSError that the request raised (`raised`) is raised in the scan's thread."""

    seq: int
    errno: int
    started_ns: int
    done_ns: int
    strerror: str = ""
    raised: BaseException | None = None


class Executor(Protocol):
    """Runs requests in the order submitted, one at a time, into or from its buffers."""

    def buffer(self, slot: int) -> memoryview: ...

    def submit(self, op: str, slot: int, offset: int, length: int) -> int:
        """Queue a request; its sequence number."""

    def wait(self, seq: int, timeout_s: float) -> Reply | None:
        """The reply to request `seq`, or None when no request completed for `timeout_s`."""


@dataclass(frozen=True)
class Flushed:
    """Every write before this marker is durable up to `upto` (or the flush failed: `error`)."""

    upto: int
    ns: int  # the flush's own time (not in any request's interval)
    error: OSError | None


@dataclass
class Done:
    """One finished request."""

    offset: int
    length: int
    buffer: memoryview  # the whole slot; `view` is the request's part
    started_ns: int
    done_ns: int
    interval_ns: int  # the time charged to it: since the previous completion, or its latency
    # after a host stall (0 for a failure)
    stall_ns: int  # the host's gap before it, when that was a stall (not charged)
    timed: bool  # False for the pass's first request (its ramp) and for failures
    error: OSError | None
    skipped: int  # bytes skipped after this failed read (ddrescue's skip), untried
    slot: int = 0

    @property
    def view(self) -> memoryview:
        return self.buffer[: self.length]


def perform(medium: Medium, op: str, buffer: memoryview, offset: int) -> None:
    """One request (READ, WRITE or SYNC) made on `medium`, whichever executor makes it."""
    if op == READ:
        medium.read(buffer, offset)
    elif op == WRITE:
        medium.write(buffer, offset)
    else:
        medium.sync()


SkipRule = Callable[[int, int, int], int]  # (failures in a row, offset, length) -> bytes to skip


def wait_within(executor: Executor, seq: int, watchdog: Watchdog, length: int, what: str) -> Reply:
    """The reply to `seq`; DeviceHung when the device completes nothing for the bound of a
    request of `length` bytes (flashmark.system.watchdog)."""
    bound = watchdog.bound(length)
    started = time.monotonic()
    reply = executor.wait(seq, bound.seconds)
    if reply is None:
        raise bound.hung(what, time.monotonic() - started)
    if reply.raised is not None:
        raise reply.raised
    if not reply.errno:
        watchdog.saw_latency((reply.done_ns - reply.started_ns) / 1e9)
    return reply


@dataclass
class Pipeline:
    """Requests from `start` to `size` in blocks; iterate `results()`, `release()` each Done
    (a write pass also hands back Flushed markers, with `flush_every_ns`)."""

    medium: Medium
    _: KW_ONLY
    write: bool
    start: int
    size: int
    block: int
    clock: Callable[[], int]
    pattern: Pattern | None = None
    skip: SkipRule | None = None
    watchdog: Watchdog = field(default_factory=Watchdog)
    place: str = "the device"
    flush_every_ns: int | None = None

    def __post_init__(self) -> None:
        executor = getattr(self.medium, "executor", None)
        self._own: ThreadExecutor | None = None
        if executor is None:
            self._own = ThreadExecutor(self.medium, self.clock, BUFFERS, self.block)
            executor = self._own
        self._executor: Executor = executor
        self._free = list(range(BUFFERS))
        self._queued: collections.deque[tuple[int, int, int, int]] = collections.deque()
        self._next = self.start  # where the next request goes
        self._failures = 0
        self._first = True
        self._last = 0  # the previous completion (ns)
        self._last_flush: int | None = None  # when the last flush ended (or writing started)
        self._flush_queued = False

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc_info: object) -> None:
        # The requests under way finish first (a system call cannot be abandoned), within the
        # watchdog's bound; a device that stopped answering is the I/O process's to leave.
        try:
            while self._queued and not (kind is not None and issubclass(kind, DeviceHung)):
                seq, _slot, _pos, length = self._queued.popleft()
                wait_within(self._executor, seq, self.watchdog, length or self.block, self.place)
        except (DeviceHung, OSError):
            pass
        finally:
            if self._own is not None:
                self._own.close()

    def results(self) -> Iterator[Done | Flushed]:
        while True:
            self._issue()
            if not self._queued:
                return
            seq, slot, pos, length = self._queued.popleft()
            if slot == _FLUSH:
                # A flush waits for what the device still holds: bounded like a block.
                reply = wait_within(self._executor, seq, self.watchdog, self.block, self.place)
                flushed = self._flushed(reply, pos)
                yield flushed
                if flushed.error is not None:
                    return
                continue
            reply = wait_within(self._executor, seq, self.watchdog, length, self.place)
            done = self._done(reply, slot, pos, length)
            if self.write:
                self._flush_if_due(done)
            yield done

    def release(self, done: Done) -> None:
        self._free.append(done.slot)

    def _flush_if_due(self, done: Done) -> None:
        """Queue a flush behind the writes queued so far when `flush_every_ns` of writing went
        by since the last one, or after the pass's last write."""
        if self._flush_queued:  # queued after every write so far: it covers this one too
            return
        if self._last_flush is None:
            self._last_flush = done.started_ns
        due = self.flush_every_ns is not None and (
            done.done_ns - self._last_flush >= self.flush_every_ns
        )
        if due or done.offset + done.length >= self.size:
            seq = self._executor.submit(SYNC, 0, 0, 0)  # no bytes: its slot is not touched
            self._queued.append((seq, _FLUSH, self._next, 0))  # durable up to what is queued
            self._flush_queued = True

    def _flushed(self, reply: Reply, upto: int) -> Flushed:
        self._flush_queued = False
        self._last = self._last_flush = reply.done_ns  # the flush is charged on its own
        error = OSError(reply.errno, reply.strerror or "I/O error") if reply.errno else None
        return Flushed(upto, reply.done_ns - reply.started_ns, error)

    def _issue(self) -> None:
        depth = 1 if self._failures else QUEUED
        while self._free and len(self._queued) < depth and self._next < self.size:
            slot = self._free.pop()
            length = min(self.block, self.size - self._next)
            if self.write:
                assert self.pattern is not None
                words = self.pattern.expected(self._next, length)
                self._executor.buffer(slot)[:length] = memoryview(words).cast("B")
            seq = self._executor.submit(WRITE if self.write else READ, slot, self._next, length)
            self._queued.append((seq, slot, self._next, length))
            self._next += length

    def _done(self, reply: Reply, slot: int, pos: int, length: int) -> Done:
        started, done = reply.started_ns, reply.done_ns
        skipped = stall = 0
        if not reply.errno:
            self._failures = 0
            gap = started - self._last
            if self._first:
                # The ramp: a device may wake from power saving on it, and one that was
                # busy until just before (the other pass) may still be finishing that.
                interval, self._first = 0, False
                timed = False
            elif gap > STALL_GAP_NS:  # the host did not issue this in time: the device idled
                interval, stall, timed = done - started, gap, True
            else:
                interval, timed = done - self._last, True
            self._last = done
            error = None
        else:
            self._failures += 1
            interval, self._last, timed = 0, done, False  # failures are not timed
            error = OSError(reply.errno, reply.strerror or "I/O error")
            # ddrescue skips only after a second failure in a row: until then requests may be
            # queued past this one, and the next block may well read.
            if self.skip is not None and self._failures > 1 and not self._queued:
                skipped = min(self.skip(self._failures, pos, length), self.size - pos - length)
                self._next = pos + length + skipped
        buffer = self._executor.buffer(slot)
        return Done(
            pos, length, buffer, started, done, interval, stall, timed, error, skipped, slot
        )


class ThreadExecutor:
    """An executor thread of this process, over a medium of this process (module doc)."""

    def __init__(self, medium: Medium, clock: Callable[[], int], slots: int, block: int) -> None:
        self._medium = medium
        self._clock = clock
        self._buffers = [mmap.mmap(-1, block) for _ in range(slots)]  # page-aligned (O_DIRECT)
        self._views = [memoryview(b) for b in self._buffers]
        self._requests: queue.Queue[tuple[int, str, int, int, int] | None] = queue.Queue()
        self._replies: queue.Queue[Reply] = queue.Queue()
        self._seq = 0
        self._thread = threading.Thread(target=self._run, name="flashmark-surface-io", daemon=True)
        self._thread.start()

    def buffer(self, slot: int) -> memoryview:
        return self._views[slot]

    def submit(self, op: str, slot: int, offset: int, length: int) -> int:
        self._seq += 1
        self._requests.put((self._seq, op, slot, offset, length))
        return self._seq

    def wait(self, seq: int, timeout_s: float) -> Reply | None:
        try:
            reply = self._replies.get(timeout=timeout_s)
        except queue.Empty:
            return None
        assert reply.seq == seq, (reply.seq, seq)  # one at a time, in order
        return reply

    def close(self) -> None:
        self._requests.put(None)
        self._thread.join()

    def _run(self) -> None:
        while (request := self._requests.get()) is not None:
            seq, op, slot, offset, length = request
            view = self._views[slot][:length]
            started = self._clock()
            try:
                perform(self._medium, op, view, offset)
            except OSError as error:
                reply = Reply(seq, error.errno or 0, started, self._clock(), error.strerror or "")
            except BaseException as error:  # raised in the scan's thread (Ctrl-C, NotEnoughSpace)
                reply = Reply(seq, 0, started, self._clock(), raised=error)
            else:
                reply = Reply(seq, 0, started, self._clock())
            self._replies.put(reply)
