"""A health reading in words: its answer in one line and its facts, the view every format is
written from (flashmark.views)."""

from __future__ import annotations

from flashmark.health.result import (
    HealthResult,
    WriteRate,
    decimal_bytes,
    forecast_text,
    health_summary,
)
from flashmark.probe.model import VendorHealth
from flashmark.units import SECONDS_PER_DAY
from flashmark.views.model import Cell, Fact, Facts, Notes, Tone, View

# The probe's device kinds as people write them (the others read as they are).
_KIND_NAMES = {"emmc": "eMMC", "sd": "SD card", "nvme": "NVMe", "usb": "USB", "ufs": "UFS"}
# The CSV table: one row per reading.
CSV_COLUMNS = (
    "id",
    "finished_at",
    "device",
    "device_kind",
    "model",
    "wear_low_pct",
    "wear_high_pct",
    "years_left_low",
    "years_left_high",
    "bytes_per_day",
    "full_writes_per_day",
    "readings",
    "red_flags",
)


def _span(seconds: float) -> str:
    if seconds >= 2 * SECONDS_PER_DAY:
        return f"{seconds / SECONDS_PER_DAY:.1f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 60:.0f} minutes"


def wear_text(result: HealthResult) -> str:
    """The wear as the device reports it, in its own brackets."""
    health = result.health
    if health.percentage_used is not None:
        return f"{health.percentage_used}% of rated endurance used"
    estimates = [
        f"type {name} {text}"
        for name, text in (("A", health.life_time_a), ("B", health.life_time_b))
        if text
    ]
    if estimates:
        text = "life used: " + ", ".join(estimates)
        text = f"{text}; pre-EOL {health.pre_eol}" if health.pre_eol else text
        return f"{text} (EXT_CSD, read now)" if health.wear_read == "ext_csd" else text
    vendor = health.vendor
    if vendor is not None and vendor.life_used_low_pct is not None:
        low, high = vendor.life_used_low_pct, vendor.life_used_high_pct
        bracket = f"{low:g}%" if high is None else f"{low:g}-{high:g}%"
        return f"life used: {bracket} ({vendor.vendor} health, read now)"
    return "not reported by the device"


# The vendor figures in words, in the order shown.
_VENDOR_FIGURES = (
    ("erase_count_average", "average erase count {}"),
    ("erase_count_max", "max erase count {}"),
    ("erase_count_total", "total erase count {}"),
    ("rated_erase_cycles", "rated {} cycles"),
    ("spare_blocks", "{} spare blocks"),
    ("bad_blocks_factory", "{} factory bad blocks"),
    ("bad_blocks_grown", "{} grown bad blocks"),
    ("power_on_count", "{} power-ons"),
    ("power_loss_count", "{} power losses"),
    ("manufactured", "made {}"),
    ("firmware", "firmware {}"),
)


def vendor_text(vendor: VendorHealth) -> str:
    """An SD card's answer to its vendor's health command, in one line."""
    figures = [
        words.format(getattr(vendor, name))
        for name, words in _VENDOR_FIGURES
        if getattr(vendor, name) is not None
    ]
    return f"{vendor.vendor}, {vendor.command}: " + "; ".join([*figures, *vendor.other])


def rate_text(rate: WriteRate | None, capacity_bytes: int | None) -> str:
    if rate is None:
        return "not known yet (no write counter since boot, and no day of readings)"
    seen = "since boot" if rate.since_boot else "over the readings"
    text = f"{decimal_bytes(rate.bytes_per_day)}/day, {seen} ({_span(rate.over_s)})"
    if rate.interval is not None:
        low, high = rate.interval
        text += f", 95% interval {decimal_bytes(low)} to {decimal_bytes(high)}"
    if capacity_bytes:
        text += f"; {rate.bytes_per_day / capacity_bytes:.3g} full writes a day"
    return text


def readings_text(result: HealthResult) -> str:
    if result.readings == 1:
        return "this one (run `flashmark health` again after days of use: the forecast narrows)"
    return f"{result.readings} of this device over {_span(result.span_days * SECONDS_PER_DAY)}"


def _tone(result: HealthResult) -> Tone:
    if result.red_flags:
        return "fail"
    return "uncertain" if result.forecast.unknown else "pass"


def health_view(result: HealthResult) -> View:
    forecast = result.forecast
    kind = _KIND_NAMES.get(result.device_kind, result.device_kind)
    what = ", ".join(part for part in (kind, result.model) if part)
    rows = [
        Fact("device", f"{result.device} ({what})" if what else result.device),
        Fact("wear", wear_text(result)),
        Fact("writes", rate_text(result.rate, result.capacity_bytes)),
        Fact("forecast", forecast_text(result)),
        Fact("readings", readings_text(result)),
    ]
    if result.health.vendor is not None:
        rows.append(Fact("card health", vendor_text(result.health.vendor)))
    if result.health.temperature_c is not None:
        rows.append(Fact("temperature", f"{result.health.temperature_c:.0f} °C"))
    if result.health.power_on_hours is not None:
        rows.append(Fact("powered on", f"{result.health.power_on_hours:,} hours"))
    rows += [Fact("alarm", flag, tone="fail") for flag in result.red_flags]
    blocks: list[Facts | Notes] = [Facts(tuple(rows))]
    if result.skipped:
        blocks.append(Notes(result.skipped))
    record: tuple[Cell, ...] = (
        result.id,
        result.finished_at,
        result.device,
        result.device_kind,
        result.model,
        _pct(forecast.wear_low),
        _pct(forecast.wear_high),
        forecast.years_low,
        forecast.years_high,
        result.rate.bytes_per_day if result.rate is not None else None,
        forecast.full_writes_per_day,
        result.readings,
        "; ".join(result.red_flags) or None,
    )
    tone = _tone(result)
    number = f" #{result.id}" if result.id is not None else ""
    return View(
        title=f"flashmark health{number}: {result.device}, {result.finished_at}",
        blocks=tuple(blocks),
        verdict=health_summary(result),
        badge={"fail": "replace", "uncertain": "unknown", "pass": "ok"}[tone],
        tone=tone,
        records=(record,),
    )


def _pct(value: float | None) -> float | None:
    return None if value is None else round(value * 100, 2)
