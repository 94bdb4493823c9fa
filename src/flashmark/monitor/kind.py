"""The monitor recording as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.monitor.document import SCHEMA, MonitorRecording, from_document, to_document
from flashmark.result_kind import Listing, ResultKind

if TYPE_CHECKING:
    from rich.console import RenderableType


def _terminal(result: MonitorRecording) -> RenderableType:
    from flashmark.monitor.render import render_recording

    return render_recording(result)


MONITOR: ResultKind[MonitorRecording] = ResultKind(
    name="monitor",
    schema=SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda result: Listing(result.device, result.label),
    terminal=_terminal,
)
