"""`flashmark monitor` as library calls: a device watched until it is stopped (a live view), or
while a command runs, each giving a MonitorRecording. A signal stops a live view and is handed
back with the recording.

    device = monitored_device(None)   # the device holding the current folder
    live = monitor_live(MonitorRequest(device, count=10), on_sample=print_line)
    ran = record_command(MonitorRequest(device, command=("tar", "xf", "big.tar")))
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import Interrupted, UsageError
from flashmark.monitor.command import CommandOutcome, run_supervised
from flashmark.monitor.document import MonitorRecording, recording
from flashmark.monitor.sampler import DiskMonitor
from flashmark.monitor.series import MonitorSample
from flashmark.system.diskstats import device_for_path
from flashmark.system.sysroot import SystemRoots

OnSample = Callable[[MonitorSample], None]


@dataclass(frozen=True)
class MonitorRequest:
    """What `flashmark monitor` is asked: the device (a name from /proc/diskstats or a node),
    how often to read its counters, and either how many intervals to show (a live view; None:
    until stopped) or the command to record it around, with its time limit and whether its
    output goes to stderr (stdout then carries only the JSON document)."""

    device: str
    interval_s: float = 1.0
    count: int | None = None
    command: tuple[str, ...] = ()
    timeout_s: float | None = None
    output_to_stderr: bool = False


@dataclass(frozen=True)
class LiveRecording:
    """A live view's recording, and the signal that ended it (None: it ran its count)."""

    recording: MonitorRecording
    stopped_by: Interrupted | None


@dataclass(frozen=True)
class MonitoredCommand:
    """The recording of the device while the command ran, and how the command ended."""

    recording: MonitorRecording
    outcome: CommandOutcome


def monitored_device(given: str | None, roots: SystemRoots | None = None) -> str:
    """The device to watch: the one given, else the one holding the current folder."""
    name = given or device_for_path(Path.cwd(), roots or SystemRoots.from_environment())
    if name is None:
        raise UsageError(
            "the current folder is not on a block device (tmpfs, overlay or network): "
            "name the device, e.g. `flashmark monitor mmcblk0`"
        )
    return name


def monitor_live(
    request: MonitorRequest, *, on_sample: OnSample, roots: SystemRoots | None = None
) -> LiveRecording:
    """Sample the device, each sample handed to `on_sample` (from the sampler's thread), until
    `request.count` samples or a signal."""
    counted = _Counted(on_sample, request.count)
    started = time.time()
    monitor = DiskMonitor(
        request.device,
        roots or SystemRoots.from_environment(),
        request.interval_s,
        on_sample=counted,
    )
    stopped_by: Interrupted | None = None
    monitor.start()
    try:
        while not counted.done.wait(0.2):
            pass
    except Interrupted as signal_stop:  # Ctrl-C is how a live view normally ends
        stopped_by = signal_stop
    finally:
        monitor.stop()
    series = monitor.series()
    return LiveRecording(recording(series, (), None, started, time.time()), stopped_by)


def record_command(
    request: MonitorRequest,
    *,
    on_sample: OnSample | None = None,
    roots: SystemRoots | None = None,
) -> MonitoredCommand:
    """Run the request's command under watch (monitor.command: its own process group, stopped
    whole at the time limit or when flashmark stops) and record the device meanwhile."""
    roots = roots or SystemRoots.from_environment()
    started = time.time()
    with DiskMonitor(request.device, roots, request.interval_s, on_sample=on_sample) as monitor:
        ran = run_supervised(
            request.command,
            timeout_s=request.timeout_s,
            output_to_stderr=request.output_to_stderr,
        )
    series = monitor.series()
    result = recording(series, request.command, ran.status, started, time.time(), ran.timed_out)
    return MonitoredCommand(result, ran)


class _Counted:
    """Hands each sample on, and says when `limit` samples were taken (None: never)."""

    def __init__(self, on_sample: OnSample, limit: int | None) -> None:
        self._on_sample = on_sample
        self._limit = limit
        self._lines = 0
        self._lock = threading.Lock()
        self.done = threading.Event()

    def __call__(self, sample: MonitorSample) -> None:
        with self._lock:
            self._on_sample(sample)
            self._lines += 1
            if self._limit is not None and self._lines >= self._limit:
                self.done.set()
