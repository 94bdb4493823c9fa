"""The bytes a device has taken, added up from samples of its kernel write counter.

`/sys/block/DEV/stat` field 7 counts 512-byte sectors written since the device appeared: it
starts again at zero at every boot (and when the device is plugged in again), and on a 32-bit
kernel it is an `unsigned long` that wraps at 2**32 sectors (2 TiB). Samples recorded over time,
each with the boot it was taken in, give the writes since the first sample: the first boot
counts from its first sample (what came before predates the record), every later boot from
zero. What a boot wrote after its last sample is lost, so the total is a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass

SECTOR_BYTES = 512


@dataclass(frozen=True)
class CounterSample:
    """One reading of a device's write counter."""

    seconds: float  # wall-clock time of the reading (Unix seconds)
    boot_id: str  # /proc/sys/kernel/random/boot_id when it was read
    sectors_written: int  # /sys/block/DEV/stat field 7
    counter_bits: int  # 32 or 64: the width of the kernel's unsigned long


@dataclass(frozen=True)
class WritesSeen:
    """Writes added up from samples, as cumulative bytes at each sample's time."""

    seconds: tuple[float, ...]
    cumulative_bytes: tuple[int, ...]

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
        return self.total_bytes / (self.span_seconds / 86400)


def add_up(samples: list[CounterSample]) -> WritesSeen:
    """The writes since the first sample, at every sample (samples in any order)."""
    ordered = sorted(samples, key=lambda sample: sample.seconds)
    times: list[float] = []
    cumulative: list[int] = []
    total = 0
    previous: CounterSample | None = None
    for sample in ordered:
        if previous is None:
            pass  # the baseline: writes before it are not in the record
        elif sample.boot_id != previous.boot_id:
            total += sample.sectors_written  # a new boot counts from zero
        elif sample.sectors_written >= previous.sectors_written:
            total += sample.sectors_written - previous.sectors_written
        elif sample.counter_bits == 32:
            total += sample.sectors_written + 2**32 - previous.sectors_written  # wrapped
        else:
            # A 64-bit counter never wraps: it went down because the device came back.
            total += sample.sectors_written
        times.append(sample.seconds)
        cumulative.append(total * SECTOR_BYTES)
        previous = sample
    return WritesSeen(tuple(times), tuple(cumulative))
