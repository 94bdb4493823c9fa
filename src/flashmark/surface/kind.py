"""The surface scan as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.result_kind import CardIdentity, HtmlSection, Listing, ResultKind, cid_identity
from flashmark.surface.result import SURFACE_DOCUMENT, SurfaceResult
from flashmark.surface.view import CSV_COLUMNS, surface_view
from flashmark.views.writers import ViewWriters

if TYPE_CHECKING:
    from flashmark.references.records import ReferenceDevice

_WRITERS = ViewWriters(surface_view, CSV_COLUMNS)


def _html(scans: Sequence[SurfaceResult], references: Sequence[ReferenceDevice]) -> HtmlSection:
    from flashmark.surface.html import surfaces_section

    return surfaces_section(scans)


_CID_DIGITS = 32  # a CID register is 128 bits (SD Physical Layer Simplified Specification 5.2)


def _card(scan: SurfaceResult) -> CardIdentity | None:
    """The scanned card by the identity the scan recorded: its CID, else its serial number."""
    identity, name = scan.target.identity, scan.target.device
    if not identity:
        return None
    digits = identity.lower()
    if len(digits) == _CID_DIGITS and all(c in "0123456789abcdef" for c in digits):
        return cid_identity(digits, name)
    return CardIdentity(f"serial:{identity}", name or f"device with serial number {identity}")


SURFACE: ResultKind[SurfaceResult] = ResultKind(
    name="surface",
    document=SURFACE_DOCUMENT,
    listing=lambda scan: Listing(scan.target.given, scan.label),
    terminal=_WRITERS.terminal,
    summary=lambda scan: scan.summary,
    markdown=_WRITERS.markdown,
    csv=_WRITERS.csv,
    html=_html,
    card=_card,
)
