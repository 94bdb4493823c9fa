"""A monitor recording (`monitor --json`, the history's "monitor" kind) and its document."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from flashmark import __version__
from flashmark.errors import ResultFormatError
from flashmark.monitor.series import MonitorSample, MonitorSeries, MonitorSummary

# `monitor --json` and the history's monitor recordings (docs/workloads.md).
#   1: first version.
SCHEMA = "flashmark.monitor/1"


@dataclass(frozen=True)
class MonitorRecording:
    """What one device did while a command ran (or while it was watched, `command` empty)."""

    device: str
    command: tuple[str, ...]
    exit_status: int | None
    started_at: str
    finished_at: str
    interval_s: float
    seconds: float
    diskstats_fields: int
    summary: MonitorSummary
    samples: tuple[MonitorSample, ...]
    warnings: tuple[str, ...]
    flashmark_version: str = __version__
    timed_out: bool | None = None  # None for a live view: no command to time out
    id: int | None = None

    @property
    def label(self) -> str:
        return " ".join(self.command) or "live"

    def with_id(self, result_id: int) -> MonitorRecording:
        return replace(self, id=result_id)


def recording(
    series: MonitorSeries,
    command: tuple[str, ...],
    exit_status: int | None,
    started: float,
    finished: float,
    timed_out: bool | None = None,
) -> MonitorRecording:
    return MonitorRecording(
        device=series.device,
        command=command,
        exit_status=exit_status,
        started_at=_iso(started),
        finished_at=_iso(finished),
        interval_s=series.interval_s,
        seconds=series.seconds,
        diskstats_fields=series.diskstats_fields,
        summary=series.summary(),
        samples=series.samples,
        warnings=series.warnings,
        timed_out=timed_out,
    )


def to_document(result: MonitorRecording) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "flashmark_version": result.flashmark_version,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
        "device": result.device,
        "command": list(result.command) or None,
        "exit_status": result.exit_status,
        "interval_s": result.interval_s,
        "seconds": result.seconds,
        "diskstats_fields": result.diskstats_fields,
        "summary": result.summary.to_dict(),
        "samples": [sample.to_dict() for sample in result.samples],
        "warnings": list(result.warnings),
    }
    if result.timed_out is not None:
        document["timed_out"] = result.timed_out
    if result.id is not None:
        document["id"] = result.id
    return document


def from_document(document: Mapping[str, Any]) -> MonitorRecording:
    """The inverse of to_document; ResultFormatError naming what is wrong."""
    try:
        device = document["device"]
        command = document.get("command") or ()
        if not isinstance(device, str) or not all(isinstance(c, str) for c in command):
            raise TypeError("device and command must be text")
        summary = MonitorSummary.from_dict(document["summary"])
        # What the history lists and shows rests on the summary; the rest is kept as found.
        return MonitorRecording(
            device=device,
            command=tuple(command),
            exit_status=document.get("exit_status"),
            started_at=str(document.get("started_at", "")),
            finished_at=str(document.get("finished_at", "")),
            interval_s=float(document.get("interval_s", 0.0)),
            seconds=float(document.get("seconds", summary.seconds)),
            diskstats_fields=int(document.get("diskstats_fields", 0)),
            summary=summary,
            samples=tuple(MonitorSample.from_dict(s) for s in document.get("samples", ())),
            warnings=tuple(str(w) for w in document.get("warnings", ())),
            flashmark_version=str(document.get("flashmark_version", "")),
            timed_out=document.get("timed_out"),
            id=document.get("id"),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ResultFormatError(
            f"monitor document is malformed ({type(error).__name__}: {error})"
        ) from None


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
