"""The monitor against truth: a loop device under the block throttle, driven by real fio.

The throttle caps the device's requests per second exactly (docs/design.md, "Testing against
truth"); what the monitor reads from /proc/diskstats while fio runs must be that cap.
"""

from __future__ import annotations

import statistics
import subprocess

import pytest

from flashmark.monitor.sampler import DiskMonitor
from flashmark.system.sysroot import SystemRoots
from flashmark.units import MiB
from tests.emulation.runs import DEVICE_TIMING
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

pytestmark = [pytest.mark.root, pytest.mark.fio, DEVICE_TIMING]

RUNTIME_S = 4
INTERVAL_S = 0.5


def fio_on(device: EmulatedDevice, rw: str) -> list[str]:
    # At nice -10: the throttle's cap holds only while fio keeps the device busy (as
    # tests/emulation/runs.py runs it).
    return device.command([
        "nice", "-n", "-10",
        "fio", "--name=monitor-check", f"--filename={device.device}", f"--rw={rw}",
        "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=8", "--size=64M",
        f"--runtime={RUNTIME_S}", "--time_based", "--randrepeat=0", "--output-format=json",
    ])  # fmt: skip


def steady_mean(values: list[float]) -> float:
    """The mean of the intervals fio covered whole: those between the first and the last in
    which the device did anything. fio's I/O runs without a break from its start to its exit,
    and either may fall anywhere in an interval (fio's start-up took more than one 0.5 s
    interval on a loaded host: 0, 183, then 301, 298, ... at 300 IOPS)."""
    active = [index for index, value in enumerate(values) if value > 0]
    assert len(active) >= 3, values
    return statistics.fmean(values[active[0] + 1 : active[-1]])


@pytest.mark.parametrize(
    ("caps", "rw", "metric"),
    [
        (DeviceCaps("write-capped", write_iops=300), "randwrite", "write_iops"),
        (DeviceCaps("read-capped", read_iops=700), "randread", "read_iops"),
    ],
    ids=["random-write-300-iops", "random-read-700-iops"],
)
def test_monitor_iops_during_a_throttled_fio_run_match_the_cap(
    caps: DeviceCaps, rw: str, metric: str
) -> None:
    cap = caps.effective_iops(caps.write_iops if metric == "write_iops" else caps.read_iops)
    with EmulatedDevice(caps, size_bytes=128 * MiB, filesystem=False) as device:
        with DiskMonitor(device.device, SystemRoots(), INTERVAL_S) as monitor:
            subprocess.run(fio_on(device, rw), check=True, capture_output=True,
                           timeout=RUNTIME_S + 60)  # fmt: skip
        series = monitor.series()
    samples = [getattr(s, metric) for s in series.samples]
    assert len(samples) >= RUNTIME_S / INTERVAL_S
    measured = steady_mean(samples)
    assert measured == pytest.approx(cap, rel=0.03), samples
    # Every fio request is 4 KiB; the block layer may merge two that happen to be adjacent into
    # one completion, so the bytes are 4 KiB per request completed or merged.
    for s in series.samples[1:-1]:
        requests = s.read_ios + s.write_ios + (s.read_merges or 0) + (s.write_merges or 0)
        assert s.read_bytes + s.write_bytes == 4096 * requests, s
