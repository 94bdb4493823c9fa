"""What the pages show, computed before a template sees it (pure): figures in the report's
units (MB = 10^6 bytes), the distribution charts of a device page as SVG geometry, and the
server's navigation inserted into a report page.

The two parts of a page repeated hundreds of times, the rows of a results table and the bars
of the device charts, are written here as HTML at once (`table_rows`, `bars_svg`), every text
from an upload escaped: as template expressions they took most of a page's time (about 1,000
escaped values a page, each a call of Jinja2's runtime).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from flashmark.server.ranking import Standing
from flashmark.server.storage import ResultRow

# (column, label, unit): the headline figures as the pages and the CSV name them.
HEADLINE_LABELS: tuple[tuple[str, str, str], ...] = (
    ("seq_read_bps", "seq-read", "MB/s"),
    ("seq_write_bps", "seq-write", "MB/s"),
    ("rand_read_4k_iops", "rand-read-4k", "IOPS"),
    ("rand_write_4k_iops", "rand-write-4k", "IOPS"),
    ("rand_read_4k_q32_iops", "rand-read-4k-q32", "IOPS"),
    ("rand_write_4k_q32_iops", "rand-write-4k-q32", "IOPS"),
)
CHART_WIDTH = 320
CHART_HEIGHT = 96
_PLOT_TOP = 8
_PLOT_BOTTOM = 72  # bars end here; the axis labels sit below
# Okabe-Ito blue for the result's bar, a light tint of it for the others (as the report's charts)
_MINE = "#0072B2"
_OTHERS = "#A6C8E0"


def figure(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if unit == "MB/s":
        return f"{value / 1e6:.1f}"
    return f"{value:.0f}"


def capacity(value: int | None) -> str:
    return "" if value is None else f"{value / 1e9:.1f} GB"


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    count: int
    mine: bool  # the bin holding the result


@dataclass(frozen=True)
class Chart:
    """A histogram of one headline across a group, with the result's place marked."""

    label: str
    unit: str
    value: str
    percentile: str
    count: int
    low: str
    high: str
    bars: tuple[Bar, ...]
    marker_x: float | None
    summary: str  # the chart in words, for screen readers and text browsers


def charts(standings: Sequence[Standing]) -> list[Chart]:
    labels = {column: (label, unit) for column, label, unit in HEADLINE_LABELS}
    result = []
    for standing in standings:
        label, unit = labels[standing.column]
        result.append(_chart(standing, label, unit))
    return result


def _chart(standing: Standing, label: str, unit: str) -> Chart:
    bins = standing.bins
    percentile = standing.percentile
    bars: list[Bar] = []
    marker_x = None
    if bins and standing.low is not None and standing.high is not None:
        width = CHART_WIDTH / len(bins)
        tallest = max(bins) or 1
        span = standing.high - standing.low
        mine = None
        if standing.value is not None and span > 0:
            position = (standing.value - standing.low) / span
            marker_x = round(min(max(position, 0.0), 1.0) * CHART_WIDTH, 1)
            mine = min(int(position * len(bins)), len(bins) - 1)
        elif standing.value is not None:
            marker_x, mine = width / 2, 0
        plot = _PLOT_BOTTOM - _PLOT_TOP
        for index, count in enumerate(bins):
            height = plot * count / tallest
            bars.append(
                Bar(
                    x=round(index * width, 1),
                    y=round(_PLOT_BOTTOM - height, 1),
                    width=round(width - 1, 1),
                    height=round(height, 1),
                    count=count,
                    mine=index == mine,
                )
            )
    shown = figure(standing.value, unit)
    words = (
        f"{label}: {shown} {unit}, percentile {percentile:.0f} of {standing.count} results"
        if percentile is not None
        else f"{label}: not measured in this result ({standing.count} results have it)"
    )
    return Chart(
        label=label,
        unit=unit,
        value=shown,
        percentile="" if percentile is None else f"{percentile:.0f}",
        count=standing.count,
        low=figure(standing.low, unit),
        high=figure(standing.high, unit),
        bars=tuple(bars),
        marker_x=marker_x,
        summary=words,
    )


def row_cells(row: ResultRow) -> Mapping[str, str]:
    return {column: figure(row.headlines[column], unit) for column, _, unit in HEADLINE_LABELS}


def bars_svg(bars: Sequence[Bar]) -> Markup:
    """A chart's bars as SVG elements, each with its count as a tooltip (numbers only)."""
    return Markup(
        "".join(
            f'<rect x="{bar.x}" y="{bar.y}" width="{bar.width}" height="{bar.height}" '
            f'fill="{_MINE if bar.mine else _OTHERS}"><title>{bar.count} '
            f"result{'' if bar.count == 1 else 's'}</title></rect>"
            for bar in bars
        )
    )


def table_rows(rows: Sequence[ResultRow]) -> Markup:
    """The rows of a results table (results_table.html): a box to tick for /compare, links
    to the result and its device page, the device, board, profile and headline figures."""
    lines = []
    for row in rows:
        figures = "".join(
            f'<td class="n">{figure(row.headlines[column], unit)}</td>'
            for column, _, unit in HEADLINE_LABELS
        )
        device = f"{escape(row.maker or '?')} {escape(row.product or row.model_key)}"
        lines.append(
            f'\n<tr>\n<td><input type="checkbox" name="id" value="{row.id}" '
            f'aria-label="compare result {row.id}"></td>\n'
            f'<td><a href="/results/{row.id}">{row.id}</a></td>\n'
            f'<td><a href="/devices/{escape(row.model_key)}?result={row.id}">{device}</a></td>\n'
            f'<td class="n">{capacity(row.capacity_bytes)}</td>\n'
            f"<td>{escape(row.medium or '')}</td>\n"
            f"<td>{escape(row.board or '')}</td>\n"
            f"<td>{escape(row.profile)}</td>\n"
            f"{figures}\n"
            f"<td>{escape(row.started_at[:16])}</td>\n"
            "</tr>\n"
        )
    return Markup("".join(lines))


_BODY = re.compile(r"<body\b[^>]*>")


def with_navigation(page: str, navigation: str) -> str:
    """The report page with the service's links at the top of its body (the report is made
    by flashmark.report.html, unchanged otherwise: its own CSP stays in force)."""
    match = _BODY.search(page)
    if match is None:
        return page
    return page[: match.end()] + navigation + page[match.end() :]
