"""A workload run (`workload --json`, the history's "workload" kind) and its document."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from flashmark import __version__
from flashmark.errors import ResultFormatError
from flashmark.workloads.packages import DEFAULT_SEED
from flashmark.workloads.result import WorkloadResult

# `workload --json` and the history's workload results (docs/workloads.md).
#   1: first version.
SCHEMA = "flashmark.workloads/1"


@dataclass(frozen=True)
class WorkloadRun:
    """One or more workloads run in a row in one folder."""

    target: str  # absolute: the history lists results by target, and "." says nothing later
    scale: float
    seed: int
    started_at: str
    finished_at: str
    workloads: tuple[WorkloadResult, ...]
    flashmark_version: str = __version__
    id: int | None = None

    @property
    def label(self) -> str:
        return "+".join(result.name for result in self.workloads)

    def with_id(self, result_id: int) -> WorkloadRun:
        return replace(self, id=result_id)


def workload_run(
    results: tuple[WorkloadResult, ...], target: Path, scale: float, started: float, finished: float
) -> WorkloadRun:
    return WorkloadRun(
        target=str(target.resolve()),
        scale=scale,
        seed=DEFAULT_SEED,
        started_at=_iso(started),
        finished_at=_iso(finished),
        workloads=results,
    )


def to_document(result: WorkloadRun) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "flashmark_version": result.flashmark_version,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
        "target": result.target,
        "scale": result.scale,
        "seed": result.seed,
        "workloads": [workload.to_dict() for workload in result.workloads],
    }
    if result.id is not None:
        document["id"] = result.id
    return document


def from_document(document: Mapping[str, Any]) -> WorkloadRun:
    """The inverse of to_document; ResultFormatError naming what is wrong."""
    try:
        results = tuple(WorkloadResult.from_dict(entry) for entry in document["workloads"])
        target = document.get("target")
        if not isinstance(target, str) or not results:
            raise ValueError("no target or no workloads")
        return WorkloadRun(
            target=target,
            scale=float(document.get("scale", results[0].scale)),
            seed=int(document.get("seed", DEFAULT_SEED)),
            started_at=str(document.get("started_at", "")),
            finished_at=str(document.get("finished_at", "")),
            workloads=results,
            flashmark_version=str(document.get("flashmark_version", "")),
            id=document.get("id"),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ResultFormatError(
            f"workload document is malformed ({type(error).__name__}: {error})"
        ) from None


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
