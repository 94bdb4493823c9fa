"""An NVMe drive's wear reading from its SMART / Health Information log (as the probe keeps
it): percentage_used against data_units_written, which the drive counts from its first write in
units of 1000 512-byte sectors (NVMe Base Specification, SMART / Health Information log)."""

from __future__ import annotations

from flashmark.health.forecast import WearReading, nvme_bracket
from flashmark.probe.model import DATA_UNIT_BYTES as DATA_UNIT_BYTES
from flashmark.probe.model import Health


def nvme_wear(health: Health) -> WearReading | None:
    """The reading, counted from the drive's birth; None when the log lacks either figure."""
    if health.percentage_used is None or health.data_units_written is None:
        return None
    return WearReading(
        health.data_units_written * DATA_UNIT_BYTES, *nvme_bracket(health.percentage_used)
    )
