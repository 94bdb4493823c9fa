"""The workload run as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.result_kind import HtmlSection, Listing, ResultKind, short_target
from flashmark.views.writers import ViewWriters
from flashmark.workloads.document import SCHEMA, WorkloadRun, from_document, to_document
from flashmark.workloads.view import CSV_COLUMNS, workload_run_view

if TYPE_CHECKING:

    from flashmark.references.records import ReferenceDevice

_WRITERS = ViewWriters(workload_run_view, CSV_COLUMNS)


def _html(results: Sequence[WorkloadRun], references: Sequence[ReferenceDevice]) -> HtmlSection:
    from flashmark.views.html import Part, Shown, views_section

    intro = (
        "Real-world workloads (docs/workloads.md): wall time of the timed part, the operations "
        "issued, and what the device saw meanwhile."
    )
    part = Part("workload-runs", "Workload runs", intro, "workload run", "workload", "workload run")
    return views_section(
        part, [Shown(workload_run_view(r), r.id, short_target(r.target)) for r in results]
    )


WORKLOADS: ResultKind[WorkloadRun] = ResultKind(
    name="workload",
    schema=SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda result: Listing(result.target, result.label),
    terminal=_WRITERS.terminal,
    summary=lambda run: run.summary,
    markdown=_WRITERS.markdown,
    csv=_WRITERS.csv,
    html=_html,
)
