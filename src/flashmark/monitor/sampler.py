"""The sampler: reads one device's /proc/diskstats line in a background thread while a test,
a workload or a command runs, and hands back a MonitorSeries.

The sampler costs one read of /proc/diskstats per interval (benchmarks/monitor_overhead.py
measures it: well under 1% of one core at 1 s).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType

from flashmark.monitor.series import (
    MonitorSample,
    MonitorSeries,
    PhaseSummary,
    compute_sample,
    summarise,
)
from flashmark.system.diskstats import (
    DiskCounters,
    DiskstatsUnreadable,
    MonitorDeviceNotFound,
    normalise_device_name,
    read_device_counters,
)
from flashmark.system.sysroot import SystemRoots


class DiskMonitor:
    """Samples one device's /proc/diskstats line in a background thread, every `interval_s` on
    a drift-free schedule: the first reading in __enter__ (a missing device fails at once), a
    final one in __exit__.

        with DiskMonitor("mmcblk0", SystemRoots.from_environment()) as monitor:
            monitor.mark("unpack")       # optional named phases
        series = monitor.series()
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
        if self._thread is not None and self._thread.ident is None:
            self._thread = None  # a signal came between making the thread and starting it
        if self._thread is not None:
            try:
                self._thread.join()
            except BaseException:
                # A signal cut the wait (flashmark's handler raises in the main thread): the
                # thread ends at once now that _stop is set, so wait for it before going on.
                self._thread.join()
                raise
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
