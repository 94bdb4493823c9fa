"""A campaign as HTML: the service's `/campaigns/NAME` page and `flashmark report --campaign`'s
file, one template for both (templates/campaign_body.html), so the file is the page.

On the service the page links its style sheet (its policy allows nothing else); the report is
one self-contained file: the same style sheet inline, allowed by its hash, and nothing to
fetch. Every text that came from an upload (labels, makers, products) is escaped by the
template; figures are formatted here.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from flashmark import __version__
from flashmark.server.campaign import FIGURES, Board, Campaign, FleetFigure, shown_figure

_TEMPLATES = Path(__file__).resolve().parent / "templates"
# The report file: its own inline style (by hash), nothing else; no script, no request.
_REPORT_CSP = "default-src 'none'; style-src 'sha256-{hash}'; base-uri 'none'; form-action 'none'"


@dataclass(frozen=True)
class Cell:
    value: str  # the figure in its unit
    detail: str  # against the fleet median and the card model's results
    flagged: bool  # outside the fleet's band


@dataclass(frozen=True)
class Row:
    board: Board
    card: str
    capacity: str
    status: str
    grades: str
    cells: tuple[Cell, ...]


def campaign_page(campaign: Campaign, *, standalone: bool, root: str = "") -> str:
    """The page: `standalone` for a file (inline style), else the service's page. `root` starts
    the links to results (the service's address in a file; "" on the service itself)."""
    values: dict[str, Any] = {
        "campaign": campaign,
        "root": root,
        "figures": FIGURES,
        "rows": [_row(board, campaign) for board in campaign.boards],
        "fleet": [_fleet_rows(figure) for figure in campaign.figures],
        "job": _job_text(campaign.job),
        "version": __version__,
    }
    if not standalone:
        return _environment().get_template("campaign.html").render(**values)
    css = (_TEMPLATES / "server.css").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode()
    return (
        _environment()
        .get_template("campaign_report.html")
        .render(**values, css=Markup(css), csp=_REPORT_CSP.format(hash=digest))
    )


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,  # labels, makers and products came from uploads
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
    )


def _row(board: Board, campaign: Campaign) -> Row:
    fleet = {figure.column: figure for figure in campaign.figures}
    cells = []
    for figure in board.figures:
        unit = fleet[figure.column].unit
        parts = []
        if figure.from_median_pct is not None and board.complete:
            parts.append(f"{figure.from_median_pct:+.0f}% vs fleet")
        if figure.model.percentile is not None:
            parts.append(
                f"p{figure.model.percentile:.0f} of {figure.model.count} of its model "
                f"(median {shown_figure(figure.model.median, unit)})"
            )
        flagged = figure.column in board.flagged
        cells.append(Cell(shown_figure(figure.value, unit), ", ".join(parts), flagged))
    card = " ".join(part for part in (board.maker, board.product) if part) or board.model_key
    return Row(
        board=board,
        card=card,
        capacity="" if board.capacity_bytes is None else f"{board.capacity_bytes / 1e9:.1f} GB",
        status=board.status,
        grades=", ".join(f"{name} {verdict or 'not graded'}" for name, verdict in board.grades),
        cells=tuple(cells),
    )


def _fleet_rows(figure: FleetFigure) -> dict[str, str]:
    def shown(value: float | None) -> str:
        return shown_figure(value, figure.unit)

    band = "" if figure.low is None else f"{shown(figure.low)} to {shown(figure.high)}"
    return {
        "median": shown(figure.median),
        "iqr": "" if figure.q1 is None else f"{shown(figure.q1)} to {shown(figure.q3)}",
        "band": band or f"not judged ({figure.boards} board{'s' * (figure.boards != 1)})",
    }


def _job_text(job: Any) -> str:
    """The job hash's parts in one line: flashmark 0.1.0, fio-3.33, file, quick, 16 MiB, ..."""
    if not isinstance(job, dict):
        return ""
    return ", ".join(f"{key} {value}" for key, value in sorted(job.items()))
