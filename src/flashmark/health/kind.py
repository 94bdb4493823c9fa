"""A health reading as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence

from flashmark.health.result import HEALTH_DOCUMENT, HealthResult, health_summary
from flashmark.health.view import CSV_COLUMNS, health_view
from flashmark.result_kind import CardIdentity, HtmlPart, Listing, ResultKind, cid_identity
from flashmark.views.kind import view_kind
from flashmark.views.model import Part


def _card(result: HealthResult) -> CardIdentity | None:
    return cid_identity(result.card_cid) if result.card_cid else None


def _charts(results: Sequence[HealthResult]) -> tuple[HtmlPart, int] | None:
    from flashmark.health.wear_chart import wear_part  # drawn only for a page

    return wear_part(results)


HEALTH: ResultKind[HealthResult] = view_kind(
    name="health",
    document=HEALTH_DOCUMENT,
    view=health_view,
    csv_columns=CSV_COLUMNS,
    part=Part(
        "health",
        "Health",
        "What each device reports of its wear, the writes it takes a day, and the years that "
        "leaves at that rate, as an interval that narrows as readings add up.",
        "health reading",
        "health",
        "reading",
    ),
    target=lambda result: result.device,
    listing=lambda result: Listing(result.device, health_summary(result)),
    summary=health_summary,
    card=_card,
    charts=_charts,
)
