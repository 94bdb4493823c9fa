"""The forecast against known truth: synthetic devices whose wear grows with a known number of
bytes per rated life, read as their real brackets (eMMC 10% steps, NVMe whole percents)."""

from __future__ import annotations

import math
import random

import pytest

from flashmark.health.forecast import (
    DAYS_PER_YEAR,
    WearReading,
    emmc_bracket,
    forecast,
    nvme_bracket,
)

GIB = 2**30


def _emmc_value(wear: float) -> int:
    return 11 if wear >= 1.0 else int(wear * 10) + 1


def _simulate(seed: int, days: int, bracket: str) -> tuple[list[WearReading], float, float]:
    """Daily readings of a device; returns them, the mean daily writes and the true years left."""
    rng = random.Random(seed)
    per_life = rng.uniform(3000, 30000) * GIB
    start_wear = rng.uniform(0.0, 0.3)
    mean_daily = rng.uniform(2, 20) * GIB
    written = 0.0
    readings = []
    for _ in range(days):
        written += mean_daily * rng.uniform(0.5, 1.5)
        wear = start_wear + written / per_life
        low, high = (
            emmc_bracket(_emmc_value(wear)) if bracket == "emmc" else nvme_bracket(int(wear * 100))
        )
        readings.append(WearReading(int(written), low, high))
    rate = written / days
    true_years = (1 - (start_wear + written / per_life)) * per_life / rate / DAYS_PER_YEAR
    return readings, rate, true_years


@pytest.mark.parametrize("bracket", ["emmc", "nvme"])
def test_the_interval_holds_the_truth_and_narrows_to_three_after_two_steps(bracket: str) -> None:
    narrowed = 0
    for seed in range(200):
        readings, rate, truth = _simulate(seed, days=400, bracket=bracket)
        result = forecast(readings, rate, capacity_bytes=32 * GIB)
        if result.wear_low is not None and result.wear_low >= 0.95:
            continue  # near the end of rated life the bracket's top is the whole remainder
        assert result.years_low is not None
        assert result.years_low <= truth * (1 + 1e-9), seed
        if result.years_high is not None:
            assert truth <= result.years_high * (1 + 1e-9), seed
        if result.steps_seen >= 2:
            narrowed += 1
            assert result.years_high is not None and not result.unknown
            assert result.years_high / result.years_low <= 3, (seed, result)
    assert narrowed > 50


def test_fewer_than_two_steps_give_only_a_lower_bound() -> None:
    per_life = 1000 * GIB
    readings = [
        WearReading(day * GIB, *emmc_bracket(_emmc_value(0.12 + day * GIB / per_life)))
        for day in range(60)
    ]
    result = forecast(readings, float(GIB), capacity_bytes=8 * GIB)
    truth = (1 - (0.12 + 59 * GIB / per_life)) * per_life / GIB / DAYS_PER_YEAR
    assert result.steps_seen == 0
    assert result.years_high is None
    assert result.years_low is not None and result.years_low <= truth


def test_nvme_counted_from_birth_bounds_from_one_reading() -> None:
    # 37% used after 150 TB written: K lies between 150/0.38 and 150/0.37 TB per life.
    written = 150 * 10**12
    result = forecast(
        [WearReading(written, *nvme_bracket(37))], 50 * 10**9, 10**12, from_birth=True
    )
    assert result.remaining_bytes_low == pytest.approx(0.62 * written / 0.38)
    assert result.remaining_bytes_high == pytest.approx(0.63 * written / 0.37)
    assert result.years_high is not None and result.years_low is not None
    assert result.years_high / result.years_low < 1.1


def test_a_silent_device_is_unknown_but_gives_full_writes_per_day() -> None:
    result = forecast([], bytes_per_day=4 * GIB, capacity_bytes=64 * GIB)
    assert result.unknown
    assert result.full_writes_per_day == pytest.approx(1 / 16)


def test_used_up_life_leaves_nothing() -> None:
    result = forecast([WearReading(10**15, *nvme_bracket(104))], 10**10, 10**12, from_birth=True)
    assert result.years_low == 0.0 and result.years_high == 0.0
    exceeded = forecast([WearReading(5 * GIB, *emmc_bracket(11))], float(GIB), 8 * GIB)
    assert exceeded.years_low == 0.0
    assert math.isinf(emmc_bracket(11)[1])


@pytest.mark.parametrize("value", [0, 12])
def test_emmc_values_outside_the_estimates_are_refused(value: int) -> None:
    with pytest.raises(ValueError):
        emmc_bracket(value)
