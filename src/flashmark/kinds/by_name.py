"""A saved kind of result by the name the history keeps it under, importing only that kind.

`flashmark show ID` needs one kind; importing every kind (kinds.registry) cost it about 40 ms of
start-up. The table is the one list of the saved kinds: the registry reads them from it, and
tests/kinds check that each kind is saved under the name it gives itself.
"""

from __future__ import annotations

import importlib
from typing import Any

from flashmark.result_kind import ResultKind

KIND_MODULES = {
    "benchmark": ("flashmark.bench.kind", "RUN"),
    "monitor": ("flashmark.monitor.kind", "MONITOR"),
    "workload": ("flashmark.workloads.kind", "WORKLOADS"),
    "capacity": ("flashmark.capacity.kind", "CAPACITY"),
    "surface": ("flashmark.surface.kind", "SURFACE"),
    "powercut": ("flashmark.powercut.kind", "POWERCUT"),
    "health": ("flashmark.health.kind", "HEALTH"),
    "doctor": ("flashmark.doctor.kind", "DOCTOR"),
}


def kind_named(name: str) -> ResultKind[Any]:
    """The kind the history stores under `name`; KeyError for a name it never stores."""
    module, attribute = KIND_MODULES[name]
    kind: ResultKind[Any] = getattr(importlib.import_module(module), attribute)
    return kind
