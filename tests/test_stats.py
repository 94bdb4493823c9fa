"""Intervals of means and verdicts that respect them (flashmark.stats)."""

import math
import random
import statistics

import pytest

from flashmark.stats import (
    MeanInterval,
    Verdict,
    interval_of_mean,
    judge,
    lag1_autocorrelation,
    t_quantile_975,
)


def test_t_quantiles_match_the_table_and_tend_to_the_normal():
    assert t_quantile_975(1) == 12.706 and t_quantile_975(7) == 2.365
    # Exact values: t(0.975, 40) = 2.0211, t(0.975, 120) = 1.9799 (NIST table).
    assert t_quantile_975(40) == pytest.approx(2.0211, abs=2e-4)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=2e-4)
    with pytest.raises(ValueError):
        t_quantile_975(0)


def test_independent_seconds_give_the_textbook_t_interval():
    samples = [10.1, 9.9, 10.2, 9.8, 10.0, 10.1, 9.9, 10.0]  # r < 0: no correction
    interval = interval_of_mean(samples)
    assert interval is not None
    half = 2.365 * statistics.stdev(samples) / math.sqrt(8)
    assert (interval.low, interval.high) == pytest.approx((10.0 - half, 10.0 + half))
    assert interval.samples == 8 and interval.effective_samples == 8


def test_a_slow_drift_widens_the_interval():
    drifting = [10.0, 10.2, 10.4, 10.6, 10.8, 11.0, 11.2, 11.4]  # seconds alike their neighbours
    shuffled = [10.0, 11.0, 10.4, 11.4, 10.2, 10.8, 10.6, 11.2]
    wide, plain = interval_of_mean(drifting), interval_of_mean(shuffled)
    assert wide is not None and plain is not None
    assert lag1_autocorrelation(drifting) > 0.5
    assert wide.effective_samples < 4
    assert wide.high - wide.low > 1.5 * (plain.high - plain.low)


def test_the_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = random.Random(9)
    covered = 0
    trials = 2000
    for _ in range(trials):
        interval = interval_of_mean([rng.gauss(100, 5) for _ in range(8)])
        assert interval is not None
        covered += interval.low <= 100 <= interval.high
    assert 0.93 <= covered / trials <= 0.985  # the AR(1) correction only ever widens


def test_one_sample_has_no_interval_and_a_given_mean_centres_it():
    assert interval_of_mean([5.0]) is None
    interval = interval_of_mean([4.0, 6.0], mean=5.5)
    assert interval is not None and interval.mean == 5.5
    assert interval.low < 5.5 < interval.high
    assert interval.scaled(2).low == pytest.approx(2 * interval.low)


def interval(low, high):
    return MeanInterval(mean=(low + high) / 2, low=low, high=high, samples=8, effective_samples=8)


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [
        (510, 530, Verdict.PASS),
        (500, 530, Verdict.PASS),  # at the threshold passes, as before
        (470, 490, Verdict.FAIL),
        (490, 510, Verdict.UNCERTAIN),
        (470, 500, Verdict.UNCERTAIN),  # the interval includes the threshold: never "fail"
    ],
)
def test_a_verdict_is_never_fail_while_the_interval_includes_the_threshold(low, high, verdict):
    judgement = judge((low + high) / 2, interval(low, high), 500)
    assert judgement.verdict is verdict
    assert str(500) in judgement.reason


def test_a_figure_without_an_interval_is_uncertain():
    judgement = judge(600.0, None, 500)
    assert judgement.verdict is Verdict.UNCERTAIN and "fewer than 2 samples" in judgement.reason
