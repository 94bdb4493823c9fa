"""A campaign as HTML: the service's `/campaigns/NAME` page and `flashmark report --campaign`'s
file, one template for both (templates/campaign_body.html), so the file is the page.

On the service the page links its style sheet (its policy allows nothing else); the report is
one self-contained file: the same style sheet inline, allowed by its hash, and nothing to
fetch. Every text that came from an upload (labels, makers, products) is escaped by the
template; figures are formatted here.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from flashmark import __version__
from flashmark.server.campaign import FIGURES, Board, Campaign, FleetFigure
from flashmark.server.views import TEMPLATES, capacity, templates
from flashmark.server.views import figure as shown_figure

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
        return templates().get_template("campaign.html").render(**values)
    css = (TEMPLATES / "server.css").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode()
    return (
        templates()
        .get_template("campaign_report.html")
        .render(**values, css=Markup(css), csp=_REPORT_CSP.format(hash=digest))
    )


def _row(board: Board, campaign: Campaign) -> Row:
    fleet = {figure.column: figure for figure in campaign.figures}
    cells = []
    outside = []
    for figure in board.figures:
        unit = fleet[figure.column].unit
        parts = []
        if figure.from_median_pct is not None and board.complete:
            parts.append(f"{_percent(figure.from_median_pct)} vs fleet")
        if figure.model.percentile is not None:
            parts.append(
                f"p{figure.model.percentile:.0f} of {figure.model.count} results of its model "
                f"(median {shown_figure(figure.model.median, unit)})"
            )
        flagged = figure.column in board.flagged
        if flagged and figure.from_median_pct is not None:
            outside.append(f"{fleet[figure.column].words} {_percent(figure.from_median_pct)}")
        cells.append(Cell(shown_figure(figure.value, unit), "; ".join(parts), flagged))
    card = " ".join(part for part in (board.maker, board.product) if part) or board.model_key
    return Row(
        board=board,
        card=card,
        capacity=capacity(board.capacity_bytes),
        # The reasons in full are in the verdict; the row says which figures and how far.
        status="outlier: " + ", ".join(outside) if outside else board.status,
        grades=", ".join(board.graded),
        cells=tuple(cells),
    )


def _percent(value: float) -> str:
    """-50%, +2%, 0% (never -0%)."""
    rounded = round(value)
    return f"{rounded:+d}%" if rounded else "0%"


def _fleet_rows(figure: FleetFigure) -> dict[str, str]:
    def shown(value: float | None) -> str:
        return shown_figure(value, figure.unit)

    band = "" if figure.low is None else f"{shown(figure.low)} to {shown(figure.high)}"
    return {
        "median": shown(figure.median),
        "iqr": "" if figure.q1 is None else f"{shown(figure.q1)} to {shown(figure.q3)}",
        "band": band or f"not judged ({figure.boards} board{'s' * (figure.boards != 1)})",
    }


# The parts of a job hash named in words first (bench/job_hash.py job_identity); others follow
# as they are.
_JOB_WORDS = (
    ("flashmark_version", "flashmark {}"),
    ("fio_version", "{}"),
    ("profile", "the {} profile"),
    ("target_kind", "on a {}"),
    ("size_bytes", "{} bytes"),
    ("runtime_s", "{} s a test"),
    ("ramp_s", "{} s of ramp"),
)


def _job_text(job: Any) -> str:
    """The job hash's parts in one line: "flashmark 0.1.0, fio-3.33, the quick profile, ...",
    then the rest by their names."""
    if not isinstance(job, dict):
        return ""
    named = [text.format(job[key]) for key, text in _JOB_WORDS if key in job]
    rest = [f"{key} {job[key]}" for key in sorted(job) if key not in dict(_JOB_WORDS)]
    return ", ".join(named + rest)
