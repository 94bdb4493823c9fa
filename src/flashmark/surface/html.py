"""Surface scans -> their section of the HTML report, with a chart of MB/s over the surface.

Each scan is a card: its summary (the terminal's lines, word for word: surface.view) and a
chart drawn here as plain SVG, one polyline per pass over the slices, with the cache cliff
marked by a dashed line and ranges not read back as written marked in red under the axis (a
few hundred points need no chart library). The page around it (flashmark.report.html) makes no
request; this SVG holds no script and no URL. Its legend is page text under it.
"""

from __future__ import annotations

import html
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
from flashmark.units import MB, GiB, MiB, format_size, mb_per_s, round_step

# The chart's coordinates (viewBox units) and its text size: the SVG scales to its column, so
# 15 units read as about 10 px on a 360 px phone (the chart in its card about 290 px wide) and
# 15-20 px on a laptop. The right margin holds half of the last offset label ("16.0 GiB"),
# centred on the plot's edge.
_WIDTH, _HEIGHT = 440, 250
_LEFT, _RIGHT, _TOP, _BOTTOM = 62, 40, 16, 46
_FONT = 15
_CHAR_EM = 0.62  # a character of a sans-serif font is at most about 0.62 em wide
_COLOURS = {"write": "#d95f02", "read": "#1b6ac9"}
_BAD = "#c00"


def surfaces_section(results: Sequence[SurfaceResult]) -> HtmlSection:
    """The scans' part of the report: a card per scan with its summary and its chart."""
    cards = []
    charts = 0
    for index, result in enumerate(results):
        chart = surface_chart(result)
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
    return HtmlEntry(name, _short(result, index), _anchor(result, index))


def _name(result: SurfaceResult, index: int) -> str:
    return f"#{result.id}" if result.id is not None else f"scan {index + 1}"


def _short(result: SurfaceResult, index: int) -> str:
    return f"{_name(result, index)} {short_target(result.target.path)}"


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


def surface_chart(result: SurfaceResult) -> Markup | None:
    """A figure: MB/s of each pass over the surface (x: offset), the cache cliff dashed, and
    its legend; None when no rate was measured."""
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
    top = ticks * step * MB
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    def x(offset: float) -> float:
        return _LEFT + offset / size * plot_w

    def y(rate: float) -> float:
        return _TOP + plot_h - rate / top * plot_h

    parts = [
        f'<svg class="surface-chart" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" '
        f'aria-label="MB/s over the surface of {html.escape(result.target.path)}">',
        f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#999"/>',
    ]
    for tick in range(ticks + 1):
        parts.append(
            f'<text x="{_LEFT - 6}" y="{y(tick * step * MB) + 4:.1f}" font-size="{_FONT}" '
            f'text-anchor="end">{tick * step:g}</text>'
        )
    for quarter in range(5):
        offset = size * quarter / 4
        parts.append(
            f'<text x="{x(offset):.1f}" y="{_TOP + plot_h + 17}" font-size="{_FONT}" '
            f'text-anchor="middle">{_offset_label(offset)}</text>'
        )
    parts.append(
        f'<text x="16" y="{_TOP + plot_h / 2}" font-size="{_FONT}" '
        f'transform="rotate(-90 16 {_TOP + plot_h / 2})" text-anchor="middle">MB/s</text>'
    )
    for name, points in series.items():
        drawn = " ".join(f"{x(o):.1f},{y(r):.1f}" for o, r in points if r is not None)
        if drawn:
            parts.append(
                f'<polyline class="{name}" points="{drawn}" fill="none" '
                f'stroke="{_COLOURS[name]}" stroke-width="1.5"/>'
            )
    cache = result.cache
    if cache is not None and cache.found and cache.bytes is not None:
        cx = x(cache.bytes)
        label = f"cache full ({format_size(cache.bytes)})"
        # right of the line, or left of it where the label would run off the chart
        fits = cx + 4 + len(label) * _CHAR_EM * _FONT <= _WIDTH
        anchor = f'x="{cx + 4:.1f}"' if fits else f'x="{cx - 4:.1f}" text-anchor="end"'
        parts.append(
            f'<line class="cache-cliff" x1="{cx:.1f}" y1="{_TOP}" x2="{cx:.1f}" '
            f'y2="{_TOP + plot_h}" stroke="#555" stroke-dasharray="4 3"/>'
            f'<text {anchor} y="{_TOP + 14}" font-size="{_FONT}">{html.escape(label)}</text>'
        )
    for found in result.integrity.ranges:
        left, right = x(found.start), max(x(found.end), x(found.start) + 1)
        parts.append(
            f'<rect class="bad" x="{left:.1f}" y="{_TOP + plot_h + 22}" '
            f'width="{right - left:.1f}" height="6" fill="{_BAD}">'
            f"<title>{html.escape(found.kind)} at {found.start}, {found.length} bytes</title>"
            "</rect>"
        )
    parts.append("</svg>")
    legend = [
        LegendKey(f"{name} pass", _COLOURS[name])
        for name, points in series.items()
        if any(r is not None for _, r in points)
    ]
    if result.integrity.ranges:
        legend.append(LegendKey("not read back as written", _BAD, "mark"))
    # The SVG's texts are escaped above (html.escape), its numbers formatted here.
    return Markup("<figure>{}{}</figure>").format(Markup("".join(parts)), legend_html(legend))


def _offset_label(offset: float) -> str:
    if offset >= GiB:
        return f"{offset / GiB:.1f} GiB"
    return f"{offset / MiB:.0f} MiB"
