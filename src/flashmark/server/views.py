"""What the pages show, computed before a template sees it: figures in the report's units
(MB = 10^6 bytes), a device page's distribution charts as SVG geometry, and the server's
navigation in a report page. Table rows and chart bars, repeated hundreds of times a page, are
written here as escaped HTML at once (`TableRows`, `bars_svg`) and kept once written: as
template expressions they took most of a page's time.
"""

from __future__ import annotations

import csv
import functools
import io
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from flashmark.server.intake import HEADLINES, ReadingFacts
from flashmark.server.ranking import Standing
from flashmark.server.storage import ResultRow
from flashmark.spreadsheet import text_cell
from flashmark.upload_rules import WITHHELD, WITHHELD_BEFORE, WITHHELD_TIP

if TYPE_CHECKING:
    import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"
# (column, label, unit): the headline figures as the pages and the CSV name them, each by its
# test's name, a rate in MB/s and a count of operations in IOPS.
_UNITS = {"bw_bytes": "MB/s", "iops": "IOPS"}
HEADLINE_LABELS: tuple[tuple[str, str, str], ...] = tuple(
    (column, test, _UNITS[metric]) for column, test, _, metric in HEADLINES
)
CHART_WIDTH = 320
_PLOT_TOP = 8
_PLOT_BOTTOM = 72  # bars end here; the axis labels sit below
# Okabe-Ito blue for the result's bar, a light tint of it for the others (as the report's charts)
_MINE = "#0072B2"
_OTHERS = "#A6C8E0"
# Rows of results tables kept as HTML per server process (about 700 bytes each: 7 MB)
ROWS_KEPT = 10_000


@functools.cache
def templates() -> jinja2.Environment:
    """The service's page templates (its pages and campaign files share one environment),
    loaded when first used: a campaign read back from a service needs none. Every page may
    name the headline figures and format capacities and wear."""
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # every value a page shows came from an upload
        undefined=jinja2.StrictUndefined,
        auto_reload=False,  # templates are package files: no stat() per page
    )
    environment.globals.update(headlines=HEADLINE_LABELS, capacity=capacity, wear=wear_range)
    return environment


def figure(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if unit == "MB/s":
        return f"{value / 1e6:.1f}"
    return f"{value:.0f}"


def csv_cell(value: object) -> str:
    """A cell of the service's CSV files: text that no spreadsheet runs as a formula."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return text_cell(value)
    return "" if value is None else str(value)


def csv_text(rows: Iterable[Iterable[object]]) -> str:
    """Rows as the service's CSV files hold them, every cell a csv_cell."""
    buffer = io.StringIO()
    csv.writer(buffer).writerows([csv_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def capacity(value: int | None) -> str:
    return "" if value is None else f"{value / 1e9:.1f} GB"


def wear_range(facts: ReadingFacts) -> str:
    """A reading's wear as the percent range its device reports ("10-20"), or ""."""
    low, high = facts.wear_low, facts.wear_high
    if low is None:
        return ""
    if high is None:
        return f"{low * 100:g} or more"
    return f"{low * 100:g}" if high == low else f"{low * 100:g}-{high * 100:g}"


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
    bars_svg: Markup  # the bars as SVG elements (empty: no chart)
    marker_x: float | None
    summary: str  # the chart in words, for screen readers and text browsers


def charts(standings: Sequence[Standing]) -> list[Chart]:
    labels = {column: (label, unit) for column, label, unit in HEADLINE_LABELS}
    return [_chart(standing, *labels[standing.column]) for standing in standings]


def _chart(standing: Standing, label: str, unit: str) -> Chart:
    bins = standing.bins
    percentile = standing.percentile
    svg = Markup()
    marker_x = None
    if bins and standing.low is not None and standing.high is not None:
        span = standing.high - standing.low
        mine = None
        if standing.value is not None and span > 0:
            position = (standing.value - standing.low) / span
            marker_x = round(min(max(position, 0.0), 1.0) * CHART_WIDTH, 1)
            mine = min(int(position * len(bins)), len(bins) - 1)
        elif standing.value is not None:
            marker_x, mine = CHART_WIDTH / len(bins) / 2, 0
        svg = _bars(bins, mine)
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
        bars_svg=svg,
        marker_x=marker_x,
        summary=words,
    )


@functools.lru_cache(maxsize=2048)
def _bars(bins: tuple[int, ...], mine: int | None) -> Markup:
    """The bars of a histogram as SVG elements, `mine` marked, each with its count as a
    tooltip (numbers only): a function of the counts alone, so a group's charts are drawn
    once for each bin a result can fall in (the counts stay the same while the group's
    figures are cached; ranking.CACHE_SECONDS)."""
    width = CHART_WIDTH / len(bins)
    tallest = max(bins) or 1
    heights = [(_PLOT_BOTTOM - _PLOT_TOP) * count / tallest for count in bins]
    return Markup(
        "".join(
            f'<rect x="{round(index * width, 1)}" y="{round(_PLOT_BOTTOM - height, 1)}" '
            f'width="{round(width - 1, 1)}" height="{round(height, 1)}" '
            f'fill="{_MINE if index == mine else _OTHERS}"><title>{count} '
            f"result{'' if count == 1 else 's'}</title></rect>"
            for index, (count, height) in enumerate(zip(bins, heights, strict=True))
        )
    )


def table_row(row: ResultRow) -> str:
    """One row of a results table (results_table.html), as HTML: a box to tick for /compare,
    links to the result and its device page, the device, board, profile and headline figures
    (every text from the upload escaped)."""
    figures = "".join(
        f'<td class="n">{figure(row.headlines[column], unit)}</td>'
        for column, _, unit in HEADLINE_LABELS
    )
    device = f"{escape(row.maker or '?')} {escape(row.product or row.model_key)}"
    return (
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


class TableRows:
    """The rows of a results table, each row's HTML kept by its result id (a stored result
    never changes): the newest results of a search or a device model are on many pages.
    The `size` most recently shown rows are kept. Used from the event loop only."""

    def __init__(self, size: int = ROWS_KEPT) -> None:
        self.size = size
        self._html: OrderedDict[int, str] = OrderedDict()

    def __call__(self, rows: Sequence[ResultRow]) -> Markup:
        known = self._html
        parts = []
        for row in rows:
            html = known.get(row.id)
            if html is None:
                html = known[row.id] = table_row(row)
                if len(known) > self.size:
                    known.popitem(last=False)
            else:
                known.move_to_end(row.id)
            parts.append(html)
        return Markup("".join(parts))


_BODY = re.compile(r"<body\b[^>]*>")


def with_navigation(page: str, navigation: str) -> str:
    """The report page with the service's links at the top of its body (the report is made
    by flashmark.report.html, unchanged otherwise: its own CSP stays in force)."""
    match = _BODY.search(page)
    if match is None:
        return page
    return page[: match.end()] + navigation + page[match.end() :]


_TAG = re.compile(r"<[^>]*>")
_TAG_NAME = re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)")
_WITHHELD_MARKED = Markup('<abbr class="withheld" title="{}">{}</abbr>').format(
    WITHHELD_TIP, WITHHELD
)


def with_withheld_marked(page: str) -> str:
    """The report page with every withheld value as WITHHELD (uploads of earlier versions hold
    WITHHELD_BEFORE: made WITHHELD everywhere, attributes included), and each one in the text
    of the body said to be withheld when pointed at (an <abbr> with a title). Only text between
    tags is marked, before the page's script and outside SVG (its <title>s included)."""
    page = page.replace(str(escape(WITHHELD_BEFORE)), str(escape(WITHHELD)))
    head, body_tag, rest = page.partition("<body")
    body, script_tag, script = rest.partition("<script")
    parts: list[str] = []
    svg_depth = 0
    position = 0
    for tag in _TAG.finditer(body):
        text = body[position : tag.start()]
        parts.append(text if svg_depth else _marked(text))
        parts.append(tag.group())
        position = tag.end()
        name = _TAG_NAME.match(tag.group())
        if name is not None and name.group(1).lower() == "svg":
            closing = tag.group().startswith("</")
            self_closing = tag.group().endswith("/>")
            svg_depth += -1 if closing else 0 if self_closing else 1
    parts.append(_marked(body[position:]))
    return head + body_tag + "".join(parts) + script_tag + script


def _marked(text: str) -> str:
    return text.replace(str(escape(WITHHELD)), str(_WITHHELD_MARKED))
