"""What the I/O monitor costs: CPU time of the sampler per second of monitoring.

The monitor runs beside every test and workload, so it must not steal the CPU a slow SBC needs
for its I/O: the goal is under 1% of one core at 1 s intervals. This measures the sampler
thread's own CPU time (time.thread_time in the thread, plus the process's total as a check)
over a stretch of monitoring at several intervals, on this machine's /proc/diskstats.

    python benchmarks/monitor_overhead.py [--seconds 20] [--device NAME]

Prints a table; never asserts (benchmarks print, tests assert).
"""

from __future__ import annotations

import argparse
import os
import resource
import threading
import time
from pathlib import Path

from flashmark.monitor.sampler import DiskMonitor
from flashmark.monitor.series import MonitorSample
from flashmark.system.diskstats import device_for_path, parse_diskstats
from flashmark.system.sysroot import SystemRoots


def measure(device: str, interval_s: float, seconds: float) -> tuple[float, float, int]:
    """(sampler thread CPU %, whole-process CPU %, samples) over `seconds` of monitoring."""
    thread_cpu: list[float] = []

    def on_sample(sample: MonitorSample) -> None:
        thread_cpu.append(time.thread_time())  # runs in the sampler thread

    roots = SystemRoots()
    usage_before = resource.getrusage(resource.RUSAGE_SELF)
    with DiskMonitor(device, roots, interval_s, on_sample=on_sample) as monitor:
        started = time.monotonic()
        time.sleep(seconds)  # the main thread sleeps: what the process uses is the sampler
        elapsed = time.monotonic() - started
    usage_after = resource.getrusage(resource.RUSAGE_SELF)
    process_cpu = (usage_after.ru_utime - usage_before.ru_utime) + (
        usage_after.ru_stime - usage_before.ru_stime
    )
    sampler_cpu = thread_cpu[-1] if thread_cpu else 0.0
    samples = len(monitor.series().samples)
    return 100 * sampler_cpu / elapsed, 100 * process_cpu / elapsed, samples


def parse_cost_us(device: str, repeats: int = 2000) -> float:
    """Microseconds for one read + parse of /proc/diskstats (the work of one sample)."""
    path = Path("/proc/diskstats")
    started = time.perf_counter()
    for _ in range(repeats):
        parse_diskstats(path.read_text())[device]
    return (time.perf_counter() - started) / repeats * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    device = args.device or device_for_path(Path.cwd(), SystemRoots())
    if device is None:
        raise SystemExit("the current folder is not on a block device: pass --device NAME")
    lines = len(Path("/proc/diskstats").read_text().splitlines())
    print(f"device {device}; /proc/diskstats has {lines} lines; {os.cpu_count()} CPUs")
    print(f"one read + parse of /proc/diskstats: {parse_cost_us(device):.0f} µs")
    print()
    print(f"{'interval':>9} {'seconds':>8} {'samples':>8} {'sampler CPU':>12} {'process CPU':>12}")
    started = time.monotonic()
    for interval in (1.0, 0.1):
        sampler, process, samples = measure(device, interval, args.seconds)
        print(
            f"{interval:>8.1f}s {args.seconds:>8.0f} {samples:>8} {sampler:>11.3f}% "
            f"{process:>11.3f}%"
        )
    print()
    print("CPU % is of one core. Goal: under 1% at 1 s intervals.")
    print(f"wall time {time.monotonic() - started:.0f} s; threads at the end: "
          f"{threading.active_count()}")  # fmt: skip


if __name__ == "__main__":
    main()
