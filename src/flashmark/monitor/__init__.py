"""What the device itself saw, interval by interval: an iostat built on /proc/diskstats.

    diskstats.py  parse the kernel's counters; which device a path lives on
    series.py     samples, summaries and recordings as data (pure; what reports import)
    sampler.py    DiskMonitor: the background thread that samples while something runs
    command.py    run a command under watch: start, forward its output, time out, stop, reap

The data types and the parser are exported here; the sampler and the command runner load only
when asked for (`from flashmark.monitor import DiskMonitor`), so a report that reads a
recording never imports threads or subprocesses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    from flashmark.monitor.sampler import DiskMonitor, optional_monitor

_SAMPLER = "flashmark.monitor.sampler"
_LAZY = {"DiskMonitor": _SAMPLER, "optional_monitor": _SAMPLER}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FORMAT_FIELDS",
    "RANDOM_WRITE_MAX_REQUEST_BYTES",
    "RANDOM_WRITE_MIN_UTIL_PCT",
    "RANDOM_WRITE_SHARE",
    "SECTOR_BYTES",
    "DiskCounters",
    "DiskMonitor",
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
    "optional_monitor",
    "parse_diskstats",
    "parse_diskstats_line",
    "read_device_counters",
    "read_diskstats",
    "summarise",
]
