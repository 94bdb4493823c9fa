"""A kind of result made from its one view function: terminal, Markdown, CSV and its HTML
section all come from `view`, so a new kind writes its view and its document, nothing else."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from flashmark.codec import Codec
from flashmark.result_kind import CardIdentity, HtmlPart, HtmlSection, Listing, ResultKind
from flashmark.views.model import Part, View
from flashmark.views.writers import ViewWriters

if TYPE_CHECKING:
    from flashmark.references.records import ReferenceDevice


class Saved(Protocol):
    @property
    def id(self) -> int | None: ...


R = TypeVar("R", bound=Saved)


def view_kind(
    *,
    name: str,
    document: Codec[R],
    view: Callable[[R], View],
    csv_columns: tuple[str, ...],
    part: Part,
    target: Callable[[R], str],
    listing: Callable[[R], Listing],
    summary: Callable[[R], str],
    card: Callable[[R], CardIdentity | None] | None = None,
    charts: Callable[[Sequence[R]], tuple[HtmlPart, int] | None] | None = None,
) -> ResultKind[R]:
    """The kind: `view` makes a result's view, `target` names a result in the page's legend;
    `charts`, where given, draws the results together in a part after their cards (None: nothing
    to draw), and says how many charts that part holds."""
    writers = ViewWriters(view, csv_columns)

    def html(results: Sequence[R], references: Sequence[ReferenceDevice]) -> HtmlSection:
        from flashmark.views.html import Shown, views_section

        section = views_section(part, [Shown(view(r), r.id, target(r)) for r in results])
        drawn = charts(results) if charts is not None else None
        if drawn is None:
            return section
        chart_part, count = drawn
        return dataclasses.replace(
            section, parts=(*section.parts, chart_part), charts=section.charts + count
        )

    return ResultKind(
        name=name,
        document=document,
        listing=listing,
        terminal=writers.terminal,
        summary=summary,
        markdown=writers.markdown,
        csv=writers.csv,
        html=html,
        card=card,
    )
