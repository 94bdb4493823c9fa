"""Adaptive lengths (flashmark.bench.lengths) with real fio on throttled loop devices: which tests
keep their 3 s first window, and how close those read the card's caps.

The kernel block throttle grants 100 ms of budget at a time, so a throttled card completes
I/O in bursts. Its rate between whole bursts (flashmark.fio.window.WholeBursts) is exact in
3 s, where the window's count could be off by one burst (3.3% of 3 s) and sent every test to
its full length. Truth is the throttle's cap.
"""

import dataclasses
import re
from pathlib import Path

import pytest

from flashmark.bench.measure import measure
from flashmark.bench.plan import default_settings, plan_tests
from flashmark.bench.profiles import PROFILES
from flashmark.bench.target import resolve_target
from flashmark.system.sysroot import SystemRoots
from flashmark.testing.throttle import DeviceCaps, EmulatedDevice
from tests.integration.emulation import flashmark_json, throttled_runner

pytestmark = [pytest.mark.root, pytest.mark.fio]

MiB = 2**20
A1_CARD = DeviceCaps("a1-card", 1500, 500, 40_000_000, 10_000_000)
TOLERANCE = 0.005  # of truth, as tests/integration/test_exact_rates.py


def test_a_throttled_card_is_graded_from_its_first_windows():
    with EmulatedDevice(A1_CARD, size_bytes=256 * MiB) as device:
        document = flashmark_json(device, str(device.mount_point), "--profile", "a1")
    truth = {  # the window's own rate of writes: the host's (durable adds the fsync)
        "seq-write": ("write", "accepted_bw_bytes", A1_CARD.write_bps),
        "rand-read-4k": ("read", "iops", A1_CARD.read_iops),
        "rand-write-4k": ("write", "accepted_iops", A1_CARD.write_iops),
        "rand-read-4k-q32": ("read", "iops", A1_CARD.read_iops),
        "rand-write-4k-q32": ("write", "accepted_iops", A1_CARD.write_iops),
    }
    assert [test["name"] for test in document["tests"]] == list(truth)
    again = []
    for test in document["tests"]:
        direction_name, metric, expected = truth[test["name"]]
        direction = test[direction_name]
        assert direction[metric] == pytest.approx(expected, rel=TOLERANCE), test["name"]
        interval = direction["ci95"]
        low, high = interval["bw_bytes"]
        assert low <= direction["bw_bytes"] <= high
        if test["name"] == "seq-write":  # before the preparation: its full length is free
            assert direction["runtime_ms"] == 8000
            continue
        if test["lengthened"] is not None:
            # A stall of this shared host inside a first window (a 100 ms grant reaped late)
            # widens its interval, and the test is extended or runs again, as designed: 2 of 8
            # runs here.
            lengthened = test["lengthened"]
            assert lengthened.startswith("its first window was not enough: "), test
            assert "interval" in lengthened
            extended = re.search(r"extended to (\d+) s in \d+ windows, pooled$", lengthened)
            if extended is not None:
                assert direction["runtime_ms"] == int(extended.group(1)) * 1000 <= 8000
            else:
                assert direction["runtime_ms"] == 8000
            again.append(test["name"])
            continue
        assert direction["runtime_ms"] == 3000
        assert "whole bursts" in interval["method"]
        assert (high - low) / 2 <= 0.01 * direction["bw_bytes"], test["name"]
    assert len(again) <= 1, f"first windows not enough: {again}"


def test_large_blocks_skip_a_first_window_too_short_for_them(tmp_path: Path):
    # 40 MB/s: seq-read's 1 MiB blocks fill a first window (114 in 3 s); 16 MiB blocks would
    # be 7, fewer than 20, so rand-read-16M measures as long as 20 take (10 s) at once.
    card = DeviceCaps("16M-card", read_bps=40_000_000)
    full = PROFILES["full"]
    tests = tuple(spec for spec in full.tests if spec.name in ("seq-read", "rand-read-16M"))
    profile = dataclasses.replace(full, tests=tests, workloads=())
    settings = default_settings(
        profile, size_bytes=64 * MiB, runtime_s=None, buffered=False, destructive=False
    )
    settings = dataclasses.replace(settings, runtime_s=4)  # shorter than 20 transfers need
    with EmulatedDevice(card, size_bytes=256 * MiB) as device:
        assert device.mount_point is not None
        target = resolve_target(
            str(device.mount_point),
            size_bytes=settings.size_bytes,
            destructive=False,
            roots=SystemRoots(),
        )
        runner = throttled_runner(device, tmp_path)
        plan = plan_tests(profile, settings, target, log_folder=runner.log_folder)
        measured = measure(plan, runner)
    seq_read, large = measured.tests
    assert seq_read.lengthened is None and seq_read.read is not None
    assert seq_read.read.runtime_ms == 3000
    assert large.lengthened == (
        "measured at full length at once: at most 7 reads would fit in its first window at the "
        "fastest read rate so far (40.0 MB/s; fewer than 20)"
    )
    assert large.read is not None and large.read.runtime_ms == 10_000
    assert large.read.bw_bytes == pytest.approx(card.read_bps, rel=0.01)
