"""The capacity probe as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.capacity.result import CAPACITY_DOCUMENT, CAPACITY_SCHEMA, CapacityResult
from flashmark.capacity.view import CSV_COLUMNS, capacity_view
from flashmark.result_kind import CardIdentity, HtmlSection, Listing, ResultKind, cid_identity
from flashmark.views.writers import ViewWriters

if TYPE_CHECKING:

    from flashmark.references.records import ReferenceDevice

_WRITERS = ViewWriters(capacity_view, CSV_COLUMNS)


def _html(results: Sequence[CapacityResult], references: Sequence[ReferenceDevice]) -> HtmlSection:
    from flashmark.views.html import Part, Shown, views_section

    intro = (
        "Whether the device stores as much as it claims: signature blocks written across it "
        "and read back (GB = 10^9 bytes, GiB = 2^30 bytes)."
    )
    part = Part("capacity", "Capacity probes", intro, "capacity probe", "capacity", "probe")
    return views_section(part, [Shown(capacity_view(r), r.id, r.device) for r in results])


def _card(result: CapacityResult) -> CardIdentity | None:
    """The probed card by its CID, when the device has one."""
    return cid_identity(result.card_cid) if result.card_cid else None


CAPACITY: ResultKind[CapacityResult] = ResultKind(
    name="capacity",
    schema=CAPACITY_SCHEMA,
    to_document=CAPACITY_DOCUMENT.write,
    from_document=CAPACITY_DOCUMENT.read,
    listing=lambda result: Listing(result.device, result.verdict),
    terminal=_WRITERS.terminal,
    summary=lambda result: result.summary,
    markdown=_WRITERS.markdown,
    csv=_WRITERS.csv,
    html=_html,
    card=_card,
)
