"""The result of `flashmark health`: frozen dataclasses and their JSON document, in the one
codec (flashmark.codec).

Schema history ("schema" key):
    flashmark.health/1   first version.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from flashmark.codec import Codec, document, written
from flashmark.health.forecast import Forecast
from flashmark.health.write_counter import CounterSample
from flashmark.probe.model import Health

HEALTH_SCHEMA = "flashmark.health/1"


@dataclass(frozen=True, kw_only=True)
class WriteRate:
    """The device's writes per day, and what they were seen over."""

    bytes_per_day: float
    over_s: float  # the time the rate was seen over
    since_boot: bool  # True: the counter since boot; False: the readings in the history
    # Its 95% interval (write_counter.rate_interval), from three readings a day apart or more.
    low_per_day: float | None = None
    high_per_day: float | None = None

    @property
    def interval(self) -> tuple[float, float] | None:
        if self.low_per_day is None or self.high_per_day is None:
            return None
        return self.low_per_day, self.high_per_day


@dataclass(frozen=True, kw_only=True)
class HealthResult:
    flashmark_version: str = ""
    target: str  # as given
    device: str  # /dev/NAME of the physical device
    device_kind: str  # the probe's: "emmc", "sd", "nvme", "usb", ...
    model: str | None
    capacity_bytes: int | None
    # What this device's earlier readings are found by: its card's CID, its serial, or (where
    # it has neither) its name, which another device may take after a re-plug.
    device_key: str
    card_cid: str | None  # the card's CID register (the history's card index)
    health: Health  # what the device reports of its wear, as the probe reads it
    counter: CounterSample | None  # the kernel's write counter now (None: unreadable)
    readings: int  # this device's readings the forecast drew on, this one included
    span_days: float  # the time those readings span
    rate: WriteRate | None
    forecast: Forecast
    red_flags: tuple[str, ...]  # the device's own alarms (health.red_flags)
    skipped: tuple[str, ...]  # what could not be read, and how to read it
    finished_at: str
    id: int | None = field(default=None, metadata=document(omit_none=True))

    def with_id(self, result_id: int) -> HealthResult:
        return replace(self, id=result_id)

    @property
    @written(before="flashmark_version")
    def summary(self) -> str:
        """The answer in one line (health.view.health_summary)."""
        from flashmark.health.view import health_summary

        return health_summary(self)


HEALTH_DOCUMENT = Codec(HealthResult, HEALTH_SCHEMA, "health")
