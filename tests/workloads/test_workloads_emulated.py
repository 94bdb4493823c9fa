"""Workloads against truth: emulated cards whose random and sequential write speeds are known.

Seed 002's finding is the scenario: desktop install time follows random-write IOPS, not
sequential MB/s (its Class 4 card wrote sequentially faster than the SanDisk Ultra yet took
2.5 times longer). Two emulated cards, one with fast sequential but slow random writes and
one the other way round, must rank the same way under `pkg-install`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from flashmark.units import MB, MiB
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

pytestmark = pytest.mark.root

SCALE = 0.01  # ~750 throttled writes: 7.5 s on the slow-random card, ~3 s on the other

FAST_SEQUENTIAL_SLOW_RANDOM = DeviceCaps(
    "fast-seq-slow-random", write_iops=100, write_bps=40 * MB, read_iops=2000, read_bps=40 * MB
)
SLOW_SEQUENTIAL_FAST_RANDOM = DeviceCaps(
    "slow-seq-fast-random", write_iops=1000, write_bps=4 * MB, read_iops=2000, read_bps=40 * MB
)


def workload_in(device: EmulatedDevice, name: str) -> dict[str, Any]:
    """`flashmark workload NAME --json` run inside the device's throttle."""
    argv = [sys.executable, "-m", "flashmark", "workload", name, str(device.target),
            "--scale", str(SCALE), "--json", "--interval", "0.5"]  # fmt: skip
    done = subprocess.run(device.command(argv), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (entry,) = json.loads(done.stdout)["workloads"]
    assert isinstance(entry, dict)
    return entry


def test_pkg_install_ranks_cards_by_random_writes_like_seed_002() -> None:
    times = {}
    for caps in (FAST_SEQUENTIAL_SLOW_RANDOM, SLOW_SEQUENTIAL_FAST_RANDOM):
        with EmulatedDevice(caps, size_bytes=256 * MiB) as device:
            entry = workload_in(device, "pkg-install")
            assert list(device.target.iterdir()) == [device.target / "lost+found"]
        times[caps.name] = entry["seconds"]
        monitor = entry["monitor"]
        assert monitor is not None and monitor["device"] == device.device.removeprefix("/dev/")
        # Every fsync reached the device as at least one write request while it was timed.
        assert monitor["summary"]["write_ios"] >= 0.9 * entry["counts"]["fsyncs"]
        assert monitor["summary"]["write_bytes"] >= entry["counts"]["bytes_written"] * 0.5
    assert times["slow-seq-fast-random"] < times["fast-seq-slow-random"] / 1.5, times
