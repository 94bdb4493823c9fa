"""`flashmark run --profile sustained` on an emulated card with a write cache: the result's
cache size within 5% of the model's and its burst and sustained rates within 2%, and the speed
classes graded on the sustained rate. Root, FUSE, nbdkit and fio."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from flashmark.stats import judge_bounds
from flashmark.testing.flash import FlashModel

pytestmark = [pytest.mark.flash, pytest.mark.fio]

MB = 1_000_000
KiB, MiB = 1 << 10, 1 << 20

# A card with an SLC-like cache: 48 MiB at 60 MB/s, then 12 MB/s; no idle drain, so the
# cache stays full once filled.
CARD = FlashModel(
    claimed_bytes=256 * MiB,
    cache_bytes=48 * MiB,
    cache_write_bps=60 * MB,
    write_bps=12 * MB,
    name="cached card",
)


def test_the_sustained_profile_finds_the_models_cache_and_rates(emulated_flash):
    device = emulated_flash(CARD)
    done = subprocess.run(
        [sys.executable, "-m", "flashmark", "run", device.path, "--destructive", "--yes",
         "--no-save", "--profile", "sustained", "--size", "112M", "--json"],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode in (0, 8), done.stderr[-3000:]
    assert "sustained-write stops when its rate has been steady" in done.stderr
    document = json.loads(done.stdout)
    (test,) = document["tests"]
    assert test["name"] == "sustained-write"
    sustained = test["write"]["sustained"]
    card = device.stats()
    idle = f"device idle {card.idle_ns / 1e6:.0f} ms (longest {card.longest_idle_ns / 1e6:.0f})"
    assert sustained["cache_bytes"] == pytest.approx(CARD.cache_bytes, rel=0.05), idle
    assert sustained["burst_bw_bytes"] == pytest.approx(
        CARD.burst_write_bps_at(512 * KiB), rel=0.02
    ), idle
    assert sustained["sustained_bw_bytes"] == pytest.approx(
        CARD.sustained_write_bps_at(512 * KiB), rel=0.02
    ), idle
    grades = document["grades"]
    # 12 MB/s sustained: U3 (30 MB/s) fails although the burst is 60 MB/s, and U1 passes.
    assert grades["U3"]["verdict"] == "fail"
    assert grades["U3"]["checks"][0]["test"] == "sustained-write"
    # Each verdict is its checks' intervals' side of their thresholds (the worst of them).
    for name in ("U1", "U3"):
        assert grades[name]["verdict"] == worst_verdict(grades[name]["checks"]), name
    # A host stall the latency log cannot see (the kernel's, FUSE's or nbdkit's threads not
    # run: the card sat idle inside a write) slows one sub-unit, or one write's busy time, and
    # flashmark cannot tell it from the card: one is "uncertain" by its rule, two "fail"
    # (bench/speed_class_rate.py). So U1 passes where the card never sat idle; after one idle
    # gap it may be uncertain, never fail; after more, the rule above is what holds.
    if card.idle_ns == 0:
        assert grades["U1"]["verdict"] == "pass", grades["U1"]
    elif card.idle_ns == card.longest_idle_ns:
        assert grades["U1"]["verdict"] in ("pass", "uncertain"), (idle, grades["U1"])
    # Graded as the SD specification measures speed classes: the slowest 4 MiB sub-unit after
    # the cache (a minimum, so host delays can only lower it) and each write's busy time.
    assert sustained["cache_exceeded"] is True and sustained["stopped_by"] == "size limit"
    units = sustained["sub_units"]
    assert units["from_bytes"] >= sustained["cache_bytes"]
    assert units["min_bw_bytes"] <= units["median_bw_bytes"]
    assert units["median_bw_bytes"] == pytest.approx(
        CARD.sustained_write_bps_at(512 * KiB), rel=0.02
    )
    rate, busy = grades["U1"]["checks"]
    assert rate["name"] == "slowest 4 MiB sub-unit after the write cache"
    assert busy["at_most"] is True and busy["threshold"] == 250


def worst_verdict(checks: list[dict[str, Any]]) -> str:
    """A grade's verdict from its checks (bench/grading/classes.py grade_verdict): fail when an
    interval is wholly on the wrong side of its threshold, uncertain when one holds it."""
    verdicts = []
    for check in checks:
        low, high = check["interval"]
        verdict = judge_bounds(low, high, check["threshold"], at_most=check["at_most"])
        verdicts.append(verdict.value)
    return next((v for v in ("fail", "uncertain") if v in verdicts), "pass")


def test_a_cache_larger_than_the_test_is_flagged_and_no_class_passes_on_the_burst(
    emulated_flash,
):
    card = FlashModel(
        claimed_bytes=256 * MiB,
        cache_bytes=200 * MiB,
        cache_write_bps=60 * MB,
        write_bps=12 * MB,
        name="large cache",
    )
    device = emulated_flash(card)
    done = subprocess.run(
        [sys.executable, "-m", "flashmark", "run", device.path, "--destructive", "--yes",
         "--no-save", "--profile", "sustained", "--size", "64M", "--json"],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode in (0, 8), done.stderr[-3000:]
    document = json.loads(done.stdout)
    sustained = document["tests"][0]["write"]["sustained"]
    assert sustained["cache_exceeded"] is False and sustained["cache_bytes"] is None
    assert sustained["written_bytes"] == 64 * MiB and sustained["stopped_by"] == "size limit"
    for name in ("U1", "U3"):  # 60 MB/s, but only the burst was seen
        assert document["grades"][name]["verdict"] == "uncertain"
        assert "may still be the burst" in document["grades"][name]["verdict_reason"]
