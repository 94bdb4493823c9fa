"""Workloads fio cannot express: a desktop's package install, its removal and reinstall, and a
cold boot-like read (seed 002). Each reports wall time, its own operations and bytes, and what
the device saw meanwhile (flashmark.monitor).

    from flashmark.workloads import WORKLOAD_NAMES, run_workload, WorkloadResult
    result = run_workload("pkg-install", Path("/media/card"), scale=0.1,
                          roots=SystemRoots.from_environment())

`run_workloads` runs several in order in one folder, sharing state as seed 002's steps did.
docs/workloads.md describes the package model, its sources and the JSON documents.

The runner (session.py: processes, the device monitor's thread) loads when one of its names is
first used, so what reads a result (reports, documents) imports data types only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from flashmark.workloads.packages import DEFAULT_SEED, PackageSet, generate_package_set
from flashmark.workloads.result import PhaseTime, WorkloadCounts, WorkloadResult

if TYPE_CHECKING:
    from flashmark.workloads.session import (
        DESCRIPTIONS,
        FOLDER_PREFIX,
        WORKLOAD_NAMES,
        UnknownWorkload,
        run_workload,
        run_workloads,
    )

_SESSION = frozenset(
    {
        "DESCRIPTIONS",
        "FOLDER_PREFIX",
        "WORKLOAD_NAMES",
        "UnknownWorkload",
        "run_workload",
        "run_workloads",
    }
)


def __getattr__(name: str) -> Any:
    if name in _SESSION:
        return getattr(importlib.import_module("flashmark.workloads.session"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_SEED",
    "DESCRIPTIONS",
    "FOLDER_PREFIX",
    "WORKLOAD_NAMES",
    "PackageSet",
    "PhaseTime",
    "UnknownWorkload",
    "WorkloadCounts",
    "WorkloadResult",
    "generate_package_set",
    "run_workload",
    "run_workloads",
]
