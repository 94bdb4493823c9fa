"""The monitor recording as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from flashmark.monitor.document import MONITOR_DOCUMENT, MonitorRecording
from flashmark.monitor.view import CSV_COLUMNS, recording_view
from flashmark.result_kind import Listing, ResultKind
from flashmark.views.kind import view_kind
from flashmark.views.model import Part

MONITOR: ResultKind[MonitorRecording] = view_kind(
    name="monitor",
    document=MONITOR_DOCUMENT,
    view=recording_view,
    csv_columns=CSV_COLUMNS,
    part=Part(
        "monitor",
        "Device activity recordings",
        "What a device did while a command ran (/proc/diskstats, like <code>iostat -x</code>; "
        "MB = 10^6 bytes, KiB = 1024 bytes).",
        "device activity recording",
        "monitor",
        "recording",
    ),
    target=lambda result: result.device,
    listing=lambda result: Listing(result.device, result.label),
    summary=lambda recording: recording.summary_line,
)
