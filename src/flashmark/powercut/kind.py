"""The power-cut test as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from flashmark.powercut.result import (
    HISTORY_KIND,
    POWERCUT_DOCUMENT,
    PowercutResult,
    powercut_summary,
)
from flashmark.powercut.view import CSV_COLUMNS, powercut_view
from flashmark.result_kind import CardIdentity, Listing, ResultKind, cid_identity
from flashmark.views.kind import view_kind
from flashmark.views.model import Part


def _card(result: PowercutResult) -> CardIdentity | None:
    """The device by the identity the test followed it by (system.device_identity), a partition
    by its disk. Documents saved before that module was shared name a partition by number
    ("... partition 1"), a serial as "serial:MODEL:SERIAL" and a USB disk with ":lun0"."""
    identity = result.target.identity
    if not identity:
        return None
    disk = identity.partition(" partition ")[0].partition("/part@")[0]
    source, _, value = disk.partition(":")
    name = result.target.device
    if source == "cid":
        return cid_identity(value, name)
    if source == "serial":
        # MODEL/SERIAL, or MODEL:SERIAL or SERIAL alone (older documents): the serial number
        # is what a probe records too
        serial = value.rsplit("/", 1)[-1] if "/" in value else value.rsplit(":", 1)[-1]
        return CardIdentity(f"serial:{serial}", name or identity)
    if source == "usb":
        value = value.removesuffix(":lun0")
    return CardIdentity(f"{source}:{value}", name or identity)


POWERCUT: ResultKind[PowercutResult] = view_kind(
    name=HISTORY_KIND,
    document=POWERCUT_DOCUMENT,
    view=powercut_view,
    csv_columns=CSV_COLUMNS,
    part=Part(
        "powercut",
        "Power-cut tests",
        "Each cycle writes, flushes and cuts the power; a flushed record that is not found "
        "intact afterwards was lost by the card after it said it was stored.",
        "power-cut test",
        "powercut",
        "power-cut test",
    ),
    target=lambda result: result.target.path,
    listing=lambda result: Listing(result.target.path, result.verdict),
    summary=powercut_summary,
    card=_card,
)
