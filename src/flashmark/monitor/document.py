"""A monitor recording as its document (`monitor --json`, the history's "monitor" kind)."""

from __future__ import annotations

import time
from typing import Any

from flashmark import __version__
from flashmark.documents import schemas
from flashmark.monitor.series import MonitorSeries


def monitor_document(
    series: MonitorSeries,
    command: tuple[str, ...],
    exit_status: int | None,
    started: float,
    finished: float,
) -> dict[str, Any]:
    recording = series.to_dict()
    return {
        "schema": schemas.MONITOR,
        "flashmark_version": __version__,
        "started_at": _iso(started),
        "finished_at": _iso(finished),
        "device": series.device,
        "command": list(command) or None,
        "exit_status": exit_status,
        "interval_s": series.interval_s,
        "seconds": recording["seconds"],
        "diskstats_fields": series.diskstats_fields,
        "summary": recording["summary"],
        "samples": recording["samples"],
        "warnings": recording["warnings"],
    }


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
