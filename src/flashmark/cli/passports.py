"""The card passports of a probe, with what the history knows about each card: shared by
`flashmark probe` and `flashmark run` (which carries the measured card's passport in its result).

The history is read only, through its CID index (`History.of_card`); one that cannot be read
gives the passport without history and a warning, never a failed command.
"""

from __future__ import annotations

from collections.abc import Callable

from flashmark.bench.model import Passport
from flashmark.bench.passport import card_cid, passports_for
from flashmark.errors import HistoryError
from flashmark.history.entries import StoredResult
from flashmark.history.store import History
from flashmark.probe.model import ProbeReport


def card_passports(
    report: ProbeReport, history: History, warn: Callable[[str], None]
) -> list[Passport]:
    """A passport per card of the probe ([] without cards), "seen before" from the history."""
    cards = [device for device in report.devices if device.card]
    if not cards:
        return []
    cids = sorted({cid for device in cards if (cid := card_cid(device)) is not None})
    entries: list[StoredResult] = []
    try:
        for cid in cids:
            entries += history.of_card(cid)
    except HistoryError as error:  # the passport without history; the command goes on
        warn(f"warning: the history could not be read for the card passport: {error}")
        entries = []
    return passports_for(report, entries)
