"""A device's health readings over time -> a chart in the HTML report: the wear it reported at
each reading as a band (its bracket: an eMMC estimate spans a tenth of its life, NVMe's
percentage used one point) on the left axis, and the bytes written on the right, against time.

One chart per device (by its key, as the forecast joins readings) with two readings or more
among the results shown. The bytes are NVMe's own count of data written where every reading has
it (since the drive's first write); else the kernel's counter summed across boots from the first
reading (write_counter.add_up: a lower bound, a reboot's uncounted writes not in it). Plain SVG:
a band is one polygon, and a few dozen points need no chart library. It holds no script and no
URL; its texts are escaped here, its legend is page text.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from flashmark.health.check import wear_reading
from flashmark.health.forecast import nvme_bracket
from flashmark.health.nvme_wear import DATA_UNIT_BYTES
from flashmark.health.result import HealthResult, decimal_bytes
from flashmark.health.write_counter import add_up
from flashmark.result_kind import HtmlPart, LegendKey, legend_html
from flashmark.units import SECONDS_PER_DAY, round_step, utc_epoch

ANCHOR = "health-wear"
# The chart's coordinates (viewBox units) and text size: it scales to its column. The side
# margins hold the axes' labels ("100" left, "2.25" right).
_WIDTH, _HEIGHT = 440, 250
_LEFT, _RIGHT, _TOP, _BOTTOM = 40, 44, 16, 40
_FONT = 15
_WEAR = "#1b6ac9"
_WRITTEN = "#d95f02"
# Bytes on the right axis in the unit of their largest value (decimal, as drives rate TBW).
_BYTE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3))


@dataclass(frozen=True)
class WearPoint:
    """One reading: when, the wear bracket reported (fractions of the rated life; None: none
    reported), and the bytes written by then (None: not counted)."""

    seconds: float
    wear: tuple[float, float] | None
    written: float | None


@dataclass(frozen=True)
class DeviceWear:
    device: str  # "/dev/mmcblk1 (Samsung M8G1GC)"
    points: tuple[WearPoint, ...]  # oldest first
    drive_count: bool  # True: bytes are NVMe's data_units_written; False: the kernel's counter


def wear_over_time(results: Sequence[HealthResult]) -> list[DeviceWear]:
    """Each device with two readings or more among `results` (in the order first met)."""
    by_key: dict[str, list[tuple[float, HealthResult]]] = {}
    for result in results:
        seconds = result.counter.seconds if result.counter else utc_epoch(result.finished_at)
        if seconds is not None:
            by_key.setdefault(result.device_key, []).append((seconds, result))
    devices = []
    for readings in by_key.values():
        if len(readings) < 2:
            continue
        readings.sort(key=lambda pair: pair[0])
        devices.append(_device_wear(readings))
    return devices


def _device_wear(readings: list[tuple[float, HealthResult]]) -> DeviceWear:
    latest = readings[-1][1]
    drive_count = all(r.health.data_units_written is not None for _, r in readings)
    counted: dict[float, float] = {}
    if not drive_count:
        samples = [r.counter for _, r in readings if r.counter is not None]
        writes = add_up(samples)
        counted = dict(zip(writes.seconds, map(float, writes.cumulative_bytes), strict=True))
    points = []
    for seconds, result in readings:
        units = result.health.data_units_written
        if drive_count and units is not None:
            written: float | None = float(units * DATA_UNIT_BYTES)
        else:
            written = counted.get(result.counter.seconds) if result.counter else None
        points.append(WearPoint(seconds, _bracket(result), written))
    name = f"{latest.device} ({latest.model})" if latest.model else latest.device
    return DeviceWear(name, tuple(points), drive_count)


def _bracket(result: HealthResult) -> tuple[float, float] | None:
    """The wear as the reading reported it: NVMe's percentage used, else the worse eMMC/UFS
    estimate (its "exceeded" drawn to 10% past the end)."""
    if result.health.percentage_used is not None:
        return nvme_bracket(result.health.percentage_used)
    reading = wear_reading(result.health, 0, 0)
    if reading is None:
        return None
    return reading.low, reading.high if math.isfinite(reading.high) else reading.low + 0.1


def wear_part(results: Sequence[HealthResult]) -> tuple[HtmlPart, int] | None:
    """The report's part "Wear over time": a chart per device with two readings or more, and
    how many; None when no device has two."""
    charts = [chart for device in wear_over_time(results) if (chart := wear_chart(device))]
    if not charts:
        return None
    body = Markup(
        '<p class="note">Each device\'s readings against time: the wear it reported (the band: '
        "its bracket of the rated life used) and the bytes written (MB, GB, TB = 10^6, 10^9, "
        "10^12 bytes).</p>"
        '<div class="cards">{}</div>'
    ).format(Markup("").join(charts))
    return HtmlPart(ANCHOR, "Wear over time", body), len(charts)


def wear_chart(device: DeviceWear) -> Markup | None:
    """A card with the device's chart and its legend; None when its readings hold neither wear
    nor bytes written."""
    points = device.points
    worn = [p for p in points if p.wear is not None]
    written = [p for p in points if p.written is not None]
    if not worn and not written:
        return None
    start, end = points[0].seconds, points[-1].seconds
    span = end - start
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    wear_top = _top(max((p.wear[1] * 100 for p in worn if p.wear), default=10.0))
    most = max((p.written or 0.0 for p in written), default=0.0)
    unit, factor = next(((u, f) for u, f in _BYTE_UNITS if most >= f), ("B", 1.0))
    bytes_top = _top(most / factor)

    def x(seconds: float) -> float:  # readings of one moment: in the middle
        return _LEFT + ((seconds - start) / span if span > 0 else 0.5) * plot_w

    def y(fraction: float) -> float:  # of the axis's top
        return _TOP + plot_h - fraction * plot_h

    parts = [
        f'<svg class="wear-chart" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" '
        f'aria-label="wear and bytes written over time of {html.escape(device.device)}">',
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#999"/>',
    ]
    parts += _axis_labels(wear_top, "end", _LEFT - 6)
    if written:
        parts += _axis_labels(bytes_top, "start", _LEFT + plot_w + 6)
    bottom = _TOP + plot_h + 17
    ends = ((0.0, "start"), (0.5, "middle"), (1.0, "end")) if span > 0 else ((0.5, "middle"),)
    for share, anchor in ends:
        seconds = start + share * span
        parts.append(
            f'<text x="{x(seconds):.1f}" y="{bottom}" font-size="{_FONT}" '
            f'text-anchor="{anchor}">{_when(seconds, span)}</text>'
        )
    if worn:
        band = [(x(p.seconds), y(p.wear[0] * 100 / wear_top)) for p in worn if p.wear]
        band += [(x(p.seconds), y(p.wear[1] * 100 / wear_top)) for p in reversed(worn) if p.wear]
        if len(worn) == 1:  # one reading reported wear: a narrow bar at its time
            (left, low), (_, high) = band
            band = [(left - 2, low), (left + 2, low), (left + 2, high), (left - 2, high)]
        drawn = " ".join(f"{px:.1f},{py:.1f}" for px, py in band)
        parts.append(
            f'<polygon class="wear" points="{drawn}" fill="{_WEAR}" fill-opacity="0.35" '
            f'stroke="{_WEAR}" stroke-width="1"/>'
        )
    if written:
        line = " ".join(
            f"{x(p.seconds):.1f},{y((p.written or 0.0) / factor / bytes_top):.1f}" for p in written
        )
        parts.append(
            f'<polyline class="written" points="{line}" fill="none" stroke="{_WRITTEN}" '
            'stroke-width="1.5"/>'
        )
        parts += [
            f'<circle cx="{x(p.seconds):.1f}" cy="{y((p.written or 0.0) / factor / bytes_top):.1f}"'
            f' r="2.5" fill="{_WRITTEN}"><title>{decimal_bytes(p.written or 0.0)}</title></circle>'
            for p in written
        ]
    parts.append("</svg>")
    legend = []
    if worn:
        legend.append(LegendKey("life used, as the device reports it (%)", _WEAR, "bar"))
    else:
        legend.append(LegendKey("life used: the device reports none", _WEAR, "mark"))
    if written:
        source = (
            "the drive's own count"
            if device.drive_count
            else "the kernel's count since the first reading"
        )
        legend.append(LegendKey(f"written ({unit}), {source}", _WRITTEN))
    return Markup('<article class="card"><h3>{}</h3><figure>{}{}</figure></article>').format(
        device.device, Markup("".join(parts)), legend_html(legend)
    )


def _top(peak: float) -> float:
    """An axis's top: whole steps of a round size (about four) above `peak`."""
    step = round_step(peak / 4) if peak > 0 else 1.0
    return max(1, math.ceil(peak * 1.04 / step)) * step


def _axis_labels(top: float, anchor: str, at: float) -> list[str]:
    """Five labels up an axis (0, a quarter of `top`, ...); the legend names the units."""
    plot_h = _HEIGHT - _TOP - _BOTTOM
    labels = []
    for quarter in range(5):
        value = top * quarter / 4
        text = f"{value:.0f}" if value >= 100 else f"{value:.3g}"  # "1000", never "1e+03"
        labels.append(
            f'<text x="{at}" y="{_TOP + plot_h - quarter / 4 * plot_h + 5:.1f}" '
            f'font-size="{_FONT}" text-anchor="{anchor}">{html.escape(text)}</text>'
        )
    return labels


def _when(seconds: float, span: float) -> str:
    """A time on the axis (UTC), as precise as the readings' span needs: the day, the day and
    the minute, or the second."""
    if span >= 2 * SECONDS_PER_DAY:
        shown = "%Y-%m-%d"
    elif span >= 2 * 3600:
        shown = "%m-%d %H:%M"
    else:
        shown = "%H:%M:%S"
    return time.strftime(shown, time.gmtime(seconds))
