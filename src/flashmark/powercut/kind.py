"""The power-cut test as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.powercut.result import (
    HISTORY_KIND,
    POWERCUT_SCHEMA,
    PowercutResult,
    from_document,
    powercut_summary,
    to_document,
)
from flashmark.powercut.view import CSV_COLUMNS, powercut_view
from flashmark.result_kind import CardIdentity, HtmlSection, Listing, ResultKind, cid_identity
from flashmark.views.writers import ViewWriters

if TYPE_CHECKING:
    from flashmark.references.records import ReferenceDevice

_WRITERS = ViewWriters(powercut_view, CSV_COLUMNS)


def _html(results: Sequence[PowercutResult], references: Sequence[ReferenceDevice]) -> HtmlSection:
    from flashmark.views.html import Part, Shown, views_section

    intro = (
        "Each cycle writes, flushes and cuts the power; a flushed record that is not found "
        "intact afterwards was lost by the card after it said it was stored."
    )
    part = Part(
        "powercut", "Power-cut tests", intro, "power-cut test", "powercut", "power-cut test"
    )
    return views_section(part, [Shown(powercut_view(r), r.id, r.target.path) for r in results])


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


POWERCUT: ResultKind[PowercutResult] = ResultKind(
    name=HISTORY_KIND,
    schema=POWERCUT_SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda result: Listing(result.target.path, result.verdict),
    terminal=_WRITERS.terminal,
    summary=powercut_summary,
    markdown=_WRITERS.markdown,
    csv=_WRITERS.csv,
    html=_html,
    card=_card,
)
