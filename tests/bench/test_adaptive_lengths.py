"""Adaptive lengths (flashmark.bench.lengths) with real fio on throttled loop devices: each test
keeps its 3 s first window exactly when the rule says it is enough, is lengthened as the rule
says otherwise, and reads the card's caps either way. The a1 profile grades: its tests stop
once every threshold they serve is decided on their decision interval (a card at the
thresholds runs to the cap, a card clearly past them stops at its first window), and not
early with --runtime.

Which first windows are enough is the device's and the host's doing, not the test's: a stall of
a busy host inside a first window (a 100 ms grant reaped late) widens its interval, and seq-read's
1 MiB transfers come 3 or 4 to a 100 ms grant, which alone puts its 3 s window's edges 0.9% off,
so its interval is near +-1% on any host. So these tests assert the decision flashmark made from
what it measured. That a throttled card's first windows are enough where its bursts are alike
(the rate between whole bursts, flashmark.fio.window.WholeBursts) is asserted on recorded windows
(tests/bench/test_benchmark.py, tests/data/fio/quick-a1-card-adaptive), where it cannot vary.
Truth is the throttle's cap, which the device delivers only while the host lets it: at loads of
6 to 10 seq-write read 9.89 MB/s of 10 and rand-write-4k 506 IOPS of 500 (-1.1%, +1.2%: the loop
device's and the throttle's kernel threads short of CPU, then catching up), each with its
window's rates spread wider than on an idle host.
"""

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from flashmark.bench.grading.classes import GRADE_RULES
from flashmark.bench.lengths import (
    AT_ONCE,
    FIRST_WINDOW_S,
    MIN_TRANSFERS,
    TARGET_HALF_WIDTH_PCT,
    WRITE_FLOOR_BYTES,
    FastestRates,
    at_once,
    bursty_reason,
    full_length,
)
from flashmark.bench.measure import measure
from flashmark.bench.model import TestResult
from tests.bench.synthetic import large_blocks_plan
from tests.emulation.runs import DEVICE_TIMING, flashmark_json, throttled_runner
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

pytestmark = [pytest.mark.root, pytest.mark.fio, DEVICE_TIMING]

MiB = 2**20
A1_CARD = DeviceCaps("a1-card", 1500, 500, 40_000_000, 10_000_000)
TOLERANCE = 0.005  # of truth, as tests/bench/test_exact_rates.py
NOT_ENOUGH = "its first window was not enough: "
EXTENDED = re.compile(r"; extended to (\d+) s in \d+ windows, pooled$")


def first_window_enough(direction: dict[str, Any]) -> bool:
    """flashmark.bench.lengths.full_length's rule on one direction of a document: its 95%
    interval within +-TARGET_HALF_WIDTH_PCT of the mean, over at least MIN_TRANSFERS."""
    low, high = direction["ci95"]["bw_bytes"]
    half_width_pct = float((high - low) / 2 / direction["bw_bytes"] * 100)
    return half_width_pct <= TARGET_HALF_WIDTH_PCT and transfers(direction) >= MIN_TRANSFERS


def transfers(direction: dict[str, Any]) -> float:
    accepted = direction["accepted_iops"]
    iops = float(accepted if accepted is not None else direction["iops"])
    return iops * float(direction["runtime_ms"]) / 1000


def thresholds_served(name: str) -> list[tuple[str, float]]:
    """(metric, threshold) of every class check that reads test `name`'s figure."""
    return sorted(
        {
            (check.metric, check.threshold)
            for rule in GRADE_RULES
            for check in rule.checks
            if check.test == name and not check.sustained
        }
    )


def decided(name: str, direction: dict[str, Any]) -> bool:
    """The rule of a test that stops on its verdict, on one direction of a document: every
    threshold it serves outside its decision interval (a write's high end at the rate the host
    accepted, as the grading reads it), over at least MIN_TRANSFERS (a write: and
    WRITE_FLOOR_BYTES written)."""
    decision = direction["decision"]
    accepted = direction["accepted_iops"]
    factor = max(1.0, float(accepted) / direction["iops"]) if accepted else 1.0
    for metric, threshold in thresholds_served(name):
        low, high = decision["iops" if metric.endswith("iops") else "bw_bytes"]
        scale = 1.0 if metric.endswith("iops") else 1e6  # MB/s
        if low / scale <= threshold <= high * factor / scale:
            return False
    if accepted is not None:  # a write
        written = float(direction["accepted_bw_bytes"]) * float(direction["runtime_ms"]) / 1000
        if written < WRITE_FLOOR_BYTES:
            return False
    return transfers(direction) >= MIN_TRANSFERS


def measured_again(test: dict[str, Any]) -> bool:
    """Its first window was not enough and it ran once more at full length (not extended)."""
    lengthened = test["lengthened"] or ""
    return lengthened.startswith(NOT_ENOUGH) and EXTENDED.search(lengthened) is None


def assert_length_follows_the_rule(
    test: dict[str, Any], direction: dict[str, Any], before: list[dict[str, Any]], runtime_s: int
) -> None:
    """The length a test measured is the one flashmark.bench.measure decides on from what it
    measured: the first window kept when enough; extended (pooled) or measured again at full
    length when not, saying why; or at full length at once when an earlier test at its queue
    depth or below found the device completing in bursts (measured again after its first
    window, flashmark.bench.lengths.bursty_reason)."""
    lengthened = test["lengthened"]
    name = test["name"]
    on_verdict = direction["decision"] is not None  # stops once its thresholds are decided
    enough = decided(name, direction) if on_verdict else first_window_enough(direction)
    if lengthened is None:
        assert direction["runtime_ms"] == FIRST_WINDOW_S * 1000, name
        assert enough, name
        return
    if lengthened.startswith(NOT_ENOUGH):
        reason = lengthened.removeprefix(NOT_ENOUGH)
        whys = ("undecided", "the floor of a write test") if on_verdict else ("interval",)
        assert any(why in reason for why in (*whys, "fewer than")), lengthened
        extended = EXTENDED.search(lengthened)
        if extended is not None:
            assert direction["runtime_ms"] == int(extended.group(1)) * 1000 <= runtime_s * 1000
            # Stopped before the cap only once enough.
            assert enough or direction["runtime_ms"] == runtime_s * 1000, lengthened
        else:  # measured again at full length (after extensions, or at once)
            assert direction["runtime_ms"] == runtime_s * 1000, lengthened
        return
    finders = [
        earlier
        for earlier in before
        if measured_again(earlier) and earlier["iodepth"] <= test["iodepth"]
    ]
    assert finders, f"{name}: {lengthened!r} with no earlier test measured again"
    assert lengthened in [bursty_reason(f["name"], f["iodepth"]) for f in finders], name
    assert direction["runtime_ms"] == runtime_s * 1000, name


def assert_seq_write_length(
    test: dict[str, Any], direction: dict[str, Any], runtime_s: int
) -> None:
    """The leading sequential write runs until it has written the area, its full length at
    most (the preparation would write what it does not); a window shorter than a first
    window's, what its ramp left of a fast card's area, is measured again for that long; one
    still undecided below its full length is measured again at full length (measure.py)."""
    lengthened = test["lengthened"]
    if lengthened is None:
        assert FIRST_WINDOW_S * 1000 <= direction["runtime_ms"] <= runtime_s * 1000
        return
    assert test["discarded_s"] > 0, lengthened
    if "undecided: " in lengthened:
        assert direction["runtime_ms"] == runtime_s * 1000, lengthened
        return
    assert lengthened.startswith("it wrote the 128 MiB area ")
    assert lengthened.endswith(", too short a window")
    assert direction["runtime_ms"] == FIRST_WINDOW_S * 1000


# Per test of the a1 profile: its direction, the figure compared with the cap (the window's own
# rate of writes, the host's: durable adds the fsync) and the cap.
A1_TRUTH = {
    "seq-write": ("write", "accepted_bw_bytes", A1_CARD.write_bps),
    "rand-read-4k": ("read", "iops", A1_CARD.read_iops),
    "rand-read-4k-q32": ("read", "iops", A1_CARD.read_iops),
    "rand-write-4k": ("write", "accepted_iops", A1_CARD.write_iops),
    "rand-write-4k-q32": ("write", "accepted_iops", A1_CARD.write_iops),
}


# Seed 002's SanDisk Extreme A1 (3201/1480 4K IOPS, 66/59 MB/s): clearly past every A1
# threshold (+113%, +196%, +490%), clearly short of A2's IOPS (-20%, -26%).
CLEAR_A1_CARD = DeviceCaps("clear-a1-card", 3200, 1480, 66_000_000, 59_000_000)


def a1_document(caps: DeviceCaps, *args: str) -> dict[str, Any]:
    with EmulatedDevice(caps, size_bytes=256 * MiB) as device:
        return flashmark_json(device, str(device.mount_point), "--profile", "a1", *args)


@pytest.fixture(scope="module")
def a1_runs() -> dict[str, dict[str, Any]]:
    """`flashmark run --profile a1 --json` on the card at the A1 thresholds, on the clearly
    A1 card, and on that one with --runtime 4; in parallel, each in its own throttle."""
    runs: dict[str, tuple[DeviceCaps, tuple[str, ...]]] = {
        "at": (A1_CARD, ()),
        "clear": (CLEAR_A1_CARD, ()),
        "runtime": (CLEAR_A1_CARD, ("--runtime", "4")),
    }
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        done = {name: pool.submit(a1_document, caps, *args) for name, (caps, args) in runs.items()}
        return {name: future.result() for name, future in done.items()}


@pytest.fixture(scope="module")
def a1_run(a1_runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return a1_runs["at"]


def lengths_past_the_floor(document: dict[str, Any]) -> list[str]:
    """Each test of an a1 run whose length follows the rule (asserted), and the reasons of
    those that ran past their first window."""
    runtime_s = document["settings"]["runtime_s"]
    past = []
    for index, test in enumerate(document["tests"]):
        direction = test[A1_TRUTH[test["name"]][0]]
        assert direction["decision"] is not None, test["name"]  # judged on it
        if test["name"] == "seq-write":
            assert_seq_write_length(test, direction, runtime_s)
            continue
        assert_length_follows_the_rule(test, direction, document["tests"][1:index], runtime_s)
        if direction["runtime_ms"] != FIRST_WINDOW_S * 1000:
            past.append(f"{test['name']}: {test['lengthened']}")
    return past


def test_tests_at_the_thresholds_run_on_and_clear_ones_stop_at_their_floor(a1_runs):
    at, clear = a1_runs["at"], a1_runs["clear"]
    # Decided at the floor: a clearly A1 card is not measured to +-1%. Its three runs side by
    # side can starve a 2-core host enough to widen a first window past a threshold (3,193 +-
    # 836 IOPS seen), which the rule rightly extends; so a clear run that ran on is run again,
    # alone, and that one must stop at its floor.
    past = lengths_past_the_floor(clear)
    if past:
        clear = a1_document(CLEAR_A1_CARD)
        assert lengths_past_the_floor(clear) == [], f"alone; beside the others: {past}"
    assert clear["grades"]["A1"]["verdict"] == "pass"
    assert clear["grades"]["A2"]["verdict"] == "fail"
    # A card exactly at A1's thresholds cannot be decided: each depth-1 random test ran past
    # its first window (a decision there would be wrong, which the rule allows once in 200),
    # and the grade is never "fail". (Its depth-32 tests are far below A2's and stop.)
    for test in at["tests"]:
        if test["name"] not in ("rand-read-4k", "rand-write-4k"):
            continue
        direction = test[A1_TRUTH[test["name"]][0]]
        assert direction["runtime_ms"] > FIRST_WINDOW_S * 1000, test["name"]
        assert "undecided" in (test["lengthened"] or ""), test["lengthened"]
    assert at["grades"]["A1"]["verdict"] in ("pass", "uncertain")


def test_runtime_measures_every_test_its_full_length_without_a_decision_interval(a1_runs):
    fixed = a1_runs["runtime"]
    assert fixed["settings"]["first_window_s"] is None
    for test in fixed["tests"]:
        direction = test[A1_TRUTH[test["name"]][0]]
        assert test["lengthened"] is None and direction["runtime_ms"] == 4000, test["name"]
        assert direction["decision"] is None and direction["ci95"]["confidence"] == 0.95
    assert fixed["grades"]["A1"]["verdict"] == "pass"


def test_a_throttled_card_keeps_the_first_windows_that_are_enough(a1_run):
    # The lengths follow the rule from what was measured, whatever the host did.
    assert [test["name"] for test in a1_run["tests"]] == list(A1_TRUTH)
    lengths_past_the_floor(a1_run)
    for test in a1_run["tests"]:
        direction = test[A1_TRUTH[test["name"]][0]]
        low, high = direction["ci95"]["bw_bytes"]
        assert low <= direction["bw_bytes"] <= high
        if test["name"] != "seq-write" and test["lengthened"] is None:
            # A throttled card's first window is read as a device completing in bursts: between
            # its whole bursts, or counted and widened by one burst where that is surer (which
            # one depends on how evenly the host let the throttle's grants fall:
            # fio/window.py surer_rate).
            assert "(a device completing in bursts)" in direction["ci95"]["method"], test["name"]


def test_a_throttled_card_reads_its_caps_from_its_windows(a1_run):
    # Within 0.5% of the cap, or where the window is less sure than that, within its 95%
    # interval: the device delivers its cap only while the host lets it (module doc), and a
    # host that did not leaves its mark in the window's rates, which widens the interval.
    for test in a1_run["tests"]:
        direction_name, metric, cap = A1_TRUTH[test["name"]]
        direction = test[direction_name]
        figure = direction[metric]
        low, high = direction["ci95"]["bw_bytes"]
        half_width = (high - low) / 2 / direction["bw_bytes"]
        assert figure == pytest.approx(cap, rel=max(TOLERANCE, half_width)), (
            test["name"], half_width,
        )  # fmt: skip


def test_large_blocks_skip_a_first_window_too_short_for_them(tmp_path: Path):
    # 40 MB/s: seq-read's 1 MiB blocks fill a first window (114 in 3 s); 16 MiB blocks would
    # be 7, fewer than 20, so rand-read-16M measures as long as 20 take (10 s) at once.
    card = DeviceCaps("16M-card", read_bps=40_000_000)
    with EmulatedDevice(card, size_bytes=256 * MiB) as device:
        assert device.mount_point is not None
        runner = throttled_runner(device, tmp_path)
        plan = large_blocks_plan(str(device.mount_point), runner.log_folder)
        measured = measure(plan, runner)
    settings = plan.settings
    seq_read, large = measured.tests
    assert seq_read.read is not None and large.read is not None
    assert_first_window_rule(seq_read, settings.runtime_s)
    # rand-read-16M's length was decided before it ran, from seq-read's rate: 16 MiB blocks
    # at that rate fit fewer than 20 in a first window, so it measured as long as 20 take.
    fastest = FastestRates().seen(seq_read)
    decided = at_once(large.spec, fastest, settings.runtime_s, None)
    assert decided is not None and decided.reason.startswith(AT_ONCE)
    assert decided.window_s > settings.runtime_s
    reasons = [decided.reason]
    if seq_read.lengthened is not None and EXTENDED.search(seq_read.lengthened) is None:
        # measured again: its first window may have found the device bursty at depth 1
        again = at_once(large.spec, fastest, settings.runtime_s, seq_read.spec)
        assert again is not None
        reasons.append(again.reason)
    lengthened = large.lengthened or ""
    kept, then_again, _ = lengthened.partition("; then again: ")
    assert kept in reasons, lengthened
    if then_again:  # the device was slower than seq-read's rate: still short, so once more
        assert "reads (fewer than 20)" in then_again
        assert large.read.runtime_ms > decided.window_s * 1000
    else:
        assert large.read.runtime_ms == decided.window_s * 1000
        assert large.read.runtime_ms / 1000 * large.read.iops >= MIN_TRANSFERS
    assert large.read.bw_bytes == pytest.approx(card.read_bps, rel=0.01)


def assert_first_window_rule(result: TestResult, runtime_s: int) -> None:
    """flashmark.bench.lengths on `result`, a test with a first window: kept exactly when the
    rule finds it enough; otherwise extended to, or measured again at, the runtime."""
    direction = result.read or result.write
    assert direction is not None
    if result.lengthened is None:
        assert direction.runtime_ms == FIRST_WINDOW_S * 1000
        assert full_length(result, runtime_s) is None
        return
    assert result.lengthened.startswith(NOT_ENOUGH), result.lengthened
    extended = EXTENDED.search(result.lengthened)
    if extended is not None:  # pooled windows, until enough or the runtime
        assert direction.runtime_ms == int(extended.group(1)) * 1000 <= runtime_s * 1000
    else:
        assert direction.runtime_ms == runtime_s * 1000
