"""The monitor recording as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.monitor.document import SCHEMA, MonitorRecording, from_document, to_document
from flashmark.monitor.view import CSV_COLUMNS, recording_view
from flashmark.result_kind import HtmlSection, Listing, ResultKind
from flashmark.views.writers import ViewWriters

if TYPE_CHECKING:

    from flashmark.references.records import ReferenceDevice

_WRITERS = ViewWriters(recording_view, CSV_COLUMNS)


def _html(
    results: Sequence[MonitorRecording], references: Sequence[ReferenceDevice]
) -> HtmlSection:
    from flashmark.views.html import Part, Shown, views_section

    intro = (
        "What a device did while a command ran (/proc/diskstats, like <code>iostat -x</code>; "
        "MB = 10^6 bytes, KiB = 1024 bytes)."
    )
    part = Part(
        "monitor", "Device activity recordings", intro, "device activity recording", "monitor",
        "recording",
    )  # fmt: skip
    return views_section(part, [Shown(recording_view(r), r.id, r.device) for r in results])


MONITOR: ResultKind[MonitorRecording] = ResultKind(
    name="monitor",
    schema=SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda result: Listing(result.device, result.label),
    terminal=_WRITERS.terminal,
    summary=lambda recording: recording.summary_line,
    markdown=_WRITERS.markdown,
    csv=_WRITERS.csv,
    html=_html,
)
