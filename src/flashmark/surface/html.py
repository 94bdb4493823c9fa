"""Surface scans -> their section of the HTML report, with a chart of MB/s over the surface.

Each scan is a card: its summary (the terminal's lines, word for word: surface.view) and a
chart in the report's one look (flashmark.views.charts), one line per pass over the slices,
with the cache cliff marked by a dashed line and ranges not read back as written marked in red
on the axis. The page around it (flashmark.report.html) makes no request; this SVG holds no
script and no URL. Its legend is page text under it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import Markup

from flashmark.result_kind import (
    HtmlEntry,
    HtmlPart,
    HtmlSection,
    LegendKey,
    legend_html,
    section_of,
    short_target,
)
from flashmark.surface.result import SurfaceResult
from flashmark.surface.view import summary_lines
from flashmark.units import GiB, MiB, format_size, mb_per_s, round_step
from flashmark.views.charts import config, named, render

_COLOURS = {"write": "#d95f02", "read": "#1b6ac9"}
_BAD = "#c00"
_MARKS = 0.06  # the strip under zero that holds the marks, a share of the y axis


def surfaces_section(results: Sequence[SurfaceResult]) -> HtmlSection:
    """The scans' part of the report: a card per scan with its summary and its chart."""
    cards = []
    charts = 0
    for index, result in enumerate(results):
        chart = surface_chart(result, _anchor(result, index))
        charts += chart is not None
        cards.append(_card(result, index, chart))
    body = Markup(
        '<p class="note">MB/s of each pass over the surface, slice by slice, and every range '
        "that did not read back as written (MB = 10^6 bytes).</p>"
        '<div class="cards">{}</div>'
    ).format(Markup("").join(cards))
    entries = [_entry(result, index) for index, result in enumerate(results)]
    return section_of(
        HtmlPart("surface", "Surface scans", body), entries, "surface scan", charts=charts
    )


def _entry(result: SurfaceResult, index: int) -> HtmlEntry:
    name = _name(result, index)
    return HtmlEntry(name, f"{name} {short_target(result.target.path)}", _anchor(result, index))


def _name(result: SurfaceResult, index: int) -> str:
    return f"#{result.id}" if result.id is not None else f"scan {index + 1}"


def _anchor(result: SurfaceResult, index: int) -> str:
    return f"surface-{result.id}" if result.id is not None else f"surface-n{index + 1}"


def _card(result: SurfaceResult, index: int, chart: Markup | None) -> Markup:
    lines = summary_lines(result)
    rows = Markup("").join(
        Markup("<tr><th>{}</th><td>{}</td></tr>").format(*line.split(None, 1))
        for line in lines[1:]
        if len(line.split(None, 1)) == 2
    )
    figure = chart if chart is not None else Markup('<p class="note">No rates were measured.</p>')
    return Markup(
        '<article class="card" id="{}"><h3>Scan {}</h3><p class="note">{}</p>'
        '<div class="table-wrap"><table class="stack"><tbody>{}</tbody></table></div>{}'
        "</article>"
    ).format(
        _anchor(result, index),
        f"{_name(result, index)} {result.target.path}",
        lines[0],
        rows,
        figure,
    )


def surface_chart(result: SurfaceResult, name: str) -> Markup | None:
    """A figure: MB/s of each pass over the surface (x: offset), the cache cliff dashed, the
    ranges not read back as written as red marks on the axis, and its legend; None when no
    rate was measured. `name` is the chart's id on the page."""
    import pygal

    slices = result.slices
    size = result.target.size_bytes or 1
    series = {
        "write": [(s.start + s.length / 2, s.write_bw_bytes) for s in slices],
        "read": [(s.start + s.length / 2, s.read_bw_bytes) for s in slices],
    }
    rates = [r for points in series.values() for _, r in points if r is not None]
    if not rates:
        return None
    # round steps of MB/s, about four, the top point a little below the plot's edge
    peak = mb_per_s(max(rates))
    step = round_step(peak / 4)
    ticks = max(1, math.ceil(peak * 1.04 / step))
    legend = [
        LegendKey(f"{kind} pass", _COLOURS[kind])
        for kind, points in series.items()
        if any(r is not None for _, r in points)
    ]
    cache = result.cache
    if cache is not None and cache.found and cache.bytes is not None:
        legend.append(LegendKey(f"cache full ({format_size(cache.bytes)})", "#555555", "dashed"))
    if result.integrity.ranges:
        legend.append(LegendKey("not read back as written", _BAD, "mark"))
    chart = pygal.XY(
        **config(
            [key.colour for key in legend],
            classes=("pygal-chart", "surface-chart"),
            y_title="MB/s",
            show_dots=False,
            allow_interruptions=True,
            x_value_formatter=_offset_label,
            value_formatter=lambda rate: f"{rate:g}",
            x_labels=[size * quarter / 4 for quarter in range(5)],
            xrange=(0, size),
            y_labels=[tick * step for tick in range(ticks + 1)],
            # a strip under zero for the marks of the ranges not read back as written
            range=(-_MARKS * ticks * step, ticks * step),
        )
    )
    chart.uuid = name  # the page's id of the chart ("chart-NAME"), not pygal's random one
    chart.add_xml_filter(named(f"MB/s over the surface of {result.target.path}"))
    for kind, points in series.items():
        drawn = [(offset, mb_per_s(rate)) for offset, rate in points if rate is not None]
        if drawn:
            chart.add(f"{kind} pass", drawn)
    if cache is not None and cache.found and cache.bytes is not None:
        cliff = [(cache.bytes, 0), (cache.bytes, ticks * step)]
        chart.add("cache full", cliff, stroke_style={"dasharray": "4,3"})
    if result.integrity.ranges:
        marks: list[tuple[float | None, float | None]] = []
        mark_y = -_MARKS * ticks * step  # filled up to zero: a red block under each range
        for found in result.integrity.ranges:
            end = max(found.end, found.start + size / 400)  # too short a range is still seen
            marks += [(found.start, 0), (found.start, mark_y), (end, mark_y), (end, 0)]
            marks.append((None, None))  # the next range is a block of its own
        chart.add("not read back as written", marks, fill=True)
    drawn_chart = render(chart, legend)
    return Markup("<figure>{}{}</figure>").format(
        Markup(drawn_chart.svg), legend_html(drawn_chart.legend)
    )


def _offset_label(offset: float) -> str:
    if offset >= GiB:
        return f"{offset / GiB:.1f} GiB"
    return f"{offset / MiB:.0f} MiB"
