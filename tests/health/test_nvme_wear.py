"""An NVMe wear reading and forecast from a recorded `nvme smart-log` (tests/data/probe)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flashmark.health.forecast import forecast
from flashmark.health.nvme_wear import DATA_UNIT_BYTES, nvme_wear
from flashmark.health.red_flags import red_flags
from flashmark.probe.model import Health
from flashmark.probe.nvme import parse_nvme_cli_smart_log

SMART_LOG = Path(__file__).parent.parent / "data/probe/nvme_pcie/tools/nvme_smart-log_dev_nvme0.txt"


def recorded_health() -> Health:
    log = parse_nvme_cli_smart_log(SMART_LOG.read_text(encoding="utf-8"))
    return Health(
        percentage_used=int(log["percentage_used"]),
        data_units_written=int(log["data_units_written"]),
        available_spare=int(log["available_spare"]),
        available_spare_threshold=int(log["available_spare_threshold"]),
    )


def test_a_recorded_smart_log_gives_its_reading_and_a_lower_bound() -> None:
    health = recorded_health()
    reading = nvme_wear(health)
    assert reading is not None
    # The recording: 0% used after 857,454 data units (439.02 GB), spare 100% of threshold 10%.
    assert reading.cumulative_bytes == 857_454 * DATA_UNIT_BYTES
    assert (reading.low, reading.high) == (0.0, 0.01)
    assert red_flags(health) == ()
    result = forecast([reading], 20e9, 500_000_000_000, from_birth=True)
    # Under 1% used for 439 GB: at least 99 times 439 GB left, at 20 GB a day.
    assert result.years_high is None
    assert result.years_low is not None
    assert result.years_low == pytest.approx(
        857_454 * DATA_UNIT_BYTES * 0.99 / 0.01 / 20e9 / 365.25
    )


def test_a_log_without_the_writes_gives_no_reading() -> None:
    assert nvme_wear(Health(percentage_used=4)) is None
