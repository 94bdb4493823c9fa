"""The workload runs' part of the HTML report, from the rows of their view."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from flashmark.errors import printable
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, section_of, short_target
from flashmark.workloads.document import WorkloadRun
from flashmark.workloads.view import workload_rows


def _name(run: WorkloadRun, index: int) -> str:
    return f"#{run.id}" if run.id is not None else f"workload run {index + 1}"


def _anchor(run: WorkloadRun, index: int) -> str:
    return f"workload-{run.id}" if run.id is not None else f"workload-n{index + 1}"


def workload_runs_section(runs: Sequence[WorkloadRun]) -> HtmlSection:
    """The workload runs' part of the HTML report: a table per run."""
    cards = []
    for index, run in enumerate(runs):
        rows = Markup("").join(
            Markup(
                '<tr><th>{}</th><td class="num" data-label="time">{}</td>'
                '<td data-label="operations">{}</td><td data-label="device saw">{}</td></tr>'
            ).format(*row)
            for row in workload_rows(run.workloads)
        )
        cards.append(
            Markup(
                '<article id="{}"><h3>{}</h3><div class="table-wrap"><table class="stack">'
                "<caption>{}</caption><thead><tr><th>workload</th>"
                '<th class="num">time</th><th>operations</th><th>device saw</th></tr></thead>'
                "<tbody>{}</tbody></table></div></article>"
            ).format(
                _anchor(run, index),
                f"{_name(run, index)}: {run.label} in {printable(run.target)}",
                f"scale {run.scale:g}, started {run.started_at}",
                rows,
            )
        )
    body = Markup(
        '<p class="note">Real-world workloads (docs/workloads.md): wall time of the timed part, '
        "the operations issued, and what the device saw meanwhile.</p>{}"
    ).format(Markup("").join(cards))
    entries = [
        HtmlEntry(
            _name(run, index),
            f"{_name(run, index)} {short_target(run.target)}",
            _anchor(run, index),
        )
        for index, run in enumerate(runs)
    ]
    return section_of(HtmlPart("workload-runs", "Workload runs", body), entries, "workload run")
