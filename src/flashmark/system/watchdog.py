"""A watchdog on every device operation: a device that stops answering ends the operation with
DeviceHung (exit 5) within a stated bound, instead of hanging flashmark.

A hung card fails no request, it never completes them. Progress is a completed request: from
/proc/diskstats while the device has requests in flight (Documentation/admin-guide/iostats.rst),
else fio's status line, or a surface scan's own completions. The bound and why: the constants
below; when it fires, fio is killed and not waited for (a process in state D ends only when its
request returns). README, "Safety".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from flashmark.errors import DeviceFailed
from flashmark.system.diskstats import DiskCounters
from flashmark.units import format_size

_READ_EVERY_S = 0.5  # how often the device's counters are read: cheap, but not free on an SBC
DEFAULT_FLOOR_S = 30.0  # drivers/scsi/sd.h: SD_TIMEOUT (30 * HZ), a SCSI disk command's time
# A quarter of the slowest SD speed class, Class 2's 2 MB/s (SD Physical Layer Simplified
# Specification 4.10, "Speed Class"): a 64 MiB surface block at this rate takes over 2 minutes.
SLOWEST_RATE_BPS = 500_000
# A card whose garbage collection stalls for seconds is slow, not gone.
LATENCY_FACTOR = 10


class DeviceHung(DeviceFailed):
    """The device completed no request for longer than the bound (exit 5)."""


@dataclass(frozen=True)
class StallBound:
    seconds: float
    reason: str  # how it was chosen, for the message: "max(30 s floor, ...)"

    def hung(self, what: str, silent_s: float) -> DeviceHung:
        """The error of `what` when no request completed for `silent_s`, past this bound."""
        return DeviceHung(
            f"{what}: the device stopped answering: no request completed for "
            f"{silent_s:.0f} s (the bound is {self.seconds:.0f} s: {self.reason})"
        )


class Watchdog:
    """A run's bounds: the floor, and the slowest request the device has completed so far."""

    def __init__(self, floor_s: float = DEFAULT_FLOOR_S) -> None:
        self.floor_s = floor_s
        self.slowest_s = 0.0

    def saw_latency(self, seconds: float) -> None:
        self.slowest_s = max(self.slowest_s, seconds)

    def bound(self, request_bytes: int) -> StallBound:
        size_s = request_bytes / SLOWEST_RATE_BPS
        latency_s = LATENCY_FACTOR * self.slowest_s
        seconds = max(self.floor_s, size_s, latency_s)
        request = f"{_short(size_s)} s for a {format_size(request_bytes)} request at 0.5 MB/s"
        parts = [f"{self.floor_s:g} s floor", request]
        if self.slowest_s:
            parts.append(f"{LATENCY_FACTOR} x {_short(self.slowest_s)} s, the slowest request seen")
        return StallBound(seconds, f"max({', '.join(parts)})")


class StallWatch:
    """One operation's watch: `check()` raises DeviceHung once no progress has been seen for
    the bound. Progress comes from `device` (a diskstats reader, None without one) and from
    `moved()`, which the operation calls on any sign of its own (fio's non-zero rate)."""

    def __init__(
        self,
        bound: StallBound,
        what: str,
        device: Callable[[], DiskCounters | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bound = bound
        self.what = what  # e.g. "/dev/sdb during rand-read-4k"
        self._device = device
        self._clock = clock
        self._moves = 0
        self._last: tuple[int, int] | None = None
        self._since = clock()
        self._read_at = float("-inf")

    def moved(self) -> None:
        self._moves += 1

    def check(self) -> None:
        now = self._clock()
        if now - self._read_at < _READ_EVERY_S:
            return
        self._read_at = now
        completed, in_flight = self._counters()
        token = (completed, self._moves)
        if token != self._last or in_flight == 0:
            self._last, self._since = token, now
            return
        silent = now - self._since
        if silent > self.bound.seconds:
            raise self.bound.hung(self.what, silent)

    def _counters(self) -> tuple[int, int | None]:
        """(requests completed, requests in flight or None when unknown)."""
        counters = self._device() if self._device is not None else None
        if counters is None:
            return 0, None
        completed = counters.reads + counters.writes
        completed += (counters.discards or 0) + (counters.flushes or 0)
        return completed, counters.in_flight


def _short(seconds: float) -> str:
    return f"{seconds:.3g}"
