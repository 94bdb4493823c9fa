"""The monitor recording as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.monitor.document import SCHEMA, MonitorRecording, from_document, to_document
from flashmark.result_kind import HtmlSection, Listing, ResultKind

if TYPE_CHECKING:
    from rich.console import RenderableType

    from flashmark.references.records import ReferenceDevice


def _terminal(result: MonitorRecording) -> RenderableType:
    from flashmark.monitor.render import render_recording

    return render_recording(result)


def _markdown(results: Sequence[MonitorRecording]) -> str:
    from flashmark.monitor.render import recordings_to_markdown

    return recordings_to_markdown(results)


def _csv(results: Sequence[MonitorRecording]) -> str:
    from flashmark.monitor.render import recordings_to_csv

    return recordings_to_csv(results)


def _html(
    results: Sequence[MonitorRecording], references: Sequence[ReferenceDevice]
) -> HtmlSection:
    from flashmark.monitor.render import recordings_section

    return recordings_section(results)


MONITOR: ResultKind[MonitorRecording] = ResultKind(
    name="monitor",
    schema=SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda result: Listing(result.device, result.label),
    terminal=_terminal,
    summary=lambda recording: recording.summary_line,
    markdown=_markdown,
    csv=_csv,
    html=_html,
)
