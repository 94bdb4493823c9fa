"""What the device itself saw, interval by interval: an iostat built on /proc/diskstats.
series.py: the data (pure; what reports import); sampler.py: DiskMonitor, the sampling thread;
command.py: a command run under watch; watch.py: `flashmark monitor`; document.py, view.py (what
every format shows), kind.py. The data types and the parser are exported
here; the rest loads only when asked for, so a report that reads a recording never imports
threads or subprocesses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face
from flashmark.monitor.series import (
    RANDOM_WRITE_MAX_REQUEST_BYTES,
    RANDOM_WRITE_MIN_UTIL_PCT,
    RANDOM_WRITE_SHARE,
    MonitorSample,
    MonitorSeries,
    MonitorSummary,
    PhaseSummary,
    compute_sample,
    summarise,
)
from flashmark.system.diskstats import (
    FORMAT_FIELDS,
    SECTOR_BYTES,
    DiskCounters,
    DiskstatsFormatError,
    DiskstatsUnreadable,
    MonitorDeviceNotFound,
    device_for_path,
    normalise_device_name,
    parse_diskstats,
    parse_diskstats_line,
    read_device_counters,
    read_diskstats,
)

if TYPE_CHECKING:
    from flashmark.monitor.command import CommandOutcome as CommandOutcome
    from flashmark.monitor.document import SCHEMA as SCHEMA
    from flashmark.monitor.document import MonitorRecording as MonitorRecording
    from flashmark.monitor.kind import MONITOR as MONITOR
    from flashmark.monitor.sampler import DiskMonitor as DiskMonitor
    from flashmark.monitor.sampler import optional_monitor as optional_monitor
    from flashmark.monitor.view import SAMPLE_HEADER as SAMPLE_HEADER
    from flashmark.monitor.view import format_sample_line as format_sample_line
    from flashmark.monitor.watch import LiveRecording as LiveRecording
    from flashmark.monitor.watch import MonitoredCommand as MonitoredCommand
    from flashmark.monitor.watch import MonitorRequest as MonitorRequest
    from flashmark.monitor.watch import monitor_live as monitor_live
    from flashmark.monitor.watch import monitored_device as monitored_device
    from flashmark.monitor.watch import record_command as record_command

_NAMES = {
    ".command": ("CommandOutcome",),
    ".document": ("SCHEMA", "MonitorRecording"),
    ".kind": ("MONITOR",),
    ".view": ("SAMPLE_HEADER", "format_sample_line"),
    ".sampler": ("DiskMonitor", "optional_monitor"),
    ".watch": (
        "LiveRecording",
        "MonitorRequest",
        "MonitoredCommand",
        "record_command",
        "monitor_live",
        "monitored_device",
    ),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = [
    *face_names(_NAMES),
    "FORMAT_FIELDS",
    "RANDOM_WRITE_MAX_REQUEST_BYTES",
    "RANDOM_WRITE_MIN_UTIL_PCT",
    "RANDOM_WRITE_SHARE",
    "SECTOR_BYTES",
    "DiskCounters",
    "DiskstatsFormatError",
    "DiskstatsUnreadable",
    "MonitorDeviceNotFound",
    "MonitorSample",
    "MonitorSeries",
    "MonitorSummary",
    "PhaseSummary",
    "compute_sample",
    "device_for_path",
    "normalise_device_name",
    "parse_diskstats",
    "parse_diskstats_line",
    "read_device_counters",
    "read_diskstats",
    "summarise",
]
