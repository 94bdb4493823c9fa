"""The wear forecast of `flashmark health` against simulated devices of known endurance: how often
its interval holds the true years left, how wide it is, and when it says nothing yet.

    python3 -m benchmarks.health_forecast [--devices N]      (from the repository root)

Each device takes K bytes per rated life (3 to 30 TB), starts 0-30% worn, and is written a mean
of 2-40 GB a day (each day x0.5-1.5). It is read once a day as `flashmark health` reads it: the
wear in the device's own brackets (eMMC life estimate in 10% steps: "emmc" as the kernel read it
when the card started (sysfs), "emmc-live" from EXT_CSD at the reading, as root; NVMe
percentage_used in whole percents), the kernel's write counter (from zero
at each boot, a reboot about once a week, losing what was written since the last reading:
flashmark.health.write_counter), NVMe's own count of data written. The forecast is
flashmark.health.forecast's, at the mean rate the readings saw over its 95% interval (stretches
the count took whole). Truth: the device's life left at its own mean rate.

Rows: each kind of device after 30, 90 and 365 days of readings. "given": forecasts with a lower
end; "both ends": with an upper end too; "holds": of the given ones, the share whose interval
holds the truth (a missing upper end holds anything above the lower); "high/low": the median
ratio of the ends where both exist; "2 steps": devices whose readings saw two wear steps, "<= 3"
the share of those whose ratio is at most 3, "worst" their widest. Devices past 95% of their
life are left out (the bracket's top then spans the whole remainder, docs/health.md). Prints a
table; asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import time
from dataclasses import dataclass

from flashmark.health.forecast import (
    DAYS_PER_YEAR,
    WearReading,
    emmc_bracket,
    forecast,
    nvme_bracket,
)
from flashmark.health.nvme_wear import DATA_UNIT_BYTES
from flashmark.health.write_counter import SECTOR_BYTES, CounterSample, add_up, rate_interval

DAY_S = 86_400.0
SPANS_DAYS = (30, 90, 365)


@dataclass
class Outcome:
    given: bool
    both: bool
    holds: bool
    ratio: float | None
    two_steps: bool = False  # two steps seen (eMMC 10%, NVMe 1%)


def simulate(seed: int, kind: str, days: int) -> Outcome | None:
    rng = random.Random(seed)
    per_life = rng.uniform(3e12, 30e12)
    worn = rng.uniform(0.0, 0.3) * per_life
    mean_daily = rng.uniform(2e9, 40e9)
    since_boot, boot, now = 0.0, 0, 0.0
    wear_at_boot = worn / per_life  # eMMC: the kernel reads the life estimate at boot
    samples: list[CounterSample] = []
    brackets: list[tuple[float, float]] = []
    drive_counts: list[float] = []
    for _ in range(days):
        now += DAY_S
        day = mean_daily * rng.uniform(0.5, 1.5)
        if rng.random() < 1 / 7:  # a reboot: what was written since the last reading is lost
            lost = day * rng.random()
            worn += lost
            day -= lost
            boot += 1
            since_boot = 0.0
            wear_at_boot = worn / per_life
        worn += day
        since_boot += day
        wear = worn / per_life
        if wear >= 0.95:
            return None
        samples.append(CounterSample(now, f"boot-{boot}", int(since_boot // SECTOR_BYTES), 64))
        value = min(11, int((wear if kind == "emmc-live" else wear_at_boot) * 10) + 1)
        brackets.append(
            emmc_bracket(value) if kind.startswith("emmc") else nvme_bracket(int(wear * 100))
        )
        drive_counts.append(worn // DATA_UNIT_BYTES * DATA_UNIT_BYTES)
    truth = (1 - worn / per_life) * per_life / mean_daily / DAYS_PER_YEAR
    if kind.startswith("emmc"):
        writes = add_up(samples)
        # sysfs: each estimate holds at the bytes counted when its boot began; live: now.
        live = kind == "emmc-live"
        readings = [
            WearReading(
                cumulative - (0 if live else sample.sectors_written * SECTOR_BYTES),
                low,
                high,
                unseen,
            )
            for cumulative, unseen, sample, (low, high) in zip(
                writes.cumulative_bytes, writes.unseen_bytes, samples, brackets, strict=True
            )
        ]
        rate = rate_interval(*writes.whole_stretches())
        assert rate is not None
        result = forecast(readings, rate.bytes_per_day, None, rate_range=(rate.low, rate.high))
    else:
        readings = [
            WearReading(int(count), low, high)
            for count, (low, high) in zip(drive_counts, brackets, strict=True)
        ]
        amounts = [b - a for a, b in itertools.pairwise(drive_counts)]
        rate = rate_interval([DAY_S] * len(amounts), amounts)
        assert rate is not None
        result = forecast(
            readings, rate.bytes_per_day, None, from_birth=True, rate_range=(rate.low, rate.high)
        )
    if result.years_low is None:
        return Outcome(False, False, False, None, result.steps_seen >= 2)
    high = result.years_high
    holds = result.years_low <= truth and (high is None or truth <= high)
    ratio = high / result.years_low if high is not None and result.years_low > 0 else None
    return Outcome(True, high is not None, holds, ratio, result.steps_seen >= 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=500)
    devices = parser.parse_args().devices
    print(
        f"{'kind':9} {'days':>5} {'devices':>8} {'given':>6} {'both ends':>10} {'holds':>7} "
        f"{'high/low':>9} {'2 steps':>8} {'<= 3':>6} {'worst':>6} {'time s':>7}"
    )
    for kind in ("emmc", "emmc-live", "nvme"):
        for days in SPANS_DAYS:
            began = time.perf_counter()
            outcomes = [simulate(seed, kind, days) for seed in range(devices)]
            kept = [outcome for outcome in outcomes if outcome is not None]
            given = [outcome for outcome in kept if outcome.given]
            ratios = [outcome.ratio for outcome in given if outcome.ratio is not None]
            holds = sum(outcome.holds for outcome in given) / len(given) if given else 0.0
            ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
            stepped = [outcome for outcome in kept if outcome.two_steps]
            narrow = [o for o in stepped if o.ratio is not None and o.ratio <= 3]
            worst = max((o.ratio or math.inf for o in stepped), default=None)
            print(
                f"{kind:9} {days:>5} {len(kept):>8} {len(given):>6} "
                f"{sum(outcome.both for outcome in given):>10} {holds:>7.1%} {ratio:>9} "
                f"{len(stepped):>8} {len(narrow) / len(stepped) if stepped else 0:>6.1%} "
                f"{worst if worst is not None else 0:>6.2f} {time.perf_counter() - began:>7.2f}"
            )


if __name__ == "__main__":
    main()
