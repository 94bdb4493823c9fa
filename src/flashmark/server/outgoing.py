"""The document `flashmark upload` sends for a saved result: built from the rules on its
kind's fields (flashmark.upload_rules), checked to read back as that kind, and the card it
measured (pure).

Built, not scrubbed: nothing of the saved document reaches the upload except through a rule on
its field, and every text that does is screened for identifiers (identifiers.py), with the
names this document and this machine are known by. One part is rebuilt from allowed parts:
the CID register, with its serial (PSN) and CRC zeroed. Only the kinds the service accepts
(intake.ACCEPTED) have a table here.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flashmark.errors import ResultFormatError, UsageError
from flashmark.kinds.registry import entry_for
from flashmark.probe.mmc import CARD_TYPE_OF_KIND, RegisterFormatError, decode_cid
from flashmark.probe.model import Cid
from flashmark.server.campaign_names import campaign_problem, label_problem
from flashmark.server.identifiers import Known, identifier_in, names_in
from flashmark.server.intake import ACCEPTED, CARD_LINK_FORMAT
from flashmark.upload_rules import (
    WITHHELD,
    Chosen,
    Fields,
    Matching,
    NotSent,
    Rule,
    Screen,
    upload,
    uploaded,
)

# Hex digits of a 128-bit CID (digit i holds bits 127-4i .. 124-4i) that hold its serial
# number and its CRC7 with the end bit. SD: PSN [55:24] (SD Physical Layer Simplified
# Specification 5.2); eMMC: PSN [47:16] (JESD84-B51 7.2); both: CRC [7:1], bit 0 always 1.
_PSN_DIGITS = {"SD": range(18, 26), "MMC": range(20, 28)}
_CRC_DIGITS = range(30, 32)


# What an upload holds of each kind, by schema: the rules on its fields.
ALLOW_LISTS: Mapping[str, Rule] = {
    schema: Fields(kind, schema=schema) for schema, kind in ACCEPTED.items()
}


@uploaded
@dataclass(frozen=True)
class UploadChoices:
    """What the uploader adds to a document of any kind, each by the user's choice for this
    upload and none part of a saved result (flashmark upload --link-card, --campaign, --label)."""

    # 128 bits of a keyed hash of the card's identity, under a salt that stays on the
    # machine (server/upload.py card_link): links one card's uploads, names no serial.
    card_link: str = field(metadata=upload(Matching(CARD_LINK_FORMAT, screened=False)))
    # Which batch of runs this is (flashmark fleet run --campaign).
    campaign: str = field(metadata=upload(Chosen(campaign_problem)))
    # The one name of the board that leaves it, the one the user chose: Ansible's inventory
    # name of the host (or flashmark_label). Screened for the shapes of addresses and serial
    # numbers, not for this machine's names (campaign_names.py).
    board_label: str = field(metadata=upload(Chosen(label_problem)))


UPLOAD_CHOICES = Fields(UploadChoices)
_CID = Fields(Cid)


def field_table() -> list[tuple[str, str]]:
    """Every place an upload may hold, with what is sent there (`flashmark upload --fields`):
    the tables above, read as one list for review."""
    rows = [
        row
        for schema, table in ALLOW_LISTS.items()
        for row in table.rows(schema.partition("/")[0].removeprefix("flashmark."))
    ]
    return [*rows, *UPLOAD_CHOICES.rows("upload")]


class NotUploadable(UsageError):
    """A saved document that cannot be made into an upload: a kind flashmark does not upload,
    or a field the allow-list's rule refuses where the document needs one (damaged)."""


def outgoing(
    document: Mapping[str, Any],
    known: Known | None = None,
    chosen: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What is sent for `document`; `known` adds this machine's host and user names; `chosen`
    what the user adds to this upload (card_link, campaign, board_label: UPLOAD_CHOICES)."""
    schema = document.get("schema")
    table = ALLOW_LISTS.get(schema) if isinstance(schema, str) else None
    if table is None or not isinstance(schema, str):
        raise NotUploadable(
            f"schema {schema!r} is not a kind of result flashmark uploads "
            f"(it uploads {', '.join(ALLOW_LISTS)})"
        )
    names = (known or Known()).with_names(names_in(document))
    screen = functools.partial(identifier_in, known=names)
    kind = schema.partition("/")[0].removeprefix("flashmark.")
    unknown = sorted(set(chosen or {}) - set(UPLOAD_CHOICES.fields))
    if unknown:
        raise NotUploadable(f"{', '.join(unknown)}: not something an upload may add")
    try:
        sent: dict[str, Any] = table.build(document, kind, screen)
        _rebuild_cids(document, sent, screen)
        sent.update(UPLOAD_CHOICES.build(dict(chosen or {}), "upload", screen))
    except NotSent as error:
        raise NotUploadable(f"{error.where} cannot be sent: {error.why}") from None
    try:
        entry_for(sent)  # reads every field, changes none
    except ResultFormatError as error:
        raise NotUploadable(f"what would be sent does not read back as a {kind}: {error}") from None
    return sent


def card_identity(document: Mapping[str, Any]) -> str | None:
    """What tells the measured card from every other one, to link its uploads when asked
    (upload.card_link): its whole CID (lower-case hex) where its probe read one, else its
    serial number; None when the document names neither."""
    key = document.get("device_key")  # a health reading's: "cid:HEX" or "serial:MODEL:SERIAL"
    if isinstance(key, str) and key.startswith("cid:"):
        return key.removeprefix("cid:").lower()
    if isinstance(key, str) and key.startswith("serial:"):
        return key.rpartition(":")[2].strip()
    probe = document.get("probe")
    devices = probe.get("devices") if isinstance(probe, Mapping) else None
    devices = [device for device in devices or () if isinstance(device, Mapping)]
    for device in devices:
        card = device.get("card")
        cid = card.get("cid") if isinstance(card, Mapping) else None
        raw = cid.get("raw") if isinstance(cid, Mapping) else None
        if isinstance(raw, str) and raw:
            return raw.lower()
    for device in devices:
        serial = device.get("serial")
        if isinstance(serial, str) and serial.strip():
            return serial.strip()
    return None


def _rebuild_cids(document: Mapping[str, Any], sent: dict[str, Any], screen: Screen) -> None:
    """Each sent CID's register, rebuilt from the saved one without its serial and CRC."""
    if sent.get("card_cid") == WITHHELD:  # a health reading's card
        card_type = CARD_TYPE_OF_KIND.get(str(sent.get("device_kind")))
        sent["card_cid"] = _masked_reading_cid(document["card_cid"], card_type, screen)
    saved_probe, sent_probe = document.get("probe"), sent.get("probe")
    if not isinstance(saved_probe, Mapping) or not isinstance(sent_probe, dict):
        return
    for saved, device in zip(saved_probe["devices"], sent_probe["devices"], strict=True):
        card = device.get("card")
        cid = card.get("cid") if isinstance(card, dict) else None
        if isinstance(cid, dict) and cid.get("raw") == WITHHELD:
            cid["raw"] = _masked_cid(saved["card"]["cid"]["raw"], card["type"], cid)


def _masked_cid(raw: Any, card_type: str, sent: Mapping[str, Any]) -> str:
    """The CID with its serial and CRC digits zeroed, when it is a CID of `card_type` that
    decodes to the maker, OEM, name and revision being sent; else WITHHELD."""
    found = _masked(raw, card_type)
    if found is None:
        return WITHHELD
    masked, decoded = found
    same = (
        decoded.manufacturer_id == sent.get("manufacturer_id")
        and decoded.oem_id == sent.get("oem_id")
        and decoded.product_name == sent.get("product_name")
        and decoded.revision == sent.get("revision")
        and decoded.serial == 0
    )
    return masked if same else WITHHELD


def _masked_reading_cid(raw: Any, card_type: str | None, screen: Screen) -> str:
    """A health reading's CID with its serial and CRC digits zeroed, when it decodes as a CID
    of its device's kind and its product name passes the screen a run's does; else WITHHELD."""
    found = _masked(raw, card_type) if card_type is not None else None
    if found is None:
        return WITHHELD
    masked, decoded = found
    try:  # a product name or OEM text the screen refuses is withheld there: the whole CID here
        sent = _CID.build(dataclasses.asdict(decoded), "health.card_cid", screen)
    except NotSent:
        return WITHHELD
    screened = [value for key, value in sent.items() if key != "raw"]  # raw: the masked one
    return WITHHELD if WITHHELD in screened else masked


def _masked(raw: Any, card_type: str) -> tuple[str, Cid] | None:
    """The CID of `card_type` with its serial and CRC digits zeroed, and what it decodes to;
    None when it is not such a register."""
    serial_digits = _PSN_DIGITS.get(card_type)
    if not isinstance(raw, str) or serial_digits is None:
        return None
    if not re.fullmatch(r"[0-9a-fA-F]{32}", raw):
        return None
    hidden = set(serial_digits) | set(_CRC_DIGITS)
    masked = "".join("0" if index in hidden else digit for index, digit in enumerate(raw.lower()))
    try:
        decoded = decode_cid(card_type, masked)
    except RegisterFormatError:
        return None
    return (masked, decoded) if decoded.serial == 0 else None
