"""Workload results as their document (`workload --json`, the history's "workload" kind)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from flashmark import __version__
from flashmark.documents import schemas
from flashmark.workloads.packages import DEFAULT_SEED
from flashmark.workloads.result import WorkloadResult


def workload_document(
    results: tuple[WorkloadResult, ...],
    target: Path,
    scale: float,
    started: float,
    finished: float,
) -> dict[str, Any]:
    return {
        "schema": schemas.WORKLOADS,
        "flashmark_version": __version__,
        "started_at": _iso(started),
        "finished_at": _iso(finished),
        # Absolute: the history lists results by target, and "." says nothing a day later.
        "target": str(target.resolve()),
        "scale": scale,
        "seed": DEFAULT_SEED,
        "workloads": [result.to_dict() for result in results],
    }


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
