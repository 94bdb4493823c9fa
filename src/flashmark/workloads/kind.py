"""The workload run as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.result_kind import HtmlSection, Listing, ResultKind
from flashmark.workloads.document import SCHEMA, WorkloadRun, from_document, to_document

if TYPE_CHECKING:
    from rich.console import RenderableType

    from flashmark.references.records import ReferenceDevice


def _terminal(result: WorkloadRun) -> RenderableType:
    from flashmark.workloads.render import render_workloads

    return render_workloads(result.workloads)


def _markdown(results: Sequence[WorkloadRun]) -> str:
    from flashmark.workloads.render import workload_runs_to_markdown

    return workload_runs_to_markdown(results)


def _csv(results: Sequence[WorkloadRun]) -> str:
    from flashmark.workloads.render import workload_runs_to_csv

    return workload_runs_to_csv(results)


def _html(results: Sequence[WorkloadRun], references: Sequence[ReferenceDevice]) -> HtmlSection:
    from flashmark.workloads.render import workload_runs_section

    return workload_runs_section(results)


WORKLOADS: ResultKind[WorkloadRun] = ResultKind(
    name="workload",
    schema=SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda result: Listing(result.target, result.label),
    terminal=_terminal,
    summary=lambda run: run.summary,
    markdown=_markdown,
    csv=_csv,
    html=_html,
)
