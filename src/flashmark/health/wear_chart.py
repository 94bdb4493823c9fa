"""A device's health readings over time -> a chart in the HTML report: the wear it reported at
each reading as a band (its bracket: an eMMC estimate spans a tenth of its life, NVMe's
percentage used one point) on the left axis, and the bytes written on the right, against time.

One chart per device (by its key, as the forecast joins readings) with two readings or more
among the results shown. The bytes are NVMe's own count of data written where every reading has
it (since the drive's first write); else the kernel's counter summed across boots from the first
reading (write_counter.add_up: a lower bound, a reboot's uncounted writes not in it). Drawn in
the report's one look (flashmark.views.charts): the band is a filled outline, the bytes a line
on the right axis. It holds no script and no URL; its legend is page text.
"""

from __future__ import annotations

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
from flashmark.views.charts import config, named, render

ANCHOR = "health-wear"
# The band is drawn in pygal's opacity: a light blue, so the written line reads across it.
_WEAR = "#8fb5e4"
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
    charts = [
        chart
        for index, device in enumerate(wear_over_time(results), start=1)
        if (chart := wear_chart(device, f"{ANCHOR}-{index}"))
    ]
    if not charts:
        return None
    body = Markup(
        '<p class="note">Each device\'s readings against time: the wear it reported (the band: '
        "its bracket of the rated life used) and the bytes written (MB, GB, TB = 10^6, 10^9, "
        "10^12 bytes).</p>"
        '<div class="cards">{}</div>'
    ).format(Markup("").join(charts))
    return HtmlPart(ANCHOR, "Wear over time", body), len(charts)


def wear_chart(device: DeviceWear, name: str) -> Markup | None:
    """A card with the device's chart and its legend; None when its readings hold neither wear
    nor bytes written. `name` is the chart's id on the page."""
    import pygal

    points = device.points
    worn = [(p.seconds, p.wear) for p in points if p.wear is not None]
    written = [(p.seconds, p.written) for p in points if p.written is not None]
    if not worn and not written:
        return None
    start, end = points[0].seconds, points[-1].seconds
    span = end - start
    wear_top = _top(max((high * 100 for _, (_, high) in worn), default=10.0))
    most = max((bytes_ for _, bytes_ in written), default=0.0)
    unit, factor = next(((u, f) for u, f in _BYTE_UNITS if most >= f), ("B", 1.0))
    bytes_top = _top(most / factor)
    # The wear on the left axis, the bytes on the right; without wear, the bytes on the left
    # (pygal draws nothing where only its secondary axis has data).
    left_top = wear_top if worn else bytes_top
    legend = [
        LegendKey("life used, as the device reports it (%)", _WEAR, "bar")
        if worn
        else LegendKey("life used: the device reports none", _WEAR, "mark")
    ]
    if written:
        source = (
            "the drive's own count"
            if device.drive_count
            else "the kernel's count since the first reading"
        )
        legend.append(LegendKey(f"written ({unit}), {source}", _WRITTEN))
    # readings of one moment: in the middle of an axis a second wide
    edges = (start, end) if span > 0 else (start - 1, start + 1)
    chart = pygal.XY(
        **config(
            [key.colour for key in legend if worn or key.line != "mark"],
            classes=("pygal-chart", "wear-chart"),
            x_labels=[start + share * span for share in (0.0, 0.5, 1.0)] if span > 0 else [start],
            x_value_formatter=lambda seconds: _when(seconds, span),
            xrange=edges,
            y_labels=[left_top * quarter / 4 for quarter in range(5)],
            range=(0, left_top),
            secondary_range=(0, bytes_top),
            value_formatter=_label,
            show_dots=False,
        )
    )
    chart.uuid = name  # the page's id of the chart ("chart-NAME"), not pygal's random one
    chart.add_xml_filter(named(f"wear and bytes written over time of {device.device}"))
    if worn:
        # The bracket as a closed outline, its low edge forward and its high edge back: filled
        # to zero along one line there and back, pygal's fill is the band alone; one reading
        # is a narrow bar at its time.
        width = (edges[1] - edges[0]) / 200
        band = (
            [(s + side * width, w) for s, w in worn for side in (-1, 1)] if len(worn) == 1 else worn
        )
        outline = [(s, low * 100) for s, (low, _) in band]
        outline += [(s, high * 100) for s, (_, high) in reversed(band)]
        chart.add(legend[0].label, [*outline, outline[0]], fill=True)
    if written:
        chart.add(
            legend[1].label,
            [{"value": (s, b / factor), "label": decimal_bytes(b)} for s, b in written],
            secondary=bool(worn),
            show_dots=True,
            dots_size=2.5,
        )
    drawn = render(chart, legend)
    return Markup('<article class="card"><h3>{}</h3><figure>{}{}</figure></article>').format(
        device.device, Markup(drawn.svg), legend_html(drawn.legend)
    )


def _top(peak: float) -> float:
    """An axis's top: whole steps of a round size (about four) above `peak`."""
    step = round_step(peak / 4) if peak > 0 else 1.0
    return max(1, math.ceil(peak * 1.04 / step)) * step


def _label(value: float) -> str:
    """An axis label; the legend names the units."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"  # "1000", never "1e+03"


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
