"""Writes added up from /sys/block/DEV/stat samples across boots, re-plugs and 32-bit wraps."""

from __future__ import annotations

import random

from flashmark.health.write_counter import SECTOR_BYTES, CounterSample, add_up, rate_interval

DAY = 86_400.0


def test_a_series_with_reboots_and_wraps_adds_up_to_what_was_written() -> None:
    rng = random.Random(7)
    counter, boot, total, samples = 2**32 - 5000, 0, 0, []
    baseline_done = False
    for hour in range(2000):
        if rng.random() < 0.01:
            boot, counter = boot + 1, 0  # a reboot: the counter starts again
        written = rng.randrange(0, 400_000)
        counter = (counter + written) % 2**32
        if baseline_done:
            total += written
        samples.append(CounterSample(hour * 3600.0, f"boot-{boot}", counter, 32))
        baseline_done = True
    rng.shuffle(samples)
    seen = add_up(samples)
    # Writes of a new boot before its first sample are counted too, as the counter holds them.
    assert seen.total_bytes == total * SECTOR_BYTES
    assert seen.span_seconds == 1999 * 3600.0
    assert list(seen.cumulative_bytes) == sorted(seen.cumulative_bytes)


def test_a_64_bit_counter_that_goes_down_restarted_with_the_device() -> None:
    samples = [
        CounterSample(0.0, "b", 1000, 64),
        CounterSample(60.0, "b", 3000, 64),
        CounterSample(120.0, "b", 500, 64),  # unplugged and back: 500 since
    ]
    seen = add_up(samples)
    assert seen.total_bytes == (2000 + 500) * SECTOR_BYTES
    assert seen.bytes_per_day() == seen.total_bytes / (120 / 86400)


def test_one_sample_has_no_rate() -> None:
    seen = add_up([CounterSample(5.0, "b", 10**9, 64)])
    assert seen.total_bytes == 0
    assert seen.bytes_per_day() is None
    assert add_up([]).total_bytes == 0


def test_a_reboot_stretch_is_left_out_of_the_rate_and_bounds_what_it_may_have_missed() -> None:
    sectors = 10**6  # 512 MB
    samples = [
        CounterSample(0.0, "a", 0, 64),
        CounterSample(DAY, "a", 2 * sectors, 64),  # 1,024 MB in a day: the fastest stretch
        CounterSample(2 * DAY, "a", 3 * sectors, 64),
        CounterSample(3 * DAY, "b", sectors, 64),  # a reboot: 512 MB counted since
    ]
    seen = add_up(samples)
    assert seen.whole == (True, True, False)
    spans, amounts = seen.whole_stretches()
    assert spans == [DAY, DAY] and amounts == [2 * sectors * 512, sectors * 512]
    # At most the fastest rate over the reboot's day, less what the new boot counted.
    assert seen.unseen_bytes == (0, 0, 0, 2 * sectors * 512 - sectors * 512)


def test_the_rate_interval_holds_the_mean_rate_of_a_noisy_writer_95_times_in_100() -> None:
    rng = random.Random(3)
    held = 0
    for _ in range(400):
        amounts = [10e9 * rng.uniform(0.5, 1.5) for _ in range(20)]
        interval = rate_interval([DAY] * 20, amounts)
        assert interval is not None
        held += interval.low <= 10e9 <= interval.high
    assert 0.92 <= held / 400 <= 0.98


def test_fewer_than_two_stretches_have_no_interval() -> None:
    assert rate_interval([DAY], [1e9]) is None
    assert rate_interval([], []) is None
