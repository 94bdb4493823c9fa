"""How sure a measured figure is: the 95% interval of a mean, the anytime-valid interval a test
may stop on, and verdicts that respect them. Pure; the grading calls `judge` with a headline's
interval and a threshold. Why so: docs/methodology.md, "Spread and confidence".

Fixed-length interval (`interval_of_mean`): batch means (Schmeiser 1982, "Batch size effects
in the analysis of simulation output", Operations Research 30(3)). A window's completions are
cut into batches of a fraction of a second each (flashmark.bench.results BATCH_MS); the rate of
each batch is one sample, and the interval is Student's t of their mean with df = batches - 1
(NIST/SEMATECH e-Handbook 7.2.2.1); at 99.5% (t(0.9975, df)) it is the decision interval of
a graded test whose length no look at its rates decided (the leading seq-write). Assumptions: the
batch means are about independent and about normal. Consecutive batches of a device are
related (a GC cycle, a throttle's slices), so adjacent batches are merged pairwise while
their lag-1 autocorrelation is positive beyond chance (one-sided 5%, r1 > 1.645 /
sqrt(batches); Fishman & Yarberry 1997, "An implementation of the batch means method",
INFORMS J. Computing 9(3), the LBatch rule), which subsumes the AR(1) sample-count correction
used before. A slow moment rarer than the window (a stall every few seconds in a 3 s window)
cannot be seen in its batches: the floor of a test's length (flashmark.bench.lengths) and the
run's earlier writes (flashmark.bench.slow_moments) are what meet it.

Never narrower than the samples allow: each batch's rate is known only to the log's
millisecond at its ends (`floor_sd`, added in quadrature to the batches' spread, so identical
batches never give a zero width); the interval always holds both the exact window rate it is
centred on and the batches' own mean; and a test shorter than its floor (too short to
estimate its spread) is at least +-SHORT_MARGIN wide, so within that margin of a threshold it
is "uncertain", never passing or failing on a bare value.

Anytime-valid interval (`confidence_sequence`): the two-sided normal-mixture boundary of
Howard, Ramdas, McAuliffe & Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic
confidence sequences", Annals of Statistics 49(2), the two-sided normal mixture over batch
means: |S_n| < sigma sqrt(2 (n + m) log(sqrt((n + m) / m) / alpha)) for all n at once with
probability 1 - alpha, S_n the sum of n batch means less n times the true mean, m the
batch count where it is tightest. It holds at a data-dependent stopping time, which a fixed-n
interval checked after every window does not. It assumes sub-Gaussian batch means with known
sigma; sigma is estimated from the batches (scaled by t(0.975, df) / z(0.975) for the few of
them), so it holds only asymptotically: coverage at the
stopping time, measured on emulated cards (benchmarks/verdict_coverage.py), is its test.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

CONFIDENCE = 0.95
METHOD = (
    "Student t interval (df = batches - 1) of the mean of batch means: rates over a fraction "
    "of a second each between burst ends, adjacent batches merged while their lag-1 "
    "autocorrelation is positive beyond chance; each batch known to the log's millisecond"
)
# The anytime-valid interval of a test that stops once its verdict is decided.
SEQUENTIAL_METHOD = (
    "anytime-valid normal-mixture confidence sequence over batch means (Howard, Ramdas, "
    "McAuliffe & Sekhon 2021), valid at the test's data-dependent stop; each batch known to "
    "the log's millisecond"
)
SHORT_METHOD = (
    "; shorter than its floor, so at least +-{margin:g}% (too short to estimate its spread)"
)
# A verdict's error rate per threshold when a test stops on its decision: the decision rests on
# the 1 - DECISION_ALPHA confidence sequence, the tables show the 95% one.
DECISION_ALPHA = 0.005
# A test shorter than its floor cannot estimate its spread: its interval is at least this
# fraction of its figure either side. One 120 ms GC stall (the flash model's, and the pauses
# a card's write cache takes) in a window of a second or two moves its rate by 6 to 12%; a
# figure 10% or more from a threshold is one a full-length test must decide
# (benchmarks/verdict_coverage.py), so a short test is left uncertain only where a full one
# might be.
SHORT_MARGIN = 0.10
# Batches merged pairwise above this many (Schmeiser 1982: 10 to 30 batches suffice; more add
# little to the t quantile and weigh the batches' correlation more).
MAX_BATCHES = 30
# The lag-1 check is made on at least this many batches (fewer say nothing about it).
MIN_BATCHES_FOR_CORRELATION = 8
# One-sided 5% normal quantile: r1 beyond 1.645 / sqrt(batches) is correlation, not chance.
_Z95 = 1.644854

EDGE_METHOD = (
    "; widened by one burst of completions over the window (a device completing in bursts)"
)
# A device completing in bursts, measured between whole bursts (flashmark.fio.window.WholeBursts).
WHOLE_BURSTS_METHOD = (
    "; the mean between the ends of the window's opening and last whole bursts of completions "
    "(a device completing in bursts), widened by the largest of the opening burst less the last, "
    "the largest burst less the smallest and how far the two ends are off the line through all, "
    "and a millisecond"
)

# Student t quantiles t(0.975, df) for df = 1..30 (NIST/SEMATECH e-Handbook, section 1.3.6.7.2,
# "Critical values of the Student's t distribution", column 0.975).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = 1.959964  # the normal quantile; t(0.975, df) tends to it
# t(0.9975, df) for df = 1..30, the same table's column 0.9975 (each checked by integrating
# the t density: its upper tail 0.0025 within 3e-6): the 99.5% interval a graded test whose
# length no look at its rates decided is judged on (DECISION_ALPHA).
_T9975 = (
    127.32, 14.089, 7.453, 5.598, 4.773, 4.317, 4.029, 3.833, 3.690, 3.581,
    3.497, 3.428, 3.372, 3.326, 3.286, 3.252, 3.222, 3.197, 3.174, 3.153,
    3.135, 3.119, 3.104, 3.091, 3.078, 3.067, 3.057, 3.047, 3.038, 3.030,
)  # fmt: skip
_Z9975 = 2.807034


def t_quantile_975(df: int) -> float:
    """t(0.975, df): the table up to 30, then the Cornish-Fisher expansion of t in terms of the
    normal quantile (Abramowitz and Stegun 26.7.5), within 1e-4 of the exact value there."""
    return _t_quantile(df, _T975, _Z975)


def t_quantile_9975(df: int) -> float:
    """t(0.9975, df), as `t_quantile_975`."""
    return _t_quantile(df, _T9975, _Z9975)


def _t_quantile(df: int, table: tuple[float, ...], z: float) -> float:
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(table):
        return table[df - 1]
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


@dataclass(frozen=True)
class MeanInterval:
    """The 95% interval of a mean, from `samples` per-interval values."""

    mean: float
    low: float
    high: float
    samples: int  # how many batch rates it rests on
    effective_samples: float  # the batches after merging related ones (<= samples)
    confidence: float = CONFIDENCE
    method: str = METHOD
    # How much of each half comes from the window's edges on a device completing in bursts
    # (`widened`), in the mean's unit; not saved in documents (the method says it).
    edge: float = dataclasses.field(default=0.0, compare=False)

    @property
    def half_width_pct(self) -> float:
        """Half the interval's width in percent of the mean (the ±x% a test can stop at)."""
        return (self.high - self.low) / 2 / self.mean * 100 if self.mean else math.inf

    def scaled(self, factor: float) -> MeanInterval:
        """The interval of `factor` times the mean (another unit, or the durable rate)."""
        return MeanInterval(
            mean=self.mean * factor,
            low=self.low * factor,
            high=self.high * factor,
            samples=self.samples,
            effective_samples=self.effective_samples,
            confidence=self.confidence,
            method=self.method,
            edge=self.edge * factor,
        )

    @property
    def edge_pct(self) -> float:
        """The edges' share of the half width, in percent of the mean."""
        return self.edge / self.mean * 100 if self.mean else math.inf

    def widened(self, edge: float, why: str = EDGE_METHOD) -> MeanInterval:
        """The interval with `edge` more on each side: what a window's count may be off by on a
        device completing in bursts (flashmark.fio.window.edge_burst_bytes), or the rate between
        its whole bursts (`why` WHOLE_BURSTS_METHOD, flashmark.fio.window.WholeBursts)."""
        return dataclasses.replace(
            self,
            low=self.low - edge,
            high=self.high + edge,
            method=self.method + why,
            edge=self.edge + edge,
        )

    def reaching(self, low: float, why: str) -> MeanInterval:
        """The interval stretched down to `low` where that is below it (a rate the window
        would have had with the slow moments it did not meet, flashmark.bench.slow_moments)."""
        if low >= self.low:
            return self
        return dataclasses.replace(self, low=low, method=self.method + why)


def lag1_autocorrelation(samples: Sequence[float]) -> float:
    """r_1 = sum (x_i - m)(x_{i+1} - m) / sum (x_i - m)^2; 0 for constant or < 3 samples."""
    if len(samples) < 3:
        return 0.0
    mean = statistics.fmean(samples)
    deviations = [x - mean for x in samples]
    denominator = sum(d * d for d in deviations)
    if denominator == 0:
        return 0.0
    numerator = sum(a * b for a, b in itertools.pairwise(deviations))
    return numerator / denominator


def batch_means(samples: Sequence[float]) -> list[float]:
    """`samples` (equal batches in time order) merged pairwise, an odd last one into the pair
    before it, while more than MAX_BATCHES or, from MIN_BATCHES_FOR_CORRELATION on, while
    their lag-1 autocorrelation is positive beyond chance (the LBatch rule, see the top)."""
    batches = list(samples)
    while len(batches) >= 4 and (
        len(batches) > MAX_BATCHES
        or (
            len(batches) >= MIN_BATCHES_FOR_CORRELATION
            and lag1_autocorrelation(batches) > _Z95 / math.sqrt(len(batches))
        )
    ):
        merged = [(a + b) / 2 for a, b in zip(batches[0::2], batches[1::2], strict=False)]
        if len(batches) % 2:
            merged[-1] = (2 * merged[-1] + batches[-1]) / 3
        batches = merged
    return batches


def interval_of_mean(
    samples: Sequence[float],
    mean: float | None = None,
    *,
    floor_sd: float = 0.0,
    short: bool = False,
    confidence: float = CONFIDENCE,
) -> MeanInterval | None:
    """The 95% interval of the mean of batch rates `samples` (see the top); None without any.
    `confidence` 1 - DECISION_ALPHA: the 99.5% one a test measured at its full length at once
    is judged on (no stop looked at its figure, so the fixed-length interval holds).

    `mean` centres it on a figure computed more exactly than the samples' average (a window
    rate with fractional edges); it always holds the samples' average too. `floor_sd` is how
    far one batch's rate may be off by the log's resolution (added in quadrature to their
    spread). `short`: the test was shorter than its floor, so the interval is at least
    +-SHORT_MARGIN of the centre; a single batch then has that interval, else none."""
    prepared = _batched(samples, mean, short)
    if prepared is None:
        return None
    centre, average, batches = prepared
    quantiles = {CONFIDENCE: t_quantile_975, 1 - DECISION_ALPHA: t_quantile_9975}
    if confidence not in quantiles:
        raise ValueError(f"no t quantile for a {confidence:g} interval")
    half = 0.0
    if len(batches) >= 2:
        sd = math.sqrt(statistics.variance(batches) + floor_sd**2)
        half = quantiles[confidence](len(batches) - 1) * sd / math.sqrt(len(batches))
    return _interval(centre, average, half, len(samples), len(batches), confidence, METHOD, short)


def mixture_half_width(sd: float, batches: int, alpha: float, tightest: float) -> float:
    """How far the mean of `batches` batch means may be from the true mean at once for every
    count, with probability 1 - alpha: the two-sided normal-mixture boundary (Howard et al.
    2021) sd sqrt(2 (n + m) log(sqrt((n + m) / m) / alpha)) / n, m = `tightest`, for batch
    means of standard deviation `sd`."""
    if batches < 1 or tightest <= 0 or not 0 < alpha < 1:
        raise ValueError(
            f"need batches >= 1, tightest > 0, 0 < alpha < 1: {batches}, {tightest}, {alpha}"
        )
    v = batches + tightest
    return sd * math.sqrt(2 * v * math.log(math.sqrt(v / tightest) / alpha)) / batches


def confidence_sequence(
    samples: Sequence[float],
    mean: float | None = None,
    *,
    alpha: float,
    tightest: float,
    floor_sd: float = 0.0,
    short: bool = False,
) -> MeanInterval | None:
    """The 1 - `alpha` anytime-valid interval of the mean of batch rates `samples` (see the
    top), tightest at `tightest` batches; None with fewer than 2 (unless `short`, as in
    `interval_of_mean`). The batches' spread is estimated from them (after `batch_means`),
    with `floor_sd` in quadrature, so the boundary holds only asymptotically."""
    prepared = _batched(samples, mean, short)
    if prepared is None:
        return None
    centre, average, batches = prepared
    half = 0.0
    if len(batches) >= 2:
        # The spread is estimated from few batches: scaled by t(0.975, df) / z(0.975), the
        # factor a fixed-n interval pays for estimating it (4.30 / 1.96 from 3 batches, 1.12
        # from 12), the boundary keeps its level from 3 batches on (tests/test_stats.py).
        correction = t_quantile_975(len(batches) - 1) / _Z975
        sd = correction * math.sqrt(statistics.variance(batches) + floor_sd**2)
        # Merged batches are longer: the boundary counts in the batches it was built on.
        scale = len(samples) / len(batches)
        half = mixture_half_width(sd, len(batches), alpha, max(1.0, tightest / scale))
    return _interval(
        centre, average, half, len(samples), len(batches), 1 - alpha, SEQUENTIAL_METHOD, short
    )


def _batched(
    samples: Sequence[float], mean: float | None, short: bool
) -> tuple[float, float, list[float]] | None:
    """The interval's centre (`mean`, else the samples' average), the samples' average and
    their batch means; None when there is no interval to give (no samples, or one that is
    not `short`)."""
    if not samples or (len(samples) < 2 and not short):
        return None
    average = statistics.fmean(samples)
    return (average if mean is None else mean), average, batch_means(samples)


def _interval(
    centre: float,
    average: float,
    half: float,
    samples: int,
    batches: int,
    confidence: float,
    method: str,
    short: bool,
) -> MeanInterval:
    """`centre` +- `half`, stretched to hold the batches' `average` too, at least
    +-SHORT_MARGIN when `short`."""
    if short:
        half = max(half, SHORT_MARGIN * abs(centre))
        method += SHORT_METHOD.format(margin=SHORT_MARGIN * 100)
    return MeanInterval(
        mean=centre,
        low=min(centre, average) - half,
        high=max(centre, average) + half,
        samples=samples,
        effective_samples=float(batches),
        confidence=confidence,
        method=method,
    )


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    UNCERTAIN = "uncertain"


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str  # why, in words: which bound lies where


def judge(value: float, interval: MeanInterval | None, threshold: float) -> Judgement:
    """pass / fail / uncertain for a figure that must be >= `threshold` (same unit as value).

    pass: the whole interval is at or above the threshold (a value exactly at it passes, as
    before); fail: the whole interval is below it; uncertain: the interval contains the
    threshold, or there is no interval (fewer than 2 samples). Never "fail" while the
    interval includes the threshold. Without an interval the value alone is not trusted."""
    if interval is None:
        return Judgement(Verdict.UNCERTAIN, f"{value:g} has no interval (fewer than 2 samples)")
    low, high = interval.low, interval.high
    verdict = judge_bounds(low, high, threshold)
    if verdict is Verdict.PASS:
        return Judgement(verdict, f"95% interval {low:g}..{high:g} is >= {threshold:g}")
    if verdict is Verdict.FAIL:
        return Judgement(verdict, f"95% interval {low:g}..{high:g} is < {threshold:g}")
    return Judgement(
        verdict, f"95% interval {low:g}..{high:g} contains the threshold {threshold:g}"
    )


def judge_bounds(low: float, high: float, threshold: float, *, at_most: bool = False) -> Verdict:
    """pass / fail / uncertain for a figure known to lie within low..high that must be >=
    `threshold` (<= with at_most): pass when the whole range is on the right side, fail when
    it is wholly on the wrong side, uncertain while it includes the threshold."""
    if at_most:
        low, high, threshold = -high, -low, -threshold
    if low >= threshold:
        return Verdict.PASS
    if high < threshold:
        return Verdict.FAIL
    return Verdict.UNCERTAIN
