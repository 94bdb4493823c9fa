"""Run -> a Markdown section to paste in a forum post or an issue (GitHub-flavoured tables).

The layout follows the tables of seed 002 (figures right-aligned, one row per test) and the
terminal view (report/terminal.py): the same columns, the same number formats. Columns are
padded so that the raw text reads as a table too, where a forum does not render Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence

from flashmark.bench.render.cells import (
    UNIT_NOTE,
    check_text,
    device_text,
    direction_cells,
    disturbance_text,
    grade_verdict_text,
    seconds_text,
    settings_text,
    started_text,
    sustained_text,
    target_details,
    target_place,
)
from flashmark.bench.run_result import Run
from flashmark.markdown import bullets, code, escape_inline, markdown_table
from flashmark.workloads.result import WorkloadResult

_TEST_COLUMNS = (
    "test",
    "read MB/s",
    "read IOPS",
    "read p50",
    "read p99",
    "write MB/s",
    "write IOPS",
    "write p50",
    "write p99",
    "disturbance",
)


def _workload_seconds(workload: WorkloadResult) -> str:
    if workload.skipped is not None or workload.seconds is None:
        return f"skipped: {workload.skipped}"
    return seconds_text(workload.seconds)


def run_to_markdown(run: Run) -> str:
    """One run: heading, facts, tests, grades, findings, warnings and workloads."""
    number = f" #{run.id}" if run.id is not None else ""
    lines = [f"### flashmark run{number}: {run.settings.profile}, {started_text(run)}", ""]
    device = device_text(run)
    if device is not None:
        lines.append(f"- device: {escape_inline(device)}")
    lines += [
        f"- target: {code(target_place(run))} ({target_details(run)})",
        f"- profile {settings_text(run)}",
        f"- engine: {run.fio.version}, {run.settings.ioengine}; {UNIT_NOTE}; "
        "p50/p99: latency percentiles of single I/Os",
        "",
    ]
    rows = [[result.spec.name, *direction_cells(result.read), *direction_cells(result.write),
             disturbance_text(result)] for result in run.tests]  # fmt: skip
    rows += [[name, "skipped", *[""] * 8] for name in run.tests_skipped]
    lines += markdown_table(_TEST_COLUMNS, rows, [False, *[True] * 8, False])
    lines += ["", "**Grades** (SD Association classes)", ""]
    lines += markdown_table(
        ("class", "verdict", "checks: measured (required, margin)"),
        [
            [grade.name, grade_verdict_text(grade), "; ".join(check_text(c) for c in grade.checks)]
            for grade in run.grades
        ],
        [False, False, False],
    )
    sustained = sustained_text(run)
    if sustained is not None:
        lines += ["", f"sustained-write: {escape_inline(sustained)}"]
    if run.findings:
        lines += ["", "**Findings** (what the card claims against what was measured)", ""]
        lines += bullets(run.findings)
    if run.warnings:
        lines += ["", "**Warnings**", ""]
        lines += bullets(run.warnings)
    if run.workloads:
        lines += ["", "**Workloads** (wall time of the timed part)", ""]
        lines += markdown_table(
            ("workload", "seconds"),
            [[w.name, _workload_seconds(w)] for w in run.workloads],
            [False, True],
        )
    return "\n".join(lines) + "\n"


def runs_to_markdown(runs: Sequence[Run]) -> str:
    """Several runs, one section each, in the order given."""
    return "\n".join(run_to_markdown(run) for run in runs)
