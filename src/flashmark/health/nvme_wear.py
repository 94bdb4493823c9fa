"""An NVMe drive's wear reading from its SMART / Health Information log (as the probe parses
`nvme smart-log` or smartctl's JSON): percentage_used against data_units_written, which the
drive counts from its first write in units of 1000 512-byte sectors."""

from __future__ import annotations

from dataclasses import dataclass

from flashmark.health.forecast import WearReading, nvme_bracket

DATA_UNIT_BYTES = 512_000


@dataclass(frozen=True)
class NvmeWear:
    reading: WearReading | None  # None when the log lacks percentage_used or the writes
    available_spare: int | None
    spare_threshold: int | None


def nvme_wear(log: dict[str, float]) -> NvmeWear:
    used, units = log.get("percentage_used"), log.get("data_units_written")
    reading = (
        WearReading(int(units) * DATA_UNIT_BYTES, *nvme_bracket(int(used)))
        if used is not None and units is not None
        else None
    )
    spare, threshold = log.get("available_spare"), log.get("available_spare_threshold")
    return NvmeWear(
        reading,
        int(spare) if spare is not None else None,
        int(threshold) if threshold is not None else None,
    )
