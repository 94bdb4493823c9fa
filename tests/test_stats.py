"""Intervals of means and verdicts that respect them (flashmark.stats)."""

import itertools
import math
import random
import statistics

import pytest

from flashmark.stats import (
    DECISION_ALPHA,
    SHORT_MARGIN,
    MeanInterval,
    Verdict,
    batch_means,
    confidence_sequence,
    interval_of_mean,
    judge,
    lag1_autocorrelation,
    mixture_half_width,
    t_quantile_975,
    t_quantile_9975,
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
    drifting = [10.0, 10.2, 10.4, 10.6, 10.8, 11.0, 11.2, 11.4]  # batches alike their neighbours
    shuffled = [10.0, 11.0, 10.4, 11.4, 10.2, 10.8, 10.6, 11.2]
    wide, plain = interval_of_mean(drifting), interval_of_mean(shuffled)
    assert wide is not None and plain is not None
    assert lag1_autocorrelation(drifting) > 0.5
    # Related batches are merged pairwise (the LBatch rule): 8 -> 4, t(3) instead of t(7).
    assert wide.effective_samples <= 4 and plain.effective_samples == 8
    assert wide.high - wide.low > 1.5 * (plain.high - plain.low)


def test_batches_merge_pairwise_above_the_most_and_keep_the_mean():
    samples = [float(k % 7) for k in range(70)]
    merged = batch_means(samples)
    assert 15 <= len(merged) <= 30
    # An odd last batch joins the pair before it: the mean moves by far less than a batch.
    assert statistics.fmean(merged) == pytest.approx(statistics.fmean(samples), abs=0.05)


def test_identical_batches_never_give_a_zero_width():
    # A throttle's grants make every batch the same: the width is the log's resolution.
    interval = interval_of_mean([10.0] * 12, floor_sd=0.04)
    assert interval is not None and interval.high - interval.low > 0
    half = t_quantile_975(11) * 0.04 / math.sqrt(12)
    assert (interval.low, interval.high) == pytest.approx((10.0 - half, 10.0 + half))


def test_the_interval_holds_the_batches_own_mean_whatever_it_is_centred_on():
    # Centred on the durable rate (a write's final flush in the window), below every batch.
    interval = interval_of_mean([10.0, 10.0, 10.0], mean=9.95)
    assert interval is not None and interval.mean == 9.95
    assert interval.low <= 9.95 and interval.high >= 10.0


def test_a_test_below_its_floor_is_at_least_the_short_margin_wide():
    # The reported case: 2 samples of 9.993 and 10.002 MB/s, centred on 9.95 durable.
    interval = interval_of_mean([9.993, 10.002], mean=9.95, short=True)
    assert interval is not None
    assert interval.low <= 9.95 * (1 - SHORT_MARGIN) and interval.high >= 10.002
    assert judge(9.95, interval, 10).verdict is Verdict.UNCERTAIN
    # Identical samples, and a single one, alike: never a bare value.
    for samples in ([10.0, 10.0], [10.0]):
        short = interval_of_mean(samples, short=True)
        assert short is not None and short.high - short.low == pytest.approx(2.0)
    # A figure clearly past the margin is decided even so.
    far = interval_of_mean([12.0, 12.1], short=True)
    assert far is not None and judge(12.05, far, 10).verdict is Verdict.PASS


def test_the_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = random.Random(9)
    covered = 0
    trials = 2000
    for _ in range(trials):
        interval = interval_of_mean([rng.gauss(100, 5) for _ in range(8)])
        assert interval is not None
        covered += interval.low <= 100 <= interval.high
    assert 0.93 <= covered / trials <= 0.985  # the AR(1) correction only ever widens


def test_the_decision_interval_of_a_fixed_length_test_covers_about_99_5_percent():
    assert t_quantile_9975(1) == 127.32 and t_quantile_9975(15) == 3.286
    assert t_quantile_9975(60) == pytest.approx(2.915, abs=1e-3)
    rng = random.Random(11)
    missed = 0
    trials = 4000
    for _ in range(trials):
        samples = [rng.gauss(100, 5) for _ in range(16)]
        interval = interval_of_mean(samples, confidence=0.995)
        usual = interval_of_mean(samples)
        assert interval is not None and usual is not None
        assert interval.confidence == 0.995 and interval.low < usual.low
        missed += not interval.low <= 100 <= interval.high
    assert missed / trials <= 0.01
    with pytest.raises(ValueError):
        interval_of_mean([1.0, 2.0], confidence=0.9)


def test_one_sample_at_the_floor_has_no_interval_and_a_given_mean_centres_it():
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


def test_the_mixture_boundary_is_the_level_set_of_its_martingale():
    # Howard et al. 2021: the normal mixture M_n = sqrt(rho / (V + rho)) exp(S^2 / (2 (V + rho)))
    # with V = n sigma^2, rho = m sigma^2; Ville's inequality bounds it by 1 / alpha for all n.
    sd, m, alpha = 2.0, 12.0, 0.05
    for n in (1, 3, 12, 40, 1000):
        s = mixture_half_width(sd, n, alpha, m) * n
        v, rho = n * sd**2, m * sd**2
        assert math.sqrt(rho / (v + rho)) * math.exp(s**2 / (2 * (v + rho))) == pytest.approx(
            1 / alpha
        )


def test_the_mixture_boundary_narrows_with_batches_and_is_wider_than_a_fixed_n_interval():
    widths = [mixture_half_width(1.0, n, DECISION_ALPHA, 12) for n in range(2, 200)]
    assert all(a > b for a, b in itertools.pairwise(widths))  # monotone in n
    for n in range(3, 200):  # from 3 batches on (t(0.975, 1) is 12.7)
        fixed = t_quantile_975(n - 1) / math.sqrt(n)
        assert mixture_half_width(1.0, n, 0.05, 12) > 1.959964 / math.sqrt(n)
        assert mixture_half_width(1.0, n, DECISION_ALPHA, 12) > fixed
    # Its width over the fixed-n one grows like sqrt(log n) in the end: the price of holding
    # at every n at once.
    ratio = [mixture_half_width(1.0, n, 0.05, 12) * math.sqrt(n) for n in (10**4, 10**8)]
    assert ratio[1] > ratio[0] > 1.959964
    with pytest.raises(ValueError):
        mixture_half_width(1.0, 0, 0.05, 12)


def test_a_confidence_sequence_covers_the_mean_at_every_look_at_once():
    # 400 streams of 40 batches, looked at after every batch: the 95% sequence misses the
    # true mean at any look in at most 5% of streams (a fixed-n t interval looked at each time
    # misses far more often).
    rng = random.Random(11)
    missed_sequence = missed_fixed = 0
    for _ in range(400):
        stream = [rng.gauss(100, 5) for _ in range(40)]
        looks = range(3, 41)
        seq = [confidence_sequence(stream[:n], alpha=0.05, tightest=12) for n in looks]
        fixed = [interval_of_mean(stream[:n]) for n in looks]
        missed_sequence += any(not (i.low <= 100 <= i.high) for i in seq if i)
        missed_fixed += any(not (i.low <= 100 <= i.high) for i in fixed if i)
    assert missed_sequence / 400 <= 0.05
    assert missed_fixed > 2 * missed_sequence
