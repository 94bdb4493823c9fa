"""A campaign: results of many boards that ran the same benchmark, compared as a fleet (pure).

    stored campaign + every result of its card models -> Campaign -> JSON, page, report, CSV

Each board is shown by its newest result; partial runs take no part in the figures. Every
headline gets the fleet's median and interquartile range, each board's figure its percentile
among results of its card model and profile (ranking.standings), and outliers the robust rule
of RULE (docs/fleet.md): median and MAD are not pulled towards what they look for.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from flashmark.codec import decode, document, encode, written
from flashmark.errors import ExitStatus, FlashmarkError
from flashmark.kinds.strict import DocumentInvalid, check_values, pointer
from flashmark.server.campaign_names import natural_key
from flashmark.server.intake import HEADLINE_COLUMNS
from flashmark.server.ranking import standings
from flashmark.server.storage import CampaignHead, CampaignRecord, CampaignResult
from flashmark.server.views import HEADLINE_LABELS, csv_text, rounded
from flashmark.server.views import figure as shown_figure

OUTLIER_MADS = 3.0  # the conservative threshold of Leys et al. (J. Exp. Soc. Psychol. 49, 2013)
MAD_SCALE = 1.4826  # 1 / Phi^-1(3/4): estimates a normal sd (Rousseeuw and Croux, JASA 1993)
# Of the median: below it, no figure is an outlier, so identical cards (MAD near 0) are not
# flagged for noise.
MIN_DEVIATION = 0.10
MIN_BOARDS = 3  # complete boards with a figure before its outliers are judged
RULE = (
    "a figure of a complete board is an outlier when it lies outside the fleet median "
    f"± max({OUTLIER_MADS:g} x {MAD_SCALE} x MAD, {MIN_DEVIATION:.0%} of the median) "
    f"(MAD: the median absolute deviation from the median), judged with at least "
    f"{MIN_BOARDS} complete boards"
)
# How a campaign names the headline figures, in words.
_WORDS = {
    "seq_read_bps": "sequential read",
    "seq_write_bps": "sequential write",
    "rand_read_4k_iops": "random 4K read",
    "rand_write_4k_iops": "random 4K write",
    "rand_read_4k_q32_iops": "random 4K read at depth 32",
    "rand_write_4k_q32_iops": "random 4K write at depth 32",
}
# (column, in words, unit), in the order of the headline columns.
FIGURES: tuple[tuple[str, str, str], ...] = tuple(
    (column, _WORDS[column], unit) for column, _, unit in HEADLINE_LABELS
)


class NotACampaign(FlashmarkError):
    """A service's answer that is not a campaign as this flashmark writes one."""

    exit_status = ExitStatus.FAILURE


@dataclass(frozen=True)
class ModelStanding:
    """A figure among every result of the same card model and profile on the service."""

    count: int = field(metadata=document(key="model_count"))
    median: float | None = field(metadata=document(key="model_median"))
    # share of those results below it, ties counting half
    percentile: float | None = field(metadata=document(key="model_percentile"))


@dataclass(frozen=True)
class BoardFigure:
    column: str
    value: float | None
    from_median_pct: float | None  # against the fleet median
    model: ModelStanding = field(metadata=document(flatten=True))


# The fields of a board and of a campaign are in the order of their JSON answer.
@dataclass(frozen=True)
class Board:
    label: str
    outlier: bool
    reasons: tuple[str, ...]  # why it is an outlier, in words
    flagged: tuple[str, ...]  # the columns of its figures outside the fleet's band
    failed_step: str | None  # set for an incomplete (partial) run
    failed_status: int | None
    result_id: int = field(metadata=document(key="result"))
    started_at: str
    maker: str | None
    product: str | None
    capacity_bytes: int | None
    model_key: str
    medium: str | None
    card_link: str | None
    grades: Mapping[str, str | None]  # name: verdict, by name
    earlier: tuple[int, ...]  # earlier results of this label, oldest first
    figures: tuple[BoardFigure, ...] = field(metadata=document(keyed_by="column"))

    @property
    @written(before="failed_step")
    def complete(self) -> bool:
        return self.failed_step is None

    @property
    def graded(self) -> list[str]:
        """Its grades in words: "A1 pass", "A2 not graded"."""
        return [f"{name} {verdict or 'not graded'}" for name, verdict in self.grades.items()]

    @property
    def stopped(self) -> str:
        """Where an incomplete board's run stopped: "the run stopped at rand-read-4k (exit 5)"."""
        status = f" (exit {self.failed_status})" if self.failed_status is not None else ""
        return f"the run stopped at {self.failed_step}{status}"

    @property
    @written(before="failed_step")
    def status(self) -> str:
        """The board in a few words: what a page's status cell and the CSV show."""
        if not self.complete:
            return f"incomplete: {self.stopped}"
        return "outlier: " + "; ".join(self.reasons) if self.outlier else "within the fleet"


@dataclass(frozen=True)
class FleetFigure:
    column: str
    words: str
    unit: str
    boards: int  # complete boards with this figure
    median: float | None
    q1: float | None
    q3: float | None
    mad: float | None
    low: float | None  # the band outside which a figure is an outlier (None: not judged)
    high: float | None

    @property
    @written(before="mad")
    def iqr(self) -> float | None:
        return None if self.q1 is None or self.q3 is None else self.q3 - self.q1


@dataclass(frozen=True)
class Campaign(CampaignHead):
    rule: str
    verdict: str
    figures: tuple[FleetFigure, ...]
    boards: tuple[Board, ...]


def build_campaign(
    record: CampaignRecord, model_figures: Mapping[tuple[str, str], Mapping[str, Sequence[float]]]
) -> Campaign:
    """The campaign of `record`; `model_figures[(model_key, profile)]` every figure of that
    card model and profile on the service, each column sorted (Storage.group_figures)."""
    newest: dict[str, CampaignResult] = {}
    earlier: dict[str, list[int]] = {}
    for result in record.results:  # oldest first
        if result.board_label in newest:
            earlier.setdefault(result.board_label, []).append(newest[result.board_label].row.id)
        newest[result.board_label] = result
    complete = [result for result in newest.values() if result.failed_step is None]
    figures = tuple(
        _fleet_figure(column, words, unit, [r.row.headlines[column] for r in complete])
        for column, words, unit in FIGURES
    )
    boards = tuple(
        _board(result, figures, model_figures, tuple(earlier.get(label, ())))
        for label, result in sorted(newest.items(), key=lambda item: natural_key(item[0]))
    )
    return Campaign(
        **{head.name: getattr(record, head.name) for head in fields(CampaignHead)},
        rule=RULE,
        verdict=verdict_of(boards),
        figures=figures,
        boards=boards,
    )


def _fleet_figure(column: str, words: str, unit: str, found: list[float | None]) -> FleetFigure:
    values = sorted(value for value in found if value is not None)
    if not values:
        return FleetFigure(column, words, unit, 0, None, None, None, None, None, None)
    median = statistics.median(values)
    q1, q3 = (
        statistics.quantiles(values, n=4, method="inclusive")[::2]
        if len(values) > 1
        else (values[0], values[0])
    )
    mad = statistics.median(abs(value - median) for value in values)
    low = high = None
    if len(values) >= MIN_BOARDS:
        half = max(OUTLIER_MADS * MAD_SCALE * mad, MIN_DEVIATION * abs(median))
        low, high = median - half, median + half
    return FleetFigure(column, words, unit, len(values), median, q1, q3, mad, low, high)


def _board(
    result: CampaignResult,
    figures: Sequence[FleetFigure],
    model_figures: Mapping[tuple[str, str], Mapping[str, Sequence[float]]],
    earlier: tuple[int, ...],
) -> Board:
    row = result.row
    model = model_figures.get((row.model_key, row.profile), {})
    standing = {s.column: s for s in standings(model, row.headlines)}
    shown = []
    reasons = []
    flagged = []
    for fleet in figures:
        value = row.headlines[fleet.column]
        within = standing[fleet.column]
        values = model.get(fleet.column, ())
        median = statistics.median(values) if values else None
        model_standing = ModelStanding(within.count, median, within.percentile)
        shown.append(BoardFigure(fleet.column, value, _pct(value, fleet.median), model_standing))
        if (
            result.failed_step is None
            and value is not None
            and fleet.low is not None
            and fleet.high is not None
            and not fleet.low <= value <= fleet.high
        ):
            reasons.append(_reason(fleet, value))
            flagged.append(fleet.column)
    return Board(
        label=result.board_label,
        result_id=row.id,
        started_at=row.started_at,
        maker=row.maker,
        product=row.product,
        capacity_bytes=row.capacity_bytes,
        model_key=row.model_key,
        medium=row.medium,
        card_link=row.card_serial,
        figures=tuple(shown),
        grades=dict(sorted(result.grades.items())),
        failed_step=result.failed_step,
        failed_status=result.failed_status,
        outlier=bool(reasons),
        reasons=tuple(reasons),
        flagged=tuple(flagged),
        earlier=earlier,
    )


def _pct(value: float | None, median: float | None) -> float | None:
    if value is None or median is None or median == 0:
        return None
    return (value - median) / median * 100.0


def _reason(fleet: FleetFigure, value: float) -> str:
    assert fleet.median is not None and fleet.low is not None and fleet.high is not None
    pct = _pct(value, fleet.median)
    side = "below" if value < fleet.median else "above"
    amount = f"{abs(pct):.0f}% " if pct is not None else ""
    return (
        f"{fleet.words} {amount}{side} the fleet median ({shown_figure(value, fleet.unit)} vs "
        f"{shown_figure(fleet.median, fleet.unit)} {fleet.unit}; the fleet's band is "
        f"{shown_figure(fleet.low, fleet.unit)} to {shown_figure(fleet.high, fleet.unit)})"
    )


def verdict_of(boards: Sequence[Board]) -> str:
    """The campaign in one line: its outliers and incomplete boards by label, with why."""
    if not boards:
        return "no board has uploaded a result yet"
    complete = [board for board in boards if board.complete]
    outliers = [board for board in complete if board.outlier]
    incomplete = [board for board in boards if not board.complete]
    parts = [f"{len(boards)} board{'s' * (len(boards) != 1)}"]
    if len(complete) < MIN_BOARDS:
        parts.append(
            f"too few complete boards to find outliers ({len(complete)}; at least {MIN_BOARDS})"
        )
    elif outliers:
        named = "; ".join(f"{board.label}: {', '.join(board.reasons)}" for board in outliers)
        parts.append(f"{len(outliers)} outlier{'s' * (len(outliers) != 1)} ({named})")
    else:
        parts.append("no outlier")
    if incomplete:
        named = "; ".join(f"{board.label}: {board.stopped}" for board in incomplete)
        parts.append(f"{len(incomplete)} incomplete ({named})")
    others = len(complete) - len(outliers)
    if outliers and others:
        parts.append(f"the other {others} within the fleet's band")
    return ", ".join(parts)


# -- CSV: one row a board, then the fleet's median and quartiles --------------------------------


def campaign_csv(campaign: Campaign, root: str) -> str:
    """The campaign as CSV (figures in bytes/s and IOPS, as the service's export): a row per
    board, then rows for the fleet's median, Q1 and Q3. Text cells cannot start a formula
    (flashmark.spreadsheet)."""
    per_figure = ("", "_from_fleet_median_pct", "_model_percentile", "_model_count")
    rows: list[list[object]] = [
        [
            "campaign", "board", "status", "outlier", "reasons", "result", "url",
            "started_at", "maker", "product", "capacity_bytes", "model_key", "card_link",
            "grades", "job_hash",
            *(f"{column}{suffix}" for column, _, _ in FIGURES for suffix in per_figure),
        ]
    ]  # fmt: skip
    for board in campaign.boards:
        cells: list[object] = [
            campaign.name, board.label, board.status, board.outlier, "; ".join(board.reasons),
            board.result_id, f"{root}/api/v1/results/{board.result_id}", board.started_at,
            board.maker, board.product, board.capacity_bytes, board.model_key, board.card_link,
            "; ".join(board.graded),
            campaign.job_hash,
        ]  # fmt: skip
        for figure in board.figures:
            cells += [
                rounded(figure.value),
                rounded(figure.from_median_pct),
                rounded(figure.model.percentile),
                figure.model.count,
            ]
        rows.append(cells)
    for name, attribute in (("fleet median", "median"), ("fleet Q1", "q1"), ("fleet Q3", "q3")):
        summary: list[object] = [campaign.name, name, *[""] * 13]
        for fleet in campaign.figures:
            summary += [rounded(getattr(fleet, attribute)), "", "", ""]
        rows.append(summary)
    return csv_text(rows)


# -- JSON: the API's answer, and what `flashmark report --campaign` reads back ---------------------


def campaign_to_json(campaign: Campaign, root: str) -> dict[str, Any]:
    """The campaign as `GET /api/v1/campaigns/NAME` answers it (its fields, flashmark.codec),
    with the links of `root`, the service's address."""
    at = f"{root}/api/v1/campaigns/{campaign.name}"
    links = {
        "url": at,
        "page": f"{root}/campaigns/{campaign.name}",
        "export_csv": at + "/export.csv",
    }
    answer = _linked(encode(campaign), "campaign", links)
    answer["boards"] = [
        _linked(board, "result", {"url": f"{root}/api/v1/results/{board['result']}",
                                  "page": f"{root}/results/{board['result']}"})
        for board in answer["boards"]
    ]  # fmt: skip
    return answer


def _linked(written: dict[str, Any], key: str, links: Mapping[str, str]) -> dict[str, Any]:
    """`written` with `links` after its `key`."""
    items = list(written.items())
    place = list(written).index(key) + 1
    return dict([*items[:place], *links.items(), *items[place:]])


def campaign_from_json(data: Any) -> Campaign:
    """A campaign read back from a service's answer: every value bounded and clean (as an
    upload's), every field of its type, its figures the headline columns (NotACampaign
    otherwise). What a page shows of it is then only what this reads."""
    units = {column: unit for column, _, unit in FIGURES}
    try:
        check_values(data)
        campaign: Campaign = decode(Campaign, data)  # every field of its type, or WrongType
        if any(units.get(figure.column) != figure.unit for figure in campaign.figures) or any(
            tuple(figure.column for figure in board.figures) != HEADLINE_COLUMNS
            or not set(board.flagged) <= units.keys()
            for board in campaign.boards
        ):
            raise ValueError("its figures are not the headline figures")
    except (DocumentInvalid, KeyError, TypeError, ValueError, AttributeError) as error:
        # The place: the codec's `where`, or the value check's JSON pointer.
        where = pointer(getattr(error, "where", ())) or getattr(error, "pointer", "") or "/"
        why = "is missing" if isinstance(error, KeyError) else getattr(error, "reason", error)
        raise NotACampaign(f"the answer is not a campaign: {where} {why}") from None
    return campaign
