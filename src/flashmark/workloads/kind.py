"""The workload run as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.result_kind import Listing, ResultKind
from flashmark.workloads.document import SCHEMA, WorkloadRun, from_document, to_document

if TYPE_CHECKING:
    from rich.console import RenderableType


def _terminal(result: WorkloadRun) -> RenderableType:
    from flashmark.workloads.render import render_workloads

    return render_workloads(result.workloads)


WORKLOADS: ResultKind[WorkloadRun] = ResultKind(
    name="workload",
    schema=SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda result: Listing(result.target, result.label),
    terminal=_terminal,
)
