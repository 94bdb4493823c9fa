"""How sure a measured figure is: the 95% interval of a mean, and verdicts that respect it.
Pure; the grading calls `judge` with a headline's interval and a threshold.

Student's t interval of the mean of per-interval samples (NIST/SEMATECH e-Handbook 7.2.2.1),
over n_eff = n (1 - r) / (1 + r) samples for lag-1 autocorrelation r (Wilks, "Statistical
Methods in the Atmospheric Sciences", 3rd ed., eq. 5.12): consecutive seconds of a device are
related, and the plain interval would be too narrow. A negative r counts as 0. Why so:
docs/methodology.md, "Spread and confidence".
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
    "Student t interval of the mean of rates over about a second each, between burst ends, "
    "sample count reduced for lag-1 autocorrelation (AR(1): n_eff = n(1-r)/(1+r), r >= 0)"
)

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


def t_quantile_975(df: int) -> float:
    """t(0.975, df): the table up to 30, then the Cornish-Fisher expansion of t in terms of the
    normal quantile (Abramowitz and Stegun 26.7.5), within 1e-4 of the exact value there."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
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
    samples: int  # how many per-interval values it rests on
    effective_samples: float  # after the autocorrelation correction (<= samples)
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


def interval_of_mean(samples: Sequence[float], mean: float | None = None) -> MeanInterval | None:
    """The 95% interval of the mean of `samples`; None with fewer than 2 samples.

    `mean` centres the interval on a figure computed more exactly than the samples' average
    (a window rate with fractional edges); the width always comes from the samples."""
    n = len(samples)
    if n < 2:
        return None
    centre = statistics.fmean(samples) if mean is None else mean
    stdev = statistics.stdev(samples)
    r = max(0.0, lag1_autocorrelation(samples))
    effective = max(2.0, n * (1 - r) / (1 + r)) if r < 1 else 2.0
    effective = min(effective, float(n))
    df = max(1, math.floor(effective) - 1)
    half = t_quantile_975(df) * stdev / math.sqrt(effective)
    return MeanInterval(
        mean=centre,
        low=centre - half,
        high=centre + half,
        samples=n,
        effective_samples=effective,
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
