"""The capacity probe as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from flashmark.capacity.result import CAPACITY_DOCUMENT, CapacityResult
from flashmark.capacity.view import CSV_COLUMNS, capacity_view
from flashmark.result_kind import CardIdentity, Listing, ResultKind, cid_identity
from flashmark.views.kind import view_kind
from flashmark.views.model import Part


def _card(result: CapacityResult) -> CardIdentity | None:
    """The probed card by its CID, when the device has one."""
    return cid_identity(result.card_cid) if result.card_cid else None


CAPACITY: ResultKind[CapacityResult] = view_kind(
    name="capacity",
    document=CAPACITY_DOCUMENT,
    view=capacity_view,
    csv_columns=CSV_COLUMNS,
    part=Part(
        "capacity",
        "Capacity probes",
        "Whether the device stores as much as it claims: signature blocks written across it "
        "and read back (GB = 10^9 bytes, GiB = 2^30 bytes).",
        "capacity probe",
        "capacity",
        "probe",
    ),
    target=lambda result: result.device,
    listing=lambda result: Listing(result.device, result.verdict),
    summary=lambda result: result.summary,
    card=_card,
)
