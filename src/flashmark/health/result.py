"""The result of `flashmark health`: frozen dataclasses and their JSON document, in the one
codec (flashmark.codec).

Schema history ("schema" key):
    flashmark.health/1   first version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flashmark.codec import Codec, document, written
from flashmark.health.forecast import Forecast
from flashmark.health.red_flags import worn_out
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

    @property
    @written(before="flashmark_version")
    def summary(self) -> str:
        """The answer in one line (`health_summary`, below)."""
        return health_summary(self)


HEALTH_DOCUMENT = Codec(HealthResult, HEALTH_SCHEMA, "health")


# -- the answer in one line ------------------------------------------------------------------------


def decimal_bytes(value: float) -> str:
    """Decimal units, as drive makers rate endurance (TBW): '2.10 GB', '1.35 TB'."""
    for unit, factor in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= factor:
            return f"{value / factor:.2f} {unit}"
    return f"{value:.0f} B"


def _years(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def reports_wear(health: Health) -> bool:
    vendor_life = health.vendor is not None and health.vendor.life_used_low_pct is not None
    return bool(
        health.life_time_a
        or health.life_time_b
        or health.percentage_used is not None
        or vendor_life
    )


def forecast_text(result: HealthResult) -> str:
    """Years left as an interval, or why there is none."""
    forecast, rate = result.forecast, result.rate
    if forecast.years_low is not None and forecast.years_low == forecast.years_high == 0:
        return "the rated life is used up"
    if forecast.unknown:
        if not reports_wear(result.health):
            return "unknown: the device reports no wear"
        if rate is None or not rate.bytes_per_day:
            return "unknown: no write rate to forecast from yet"
        return "unknown until a later reading sets writes against the wear"
    assert forecast.years_low is not None
    if forecast.years_high is None:
        return (
            f"at least {_years(forecast.years_low)} years left (an upper end comes once the "
            "device reports its next wear step)"
        )
    return f"{_years(forecast.years_low)} to {_years(forecast.years_high)} years left"


def health_summary(result: HealthResult) -> str:
    """The answer in one line: the device's alarms first, else the forecast, at the rate."""
    if result.red_flags:
        prefix = "replace it" if worn_out(result.health) else "alarm"
        return f"{prefix}: " + "; ".join(result.red_flags)
    answer = forecast_text(result)
    rate = result.rate
    if rate is None:
        return answer
    if not result.forecast.unknown:
        return f"{answer} at {decimal_bytes(rate.bytes_per_day)}/day"
    full = result.forecast.full_writes_per_day
    writes = f" ({full:.3g} full writes)" if full is not None else ""
    return f"{answer}; it takes {decimal_bytes(rate.bytes_per_day)}/day{writes}"
