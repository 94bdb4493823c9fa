"""Surface scans -> one self-contained HTML page with a chart of MB/s over the surface. Pure.

Like the benchmark report (report/html.py) the page makes no request (inline style, inline SVG,
no script; a Content-Security-Policy forbids anything else). The chart is drawn here as plain
SVG, one polyline per pass over the slices, with the cache cliff marked by a dashed line and
ranges not read back as written marked in red under the axis: a few hundred points need no
chart library.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from flashmark import __version__
from flashmark.surface.render import summary_lines
from flashmark.surface.result import SurfaceResult
from flashmark.units import MB, GiB, MiB, format_size, mb_per_s

# The chart's coordinates (viewBox units) and its text size: the SVG scales to the page's width,
# so 13 units read as about 8.5 px on a 390 px phone and 18 px at the page's widest (48rem).
# The right margin holds half of the last offset label ("16.0 GiB"), centred on the plot's edge.
_WIDTH, _HEIGHT = 560, 280
_LEFT, _RIGHT, _TOP, _BOTTOM = 52, 36, 16, 44
_FONT = 13
_CHAR_EM = 0.62  # a character of a sans-serif font is at most about 0.62 em wide
_COLOURS = {"write": "#d95f02", "read": "#1b6ac9"}
_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5rem;max-width:60rem;color:#222;
overflow-wrap:break-word}
pre{background:#f6f6f6;padding:.8rem;overflow-x:auto}
svg{display:block;width:100%;max-width:48rem;height:auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}
.legend span{margin-right:1rem;white-space:nowrap}
@media (max-width:40rem){body{margin:1rem}h1{font-size:1.5rem}h2{font-size:1.2rem}}"""


def render_surface_html(results: Sequence[SurfaceResult]) -> str:
    body = "\n".join(_section(result) for result in results)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>flashmark surface scans</title><style>{_STYLE}</style></head><body>"
        f"<h1>flashmark surface scans</h1>{body}"
        f"<p><small>flashmark {html.escape(__version__)}; MB = 10^6 bytes</small></p>"
        "</body></html>\n"
    )


def _section(result: SurfaceResult) -> str:
    title = f"Scan {result.id}" if result.id else "Scan"
    summary = html.escape("\n".join(summary_lines(result)))
    return (
        f"<section><h2>{html.escape(title)}: {html.escape(result.target.path)}</h2>"
        f"<pre>{summary}</pre>{surface_chart(result)}</section>"
    )


def surface_chart(result: SurfaceResult) -> str:
    """MB/s of each pass over the surface (x: offset), the cache cliff dashed."""
    slices = result.slices
    size = result.target.size_bytes or 1
    series = {
        "write": [(s.start + s.length / 2, s.write_bw_bytes) for s in slices],
        "read": [(s.start + s.length / 2, s.read_bw_bytes) for s in slices],
    }
    rates = [r for points in series.values() for _, r in points if r is not None]
    if not rates:
        return "<p>No rates were measured.</p>"
    # round steps of MB/s, about four, the top point a little below the plot's edge
    peak = mb_per_s(max(rates))
    step = _round_step(peak / 4)
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
            f'width="{right - left:.1f}" height="6" fill="#c00">'
            f"<title>{html.escape(found.kind)} at {found.start}, {found.length} bytes</title>"
            "</rect>"
        )
    parts.append("</svg>")
    legend = "".join(
        f'<span style="color:{_COLOURS[name]}">&#9632; {name}</span>'
        for name, points in series.items()
        if any(r is not None for _, r in points)
    )
    marks = (
        ' <span style="color:#c00">&#9632; not as written</span>' if result.integrity.ranges else ""
    )
    return "".join(parts) + f'<p class="legend">{legend}{marks}</p>'


def _round_step(value: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at least `value`: ticks a reader can add."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value * (1 - 1e-9))


def _offset_label(offset: float) -> str:
    if offset >= GiB:
        return f"{offset / GiB:.1f} GiB"
    return f"{offset / MiB:.0f} MiB"
