"""The bytes a device has taken, added up from samples of its kernel write counter.

`/sys/block/DEV/stat` field 7 counts 512-byte sectors written since the device appeared: it
starts again at zero at every boot (and when the device is plugged in again), and on a 32-bit
kernel it is an `unsigned long` that wraps at 2**32 sectors (2 TiB). Samples recorded over time,
each with the boot it was taken in, give the writes since the first sample: the first boot
counts from its first sample (what came before predates the record), every later boot from
zero. What a boot wrote after its last sample is lost, so the total is a lower bound.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from flashmark.stats import t_quantile_975
from flashmark.units import SECONDS_PER_DAY
from flashmark.upload_rules import Withheld, upload, uploaded

SECTOR_BYTES = 512


@uploaded
@dataclass(frozen=True)
class CounterSample:
    """One reading of a device's write counter."""

    seconds: float  # wall-clock time of the reading (Unix seconds)
    # /proc/sys/kernel/random/boot_id when it was read: it names one boot of one machine, and
    # would link its uploads.
    boot_id: str = field(metadata=upload(Withheld()))
    sectors_written: int  # /sys/block/DEV/stat field 7
    counter_bits: int  # 32 or 64: the width of the kernel's unsigned long


@dataclass(frozen=True)
class WritesSeen:
    """Writes added up from samples, as cumulative bytes at each sample's time, and at most how
    many more than that were written by then (`unseen_bytes`): what each boot wrote after its
    last sample is lost to the count, bounded by the time between that sample and the next
    boot's first at the fastest rate the record shows."""

    seconds: tuple[float, ...]
    cumulative_bytes: tuple[int, ...]
    unseen_bytes: tuple[int, ...]
    whole: tuple[bool, ...]  # per stretch between two samples: within one boot, so all counted

    def whole_stretches(self) -> tuple[list[float], list[float]]:
        """The seconds and bytes of each stretch counted whole (module doc)."""
        pairs = zip(
            itertools.pairwise(self.seconds),
            itertools.pairwise(self.cumulative_bytes),
            self.whole,
            strict=True,
        )
        kept = [(b - a, d - c) for (a, b), (c, d), whole in pairs if whole]
        return [span for span, _ in kept], [float(amount) for _, amount in kept]

    @property
    def total_bytes(self) -> int:
        return self.cumulative_bytes[-1] if self.cumulative_bytes else 0

    @property
    def span_seconds(self) -> float:
        return self.seconds[-1] - self.seconds[0] if self.seconds else 0.0

    def bytes_per_day(self) -> float | None:
        """The mean rate over the record; None until it spans some time."""
        if self.span_seconds <= 0:
            return None
        return self.total_bytes / (self.span_seconds / SECONDS_PER_DAY)


def add_up(samples: list[CounterSample]) -> WritesSeen:
    """The writes since the first sample, at every sample (samples in any order)."""
    ordered = sorted(samples, key=lambda sample: sample.seconds)
    steps = [_written_between(a, b) for a, b in itertools.pairwise(ordered)]
    peak = max(
        (
            written / (b.seconds - a.seconds)
            for (a, b), (written, _) in zip(itertools.pairwise(ordered), steps, strict=True)
            if b.seconds > a.seconds
        ),
        default=0.0,
    )
    times = [sample.seconds for sample in ordered]
    cumulative, unseen = [0] * bool(ordered), [0] * bool(ordered)
    for (before, after), (written, new_boot) in zip(
        itertools.pairwise(ordered), steps, strict=True
    ):
        cumulative.append(cumulative[-1] + written)
        lost = peak * (after.seconds - before.seconds) - written if new_boot else 0.0
        unseen.append(unseen[-1] + max(0, int(lost)))
    whole = tuple(not new_boot for _, new_boot in steps)
    return WritesSeen(tuple(times), tuple(cumulative), tuple(unseen), whole)


def _written_between(previous: CounterSample, sample: CounterSample) -> tuple[int, bool]:
    """The bytes counted from `previous` to `sample`, and whether a new boot began between."""
    if sample.boot_id != previous.boot_id:
        return sample.sectors_written * SECTOR_BYTES, True  # a new boot counts from zero
    if sample.sectors_written >= previous.sectors_written:
        return (sample.sectors_written - previous.sectors_written) * SECTOR_BYTES, False
    if sample.counter_bits == 32:  # wrapped
        return (sample.sectors_written + 2**32 - previous.sectors_written) * SECTOR_BYTES, False
    # A 64-bit counter never wraps: it went down because the device came back.
    return sample.sectors_written * SECTOR_BYTES, True


@dataclass(frozen=True)
class RateInterval:
    """A mean daily write rate and its 95% interval."""

    bytes_per_day: float
    low: float
    high: float


def rate_interval(spans_s: Sequence[float], amounts: Sequence[float]) -> RateInterval | None:
    """The mean daily rate of stretches of `spans_s` seconds that took `amounts` bytes, and its
    95% interval: the ratio of the bytes to the days, its standard error from each stretch's
    bytes less the mean rate's share of them (a ratio estimator), times t(0.975, n - 1) for the
    n stretches. None with fewer than two stretches or no time in them."""
    spans = [span / SECONDS_PER_DAY for span in spans_s]
    days = sum(spans)
    if len(spans) < 2 or days <= 0:
        return None
    mean = sum(amounts) / days
    residuals = [amount - mean * span for amount, span in zip(amounts, spans, strict=True)]
    n = len(spans)
    error = math.sqrt(n / (n - 1) * sum(r * r for r in residuals)) / days
    half = t_quantile_975(n - 1) * error
    return RateInterval(mean, max(mean - half, mean * 1e-3), mean + half)
