"""Writes added up from /sys/block/DEV/stat samples across boots, re-plugs and 32-bit wraps."""

from __future__ import annotations

import random

from flashmark.health.write_counter import SECTOR_BYTES, CounterSample, add_up


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
