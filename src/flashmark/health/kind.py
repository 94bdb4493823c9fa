"""A health reading as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.health.result import HEALTH_DOCUMENT, HEALTH_SCHEMA, HealthResult
from flashmark.health.view import CSV_COLUMNS, health_summary, health_view
from flashmark.result_kind import CardIdentity, HtmlSection, Listing, ResultKind, cid_identity
from flashmark.views.writers import ViewWriters

if TYPE_CHECKING:
    from flashmark.references.records import ReferenceDevice

_WRITERS = ViewWriters(health_view, CSV_COLUMNS)


def _html(results: Sequence[HealthResult], references: Sequence[ReferenceDevice]) -> HtmlSection:
    from flashmark.views.html import Part, Shown, views_section

    intro = (
        "What each device reports of its wear, the writes it takes a day, and the years that "
        "leaves at that rate, as an interval that narrows as readings add up."
    )
    part = Part("health", "Health", intro, "health reading", "health", "reading")
    return views_section(part, [Shown(health_view(r), r.id, r.device) for r in results])


def _card(result: HealthResult) -> CardIdentity | None:
    return cid_identity(result.card_cid) if result.card_cid else None


HEALTH: ResultKind[HealthResult] = ResultKind(
    name="health",
    schema=HEALTH_SCHEMA,
    to_document=HEALTH_DOCUMENT.write,
    from_document=HEALTH_DOCUMENT.read,
    listing=lambda result: Listing(result.device, health_summary(result)),
    terminal=_WRITERS.terminal,
    summary=health_summary,
    markdown=_WRITERS.markdown,
    csv=_WRITERS.csv,
    html=_html,
    card=_card,
)
