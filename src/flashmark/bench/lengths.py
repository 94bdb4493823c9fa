"""How long each timed test measures: a short first window, extended or measured again only
where it was not enough (docs/methodology.md, "Test lengths and ramps"). Pure.

Enough is +-1% (TARGET_HALF_WIDTH_PCT) for a test measured for its figure; for a test that
stops on its verdict (a test a class reads in a profile that exists to grade, without
--runtime: plan.py Plan.stops_on_verdict) it is every threshold it serves decided on its
anytime-valid decision interval (flashmark.stats DECISION_ALPHA, flashmark.bench.grading
undecided), checked after the floor (the first window, MIN_TRANSFERS, WRITE_FLOOR_BYTES
for writes) and after each extension, up to the profile's runtime.

    plan.py builds short first windows -> measure() runs one -> full_length(result) ->
        None: keep it;
        FullLength(extendable=True): extend it by further windows of the same test, pooled,
            while extension_s and full_length(pooled result) say so;
        FullLength(seconds, reason): run the test once more for `seconds`, keep that
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flashmark.bench.model import DirectionResult, TestResult, TestSpec
from flashmark.units import format_rate, format_size

# The first window: 3 per-second samples, the fewest whose interval means something (with 2 the
# t quantile is 12.7). Random 4K tests on a steady device are exact at 2 s (CV 0.07%),
# and exact windows count 3 s within 0.1% of an emulated card's true rate.
FIRST_WINDOW_S = 3
# The stop rule: the 95% interval of the mean within +-1% of it.
TARGET_HALF_WIDTH_PCT = 1.0
# Whole transfers a window holds before its rate is trusted: the transfers straddling its two
# edges are counted in proportion (fio/window.py), and the fewer whole ones it holds, the more
# those two estimated parts weigh.
MIN_TRANSFERS = 20
# The longest a test runs to collect MIN_TRANSFERS: 16 MiB transfers at 5 MB/s need 67 s.
MAX_WINDOW_S = 60
# Extensions pool windows whose edges each may put them off (fio/window.py): the spread of
# their rates narrows as windows are added, what their edges may be off by does not (each
# window opens and closes anew; weighted, it stays as wide). A first window whose edges take
# more than half the target is measured again at full length instead: one pair of edges.
# (The throttled card's 1 MiB reads, 3 or 4 to a 100 ms grant, had edges of 0.9% in a first
# window and 1.8% and 2.7% in two extensions: pooled, +-2.7% over 8 s.)
EXTENSION_EDGE_PCT = TARGET_HALF_WIDTH_PCT / 2
# The floor of a write test that stops on its verdict, besides its first window: this much
# written, so that a card's periodic slow moments (garbage collection, a cache's flush) have
# shown at least once before it may stop. Two allocation units of 4 MiB (the SD card's unit of
# erase and garbage collection on SDHC cards), and the emulated stalling card's GC cycle: with
# 3 s alone, rand-write-4k near 500 IOPS (2 MB/s) stopped before its first 120 ms stall in a
# third of the simulated tests, its interval missing the truth (benchmarks/verdict_coverage.py).
WRITE_FLOOR_BYTES = 8 * 2**20
# A window this much shorter than the floor still counts as the floor (fio's runtime of a 3 s
# window may end a few milliseconds early).
_FLOOR_SLACK_MS = 50
# How a test's `lengthened` starts when its first window could not hold MIN_TRANSFERS.
AT_ONCE = "measured at full length at once: "


@dataclass(frozen=True)
class FullLength:
    """Run the test again for `window_s` seconds; `reason` says why the first was not enough."""

    window_s: int
    reason: str
    # The device completes in bursts so large, or so unequal, that the window's edges alone
    # leave a first window too uncertain (fio/window.py edge_burst_bytes for the count,
    # WholeBursts.uncertain_bytes between whole bursts): later tests as deep skip theirs.
    bursty: bool = False
    # Only the interval was too wide, by the rates' spread rather than the window's edges
    # (each within EXTENSION_EDGE_PCT), over enough transfers: more windows of the same kind
    # narrow it, so the first is extended (`extension_s`) rather than measured again.
    extendable: bool = False


def first_window_s(profile_runtime_s: int) -> int | None:
    """The short first window of a profile's tests; None when its runtime is no longer."""
    return FIRST_WINDOW_S if profile_runtime_s > FIRST_WINDOW_S else None


def below_floor(window_ms: float, transfers: float) -> bool:
    """Whether a window is shorter than a test's floor: less than a first window, or fewer than
    MIN_TRANSFERS transfers. Too short to have met the device's slow moments or to estimate its
    spread: its interval is at least +-SHORT_MARGIN (flashmark.stats)."""
    return window_ms < FIRST_WINDOW_S * 1000 - _FLOOR_SLACK_MS or transfers < MIN_TRANSFERS


def full_length(
    result: TestResult, runtime_s: int, undecided: tuple[str, ...] | None = None
) -> FullLength | None:
    """None when `result`, measured over a short first window, is enough; else how long to
    measure the test again (at least `runtime_s`, the profile's) and why. `undecided`, for a
    test that stops on its verdict: its checks still uncertain (flashmark.bench.grading
    undecided), which replace the +-1% rule: () is enough."""
    reasons: list[str] = []
    bursty = False
    extendable = True
    needed_s = float(runtime_s)
    if undecided:
        reasons.append("undecided: " + "; ".join(undecided))
    for label, direction in (("read", result.read), ("write", result.write)):
        if direction is None:
            continue
        if undecided is not None and label == "write":
            written = (
                direction.runtime_ms / 1000 * (direction.accepted_bw_bytes or direction.bw_bytes)
            )
            if written < WRITE_FLOOR_BYTES:
                reasons.append(
                    f"{format_size(round(written))} written (less than "
                    f"{format_size(WRITE_FLOOR_BYTES)}, the floor of a write test)"
                )
        interval = direction.bw_ci95
        if interval is None:
            reasons.append(f"{label}s too few for an interval")
            extendable = False
        elif undecided is None and interval.half_width_pct > TARGET_HALF_WIDTH_PCT:
            reasons.append(
                f"{label} interval +-{interval.half_width_pct:.1f}% "
                f"(wider than +-{TARGET_HALF_WIDTH_PCT:g}%)"
            )
            bursty = bursty or interval.edge_pct > TARGET_HALF_WIDTH_PCT
        elif undecided:
            bursty = bursty or interval.edge_pct > TARGET_HALF_WIDTH_PCT
        if interval is not None and interval.edge_pct > EXTENSION_EDGE_PCT:
            extendable = False
        short = _short(result, label)
        if short is not None:
            reasons.append(short[0])
            needed_s = max(needed_s, short[1])
            extendable = False
    return _full_length(reasons, needed_s, bursty=bursty, extendable=extendable and not bursty)


def extension_s(runtime_s: int, measured_s: float) -> int | None:
    """How long the next window extending a first one measures, when `measured_s` seconds of
    windows are pooled so far: as long as a first window, up to `runtime_s` in all; None once
    they measured `runtime_s` (the pooled result is then kept as it is, as a test measured
    again at full length would be). Shorter extensions would let a test that stops on its
    verdict stop sooner, but their edges weigh more: 2 s windows of 1500 4K reads a second
    through a 100 ms throttle put them past EXTENSION_EDGE_PCT, and the test ran again at
    full length."""
    if measured_s >= runtime_s:
        return None
    return min(FIRST_WINDOW_S, math.ceil(runtime_s - measured_s))


def still_settling(first: TestResult, extension: TestResult) -> str | None:
    """Why the `first` window is left out of the pool, when the first `extension` measured
    alone puts its rate outside that extension's own 95% interval: the device was still
    settling into the test after its ramp (a transient the follow ramp did not cover), which
    widened the first window's interval by its spread. For a device in one steady state a
    first window falls that far off about once in 400 (the extension's t interval over 3
    seconds is some 4 standard errors wide). None when they agree."""
    for label, before, after in (
        ("read", first.read, extension.read),
        ("write", first.write, extension.write),
    ):
        if before is None or after is None or after.bw_ci95 is None:
            continue
        interval = after.bw_ci95
        if not interval.low <= before.bw_bytes <= interval.high:
            return (
                f"its first window's {label} rate, {format_rate(before.bw_bytes)}, is outside "
                f"the next window's interval ({format_rate(interval.low)} to "
                f"{format_rate(interval.high)}): the device was still settling"
            )
    return None


def too_few_transfers(result: TestResult, runtime_s: int) -> FullLength | None:
    """After a test measured its length at once (`at_once`): how long to measure it again when
    its window still holds fewer than MIN_TRANSFERS, at the rate it measured; None when it holds
    enough. The fastest rate its length came from may be well above the test's own (16 MiB
    random writes after a sequential write into a cache), and a test at once after a bursty one
    measured the runtime whatever its transfers, when the run had not yet measured its
    direction."""
    shorts = [short for label in ("read", "write") if (short := _short(result, label))]
    return _full_length([why for why, _ in shorts], max([runtime_s, *(s for _, s in shorts)]))


def _full_length(
    reasons: list[str], needed_s: float, *, bursty: bool = False, extendable: bool = False
) -> FullLength | None:
    """The run the `reasons` call for, `needed_s` long up to MAX_WINDOW_S; None without any."""
    if not reasons:
        return None
    return FullLength(
        window_s=min(MAX_WINDOW_S, int(needed_s)),
        reason="; ".join(reasons),
        bursty=bursty,
        extendable=extendable,
    )


def _seconds_for_enough(per_s: float) -> int:
    """How long a window holds MIN_TRANSFERS at `per_s` transfers a second, one more second
    for a transfer cut at an edge."""
    return math.ceil(MIN_TRANSFERS / per_s) + 1


def _short(result: TestResult, label: str) -> tuple[str, float] | None:
    """Why the window of `result`'s `label` ("read" or "write") direction holds too few
    transfers and how long would hold enough (at the rate it saw, one more second for a
    transfer cut at an edge); None when it holds MIN_TRANSFERS, or has no such direction."""
    direction = result.direction(label)
    if direction is None or (transfers := _transfers(direction)) >= MIN_TRANSFERS:
        return None
    needed_s = 0.0
    if transfers > 0:
        needed_s = float(_seconds_for_enough(transfers * 1000 / direction.runtime_ms))
    return f"{transfers:.0f} {label}s (fewer than {MIN_TRANSFERS})", needed_s


def too_few_for_a_first_window(
    spec: TestSpec, fastest: FastestRates, runtime_s: int
) -> FullLength | None:
    """How long to measure `spec` at once, when its first window could not hold MIN_TRANSFERS
    of its transfers even at the fastest rate measured so far in each of its directions
    (16 MiB blocks at 60 MB/s: 11 in 3 s); None when it could, or nothing was measured yet.
    The first window would be run, found short and run again: its time is saved."""
    reasons: list[str] = []
    needed_s = float(runtime_s)
    for label, rate in (("read", fastest.read), ("write", fastest.write)):
        wanted = spec.pattern.reads if label == "read" else spec.pattern.writes
        if not wanted or not rate:
            continue
        per_s = rate / spec.block_size_bytes
        if per_s * FIRST_WINDOW_S >= MIN_TRANSFERS:
            continue
        reasons.append(
            f"at most {per_s * FIRST_WINDOW_S:.0f} {label}s would fit in its first window at "
            f"the fastest {label} rate so far ({format_rate(rate)}; fewer than {MIN_TRANSFERS})"
        )
        needed_s = max(needed_s, _seconds_for_enough(per_s))
    return _full_length(reasons, needed_s)


@dataclass(frozen=True)
class FastestRates:
    """The fastest rate (bytes/s) each direction reached so far in a run; 0 before any. Writes
    count what the host accepted, as the transfers of a window do."""

    read: float = 0.0
    write: float = 0.0

    def seen(self, result: TestResult) -> FastestRates:
        read, write = self.read, self.write
        if result.read is not None:
            read = max(read, result.read.bw_bytes)
        if result.write is not None:
            accepted = result.write.accepted_bw_bytes
            write = max(write, accepted if accepted is not None else result.write.bw_bytes)
        return FastestRates(read, write)


def at_once(
    spec: TestSpec, fastest: FastestRates, runtime_s: int, bursty: TestSpec | None
) -> FullLength | None:
    """How long `spec` measures at once, without a first window, and why; None when it takes
    one. At once when its first window could not hold MIN_TRANSFERS at the `fastest` rates,
    or when an earlier test (`bursty`) at its queue depth or below found the device bursty; as
    long as the profile's runtime, or as MIN_TRANSFERS need when that is longer."""
    too_few = too_few_for_a_first_window(spec, fastest, runtime_s)
    deep_enough = bursty is not None and spec.iodepth >= bursty.iodepth
    if too_few is None and not deep_enough:
        return None
    reasons = [] if too_few is None else [AT_ONCE + too_few.reason]
    if bursty is not None and deep_enough:
        reasons.append(bursty_reason(bursty.name, bursty.iodepth))
    return FullLength(
        window_s=too_few.window_s if too_few is not None else runtime_s, reason="; ".join(reasons)
    )


def bursty_reason(test: str, iodepth: int) -> str:
    """Why a test skipped its first window: an earlier one, at queue depth `iodepth` or below
    this test's, found the device bursty."""
    depth = f" at queue depth {iodepth}" if iodepth > 1 else ""
    return (
        f"{test} found the device completing in bursts{depth}, which leave a first window "
        f"more uncertain than +-{TARGET_HALF_WIDTH_PCT:g}% at its edges: measured at full length"
    )


def _transfers(direction: DirectionResult) -> float:
    """Transfers completed inside the window (writes: as the host accepted them)."""
    iops = direction.accepted_iops if direction.accepted_iops is not None else direction.iops
    return iops * direction.runtime_ms / 1000
