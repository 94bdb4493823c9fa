"""`flashmark capacity`: the real capacity of a device that may claim more than it has.

    plan = plan_capacity(CapacityRequest("/dev/sdb"))   # refusals, before a confirmation
    result = run_capacity(plan, progress=...)           # CapacityResult

search.py: the method; signature.py: the blocks; backup.py: the undo log; probe.py: the whole
run (its device I/O: flashmark.system.block_device); result.py, render.py, kind.py. Names load
when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.capacity.kind import CAPACITY as CAPACITY
    from flashmark.capacity.probe import CapacityPlan as CapacityPlan
    from flashmark.capacity.probe import CapacityRequest as CapacityRequest
    from flashmark.capacity.probe import RestoreRequest as RestoreRequest
    from flashmark.capacity.probe import plan_capacity as plan_capacity
    from flashmark.capacity.probe import restore_capacity as restore_capacity
    from flashmark.capacity.probe import run_capacity as run_capacity
    from flashmark.capacity.result import CAPACITY_SCHEMA as CAPACITY_SCHEMA
    from flashmark.capacity.result import CapacityResult as CapacityResult

_NAMES = {
    ".kind": ("CAPACITY",),
    ".probe": (
        "CapacityPlan",
        "CapacityRequest",
        "RestoreRequest",
        "plan_capacity",
        "restore_capacity",
        "run_capacity",
    ),
    ".result": ("CAPACITY_SCHEMA", "CapacityResult"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
