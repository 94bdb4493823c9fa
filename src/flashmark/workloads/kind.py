"""The workload run as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from flashmark.result_kind import Listing, ResultKind, short_target
from flashmark.views.kind import view_kind
from flashmark.views.model import Part
from flashmark.workloads.document import WORKLOADS_DOCUMENT, WorkloadRun
from flashmark.workloads.view import CSV_COLUMNS, workload_run_view

WORKLOADS: ResultKind[WorkloadRun] = view_kind(
    name="workload",
    document=WORKLOADS_DOCUMENT,
    view=workload_run_view,
    csv_columns=CSV_COLUMNS,
    part=Part(
        "workload-runs",
        "Workload runs",
        "Real-world workloads (docs/workloads.md): wall time of the timed part, the operations "
        "issued, and what the device saw meanwhile.",
        "workload run",
        "workload",
        "workload run",
    ),
    target=lambda result: short_target(result.target),
    listing=lambda result: Listing(result.target, result.label),
    summary=lambda run: run.summary,
)
