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
from flashmark.probe.model import DEVICE_KIND, Health
from flashmark.upload_rules import (
    DEVICE_NODE,
    MADE_TEXT,
    MODEL_NAME,
    TIMESTAMP,
    VERSION,
    Always,
    ListOf,
    MaskedCid,
    Withheld,
    upload,
    upload_as,
    uploaded,
)

HEALTH_SCHEMA = "flashmark.health/1"


@uploaded
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


@uploaded
@dataclass(frozen=True, kw_only=True)
class HealthResult:
    flashmark_version: str = field(default="", metadata=upload(VERSION.or_withheld()))
    target: str = field(metadata=upload(Withheld()))  # as given: a path
    device: str = field(metadata=upload(DEVICE_NODE.or_withheld()))  # /dev/NAME, the physical one
    device_kind: str = field(metadata=upload(DEVICE_KIND))  # the probe's: "emmc", "sd", "nvme"
    # which model, as a run's probe sends it
    model: str | None = field(metadata=upload(MODEL_NAME.or_null()))
    capacity_bytes: int | None
    # What this device's earlier readings are found by: its card's CID, its serial, or (where
    # it has neither) its name, which another device may take after a re-plug.
    device_key: str = field(metadata=upload(Withheld()))
    # The card's CID register (the history's card index), sent as a run's: with its serial
    # (PSN) and CRC zeroed, withheld when it does not decode or its name holds an identifier.
    card_cid: str | None = field(metadata=upload(MaskedCid()))
    health: Health  # what the device reports of its wear, as the probe reads it
    # The kernel's write counter now (None: unreadable): the time and the count are figures.
    counter: CounterSample | None
    readings: int  # this device's readings the forecast drew on, this one included
    span_days: float  # the time those readings span
    rate: WriteRate | None  # the writes a day and the years left: what a reading is shared for
    forecast: Forecast
    # The device's own alarms (health.red_flags): flashmark's phrases with its figures.
    red_flags: tuple[str, ...] = field(metadata=upload(ListOf(MADE_TEXT, drop=True)))
    # what could not be read, and how to read it: quotes the target and commands
    skipped: tuple[str, ...] = field(metadata=upload(Always(())))
    finished_at: str = field(metadata=upload(TIMESTAMP))
    id: int | None = field(default=None, metadata=upload(None, document(omit_none=True)))

    @property
    @upload_as(MADE_TEXT.or_withheld())
    @written(before="flashmark_version")
    def summary(self) -> str:
        """The answer in one line (`health_summary`, below), written from the alarms, forecast
        and rate."""
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
