"""Run -> a Markdown section to paste in a forum post or an issue (GitHub-flavoured tables).

The layout follows the tables of seed 002 (figures right-aligned, one row per test) and the
terminal view (report/terminal.py): the same columns, the same number formats. Columns are
padded so that the raw text reads as a table too, where a forum does not render Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from flashmark.bench.model import Run
from flashmark.bench.render.cells import (
    UNIT_NOTE,
    check_text,
    device_text,
    direction_cells,
    grade_verdict_text,
    seconds_text,
    settings_text,
    started_text,
    sustained_text,
    target_details,
    target_place,
)
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
)


def escape_inline(text: str) -> str:
    """Text where Markdown would see emphasis or code: the loose marker `*`, `_` in notes."""
    return re.sub(r"([\\`*_])", r"\\\1", " ".join(text.split()))


def escape_cell(text: str) -> str:
    """A table cell: also `|`, which would end the cell (line breaks are already gone)."""
    return escape_inline(text).replace("|", "\\|")


def code(text: str) -> str:
    """Inline code (paths): fenced with one backtick more than the longest run in the text."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padding = " " if "`" in (text[:1], text[-1:]) else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]
) -> list[str]:
    """Lines of a padded pipe table; `right[i]` right-aligns column i (figures)."""
    cells = [[escape_cell(cell) for cell in row] for row in (header, *rows)]
    widths = [max(3, *(len(row[i]) for row in cells)) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        padded = (
            cell.rjust(width) if align else cell.ljust(width)
            for cell, width, align in zip(row, widths, right, strict=True)
        )
        return "| " + " | ".join(padded) + " |"

    rule = "| " + " | ".join(
        "-" * (width - 1) + ":" if align else "-" * width
        for width, align in zip(widths, right, strict=True)
    )
    return [line(cells[0]), rule + " |", *(line(row) for row in cells[1:])]


def bullets(items: Sequence[str]) -> list[str]:
    return [f"- {escape_inline(item)}" for item in items]


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
    rows = [[result.spec.name, *direction_cells(result.read), *direction_cells(result.write)]
            for result in run.tests]  # fmt: skip
    rows += [[name, "skipped", *[""] * 7] for name in run.tests_skipped]
    lines += markdown_table(_TEST_COLUMNS, rows, [False, *[True] * 8])
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
