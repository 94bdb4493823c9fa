"""Which SD/eMMC card (by its CID register) a stored document measured.

Plain functions on documents, shared by the history (its card_cid column, migration
0003_card_cid) and the card passport, so that both recognise a card the same way: a capacity
result's "card_cid", and the CID of every probed device's card ("probe" of a benchmark).
CIDs are compared as lower-case hex, as `flashmark probe` shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def document_cids(document: Mapping[str, Any]) -> list[str]:
    """Every card CID a document names, lower-case, in document order, without repeats."""
    cids: list[str] = []
    card_cid = document.get("card_cid")
    if isinstance(card_cid, str):
        cids.append(card_cid.lower())
    probe = document.get("probe")
    if isinstance(probe, Mapping):
        for device in probe.get("devices") or ():
            card = device.get("card") if isinstance(device, Mapping) else None
            cid = card.get("cid") if isinstance(card, Mapping) else None
            raw = cid.get("raw") if isinstance(cid, Mapping) else None
            if isinstance(raw, str) and raw.lower() not in cids:
                cids.append(raw.lower())
    return cids


def document_card_cid(document: Mapping[str, Any]) -> str | None:
    """The card a document is kept under in the history's CID index: its first CID."""
    cids = document_cids(document)
    return cids[0] if cids else None
