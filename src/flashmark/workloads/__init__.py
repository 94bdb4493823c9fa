"""Workloads fio cannot express: a desktop's package install, its removal and reinstall, and a
cold boot-like read. Each reports wall time, its own operations and bytes, and what the device
saw meanwhile (flashmark.monitor); docs/workloads.md has the model and its sources.

    result = run_workload("pkg-install", Path("/media/card"), scale=0.1,
                          roots=SystemRoots.from_environment())

The runner (session.py) loads when first used, so what reads a result imports data types only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face
from flashmark.workloads.packages import DEFAULT_SEED, PackageSet, generate_package_set
from flashmark.workloads.result import PhaseTime, WorkloadCounts, WorkloadResult

if TYPE_CHECKING:
    from flashmark.workloads.document import SCHEMA as SCHEMA
    from flashmark.workloads.kind import WORKLOADS as WORKLOADS
    from flashmark.workloads.run import WorkloadRequest as WorkloadRequest
    from flashmark.workloads.run import measure_workloads as measure_workloads
    from flashmark.workloads.session import DESCRIPTIONS as DESCRIPTIONS
    from flashmark.workloads.session import FOLDER_PREFIX as FOLDER_PREFIX
    from flashmark.workloads.session import WORKLOAD_NAMES as WORKLOAD_NAMES
    from flashmark.workloads.session import UnknownWorkload as UnknownWorkload
    from flashmark.workloads.session import run_workload as run_workload
    from flashmark.workloads.session import run_workloads as run_workloads

_NAMES = {
    ".document": ("SCHEMA",),
    ".kind": ("WORKLOADS",),
    ".run": ("WorkloadRequest", "measure_workloads"),
    ".session": (
        "DESCRIPTIONS",
        "FOLDER_PREFIX",
        "WORKLOAD_NAMES",
        "UnknownWorkload",
        "run_workload",
        "run_workloads",
    ),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = [
    "DEFAULT_SEED",
    "PackageSet",
    "PhaseTime",
    "WorkloadCounts",
    "WorkloadResult",
    "generate_package_set",
    *face_names(_NAMES),
]
