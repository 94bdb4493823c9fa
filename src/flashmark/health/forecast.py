"""Years left, as an interval, from the wear a device reports and the writes seen.

The model (docs/health.md): wear grows in proportion to the bytes written, so a device takes
some number K of bytes per unit of its rated life. A wear reading is a bracket: eMMC's life
estimate in 10% steps, NVMe's percentage_used in 1% steps. Every two readings i < j, at
cumulative writes B_i < B_j, bound K:

    (B_j - B_i) / (high_j - low_i)  <=  K  <=  (B_j - B_i) / (low_j - high_i)

(the upper bound when low_j > high_i).

The upper bound exists only once two steps have been crossed between them, which is why the
interval narrows as steps are seen. Where the count may have missed writes (a reboot between
readings), the bytes between two readings are known only within a range, and each bound takes
the end of it that keeps the truth inside. The wear now is bounded the same way, from each
reading and the writes since it. The bytes left are (1 - wear) * K, and the years left those
bytes at the write rate seen, over its 95% interval where it is known.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from flashmark.upload_rules import uploaded

DAYS_PER_YEAR = 365.25


@dataclass(frozen=True)
class WearReading:
    """Wear as the device reported it, with the cumulative bytes written when it was read."""

    cumulative_bytes: int
    low: float  # fraction of rated life used, the bracket's lower end
    high: float  # its upper end (exclusive); equal to low for an exact value
    # At most this many bytes more were written before it than `cumulative_bytes` counts
    # (writes a reboot took before they were counted: write_counter.WritesSeen.unseen_bytes).
    unseen_bytes: int = 0


@uploaded
@dataclass(frozen=True)
class Forecast:
    """The years left as an interval; None where the readings tell nothing."""

    years_low: float | None
    years_high: float | None  # None: no upper bound yet (fewer than two steps seen)
    remaining_bytes_low: float | None
    remaining_bytes_high: float | None
    wear_low: float | None  # the wear now, as narrowed by the writes since each reading
    wear_high: float | None  # None: open above (a life estimate "exceeded")
    steps_seen: int  # rises of the reported wear within the readings
    bytes_per_day: float | None
    full_writes_per_day: float | None  # the capacity written per day

    @property
    def unknown(self) -> bool:
        return self.years_low is None


def forecast(
    readings: list[WearReading],
    bytes_per_day: float | None,
    capacity_bytes: int | None,
    from_birth: bool = False,
    rate_range: tuple[float, float] | None = None,
) -> Forecast:
    """The forecast from readings in write order.

    `from_birth`: the readings' bytes count from the device's first write (NVMe's
    data_units_written), so a new device's zero wear at zero bytes is a reading too.
    `rate_range`: the 95% interval of the daily rate (write_counter.rate_interval), when
    known: the years left then span it too, as the writes to come are the mean's draw.
    """
    full_writes = (
        bytes_per_day / capacity_bytes if bytes_per_day is not None and capacity_bytes else None
    )
    if not readings:
        return Forecast(None, None, None, None, None, None, 0, bytes_per_day, full_writes)
    points = sorted(readings, key=lambda reading: reading.cumulative_bytes)
    steps = sum(1 for before, after in itertools.pairwise(points) if after.low > before.low)
    if from_birth:
        points = [WearReading(0, 0.0, 0.0), *points]
    key = _key_points(points)
    per_life_low, per_life_high = _bytes_per_life(key)
    wear_low, wear_high = _wear_now(key, per_life_low, per_life_high)
    remaining_low = max(0.0, 1.0 - wear_high) * per_life_low if per_life_low > 0 else None
    remaining_high = (
        max(0.0, 1.0 - wear_low) * per_life_high if math.isfinite(per_life_high) else None
    )
    if wear_low >= 1.0:
        remaining_low = remaining_high = 0.0  # the rated life is used up
    years_low = years_high = None
    if bytes_per_day and remaining_low is not None:
        low_rate, high_rate = rate_range or (bytes_per_day, bytes_per_day)
        years_low = remaining_low / high_rate / DAYS_PER_YEAR
        if remaining_high is not None:
            years_high = remaining_high / low_rate / DAYS_PER_YEAR
    return Forecast(
        years_low,
        years_high,
        remaining_low,
        remaining_high,
        wear_low,
        wear_high if math.isfinite(wear_high) else None,  # "exceeded" has no top
        steps,
        bytes_per_day,
        full_writes,
    )


def _key_points(points: list[WearReading]) -> list[WearReading]:
    """The first and last readings and both sides of every rise: the bounds come from these
    alone (a reading inside a flat stretch is implied by its ends), so a long record stays cheap."""
    keep = {0, len(points) - 1}
    for index, (before, after) in enumerate(itertools.pairwise(points)):
        if (before.low, before.high) != (after.low, after.high):
            keep |= {index, index + 1}
    return [points[index] for index in sorted(keep)]


def _bytes_per_life(points: list[WearReading]) -> tuple[float, float]:
    low, high = 0.0, math.inf
    for i, earlier in enumerate(points):
        for later in points[i + 1 :]:
            written = later.cumulative_bytes - earlier.cumulative_bytes
            most_written = written + later.unseen_bytes - earlier.unseen_bytes
            most_wear = later.high - earlier.low
            if most_wear > 0:
                low = max(low, written / most_wear)
            least_wear = later.low - earlier.high
            if least_wear > 0 and most_written > 0:
                high = min(high, most_written / least_wear)
    return low, max(low, high)


def _wear_now(
    points: list[WearReading], per_life_low: float, per_life_high: float
) -> tuple[float, float]:
    last = points[-1]
    low, high = last.low, last.high
    for reading in points:
        written = last.cumulative_bytes - reading.cumulative_bytes
        most_written = written + last.unseen_bytes - reading.unseen_bytes
        if math.isfinite(per_life_high) and per_life_high > 0:
            low = max(low, reading.low + written / per_life_high)
        if per_life_low > 0:
            high = min(high, reading.high + most_written / per_life_low)
    return low, max(low, high)


def emmc_bracket(life_time_estimate: int) -> tuple[float, float]:
    """EXT_CSD DEVICE_LIFE_TIME_EST_TYP_A/B (1..11) as a wear bracket; 11 is "exceeded",
    whose upper end is open."""
    if 1 <= life_time_estimate <= 10:
        return (life_time_estimate - 1) / 10, life_time_estimate / 10
    if life_time_estimate == 11:
        return 1.0, math.inf
    raise ValueError(f"life time estimate {life_time_estimate} is outside 1..11")


def nvme_bracket(percentage_used: int) -> tuple[float, float]:
    """NVMe percentage_used as a wear bracket: the drive truncates, and it may pass 100."""
    if percentage_used < 0:
        raise ValueError(f"percentage used {percentage_used} is negative")
    return percentage_used / 100, (percentage_used + 1) / 100
