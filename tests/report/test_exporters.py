"""What the golden files cannot show by themselves: that the exported numbers are the stored
ones, that odd text cannot break a table, and how ratios and reference cells are made."""

from __future__ import annotations

import csv
import dataclasses
import io
import re

import pytest

from flashmark.bench.render.view import CSV_COLUMNS, WRITERS
from flashmark.bench.run_result import Run
from flashmark.references.loader import PUBLISHED_LABEL, find_reference
from flashmark.report.compare import build_comparison
from flashmark.report.compare_views import cell_text, comparison_to_markdown
from flashmark.units import MB, format_iops, format_latency_ns
from tests.report.recorded import DOCUMENT_NAMES
from tests.report.test_golden import REFERENCE


@pytest.mark.parametrize("name", DOCUMENT_NAMES)
def test_csv_figures_are_the_stored_ones_to_the_byte_and_nanosecond(
    runs: dict[str, Run], name: str
) -> None:
    run = runs[name]
    reader = csv.DictReader(io.StringIO(WRITERS.csv([run]), newline=""))
    assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
    rows = list(reader)
    fio_rows = [row for row in rows if row["kind"] == "fio"]
    assert [row["test"] for row in fio_rows] == [t.spec.name for t in run.tests]
    for row, result in zip(fio_rows, run.tests, strict=True):
        assert row["run_id"] == str(run.id) and row["started_at"] == run.started_at
        for direction_name in ("read", "write"):
            direction = getattr(result, direction_name)
            if direction is None:
                assert row[f"{direction_name}_iops"] == ""
                continue
            assert float(row[f"{direction_name}_bw_MBps"]) * MB == pytest.approx(
                direction.bw_bytes, abs=0.5
            )
            assert float(row[f"{direction_name}_iops"]) == pytest.approx(direction.iops, abs=5e-4)
            p99_us = float(row[f"{direction_name}_lat_p99_us"])
            assert p99_us * 1000 == pytest.approx(direction.lat_ns.p99, abs=0.5)
    workloads = [row for row in rows if row["kind"] == "workload"]
    assert [row["test"] for row in workloads] == [w.name for w in run.workloads]
    for row, workload in zip(workloads, run.workloads, strict=True):
        assert float(row["workload_s"]) == pytest.approx(workload.seconds, abs=5e-4)


def test_several_runs_share_one_csv_header(runs: dict[str, Run]) -> None:
    both = WRITERS.csv([runs[name] for name in DOCUMENT_NAMES])
    lines = both.splitlines()
    assert lines.count(",".join(CSV_COLUMNS)) == 1
    assert len(lines) == 1 + sum(
        len(WRITERS.csv([runs[n]]).splitlines()) - 1 for n in DOCUMENT_NAMES
    )


def test_markdown_figures_read_as_in_the_terminal(runs: dict[str, Run]) -> None:
    run = runs["quick-a1-card"]
    text = WRITERS.markdown([run])
    for result in run.tests:
        direction = result.read or result.write
        assert direction is not None
        row = next(line for line in text.splitlines() if line.startswith(f"| {result.spec.name} "))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert format_iops(direction.iops) in cells
        assert format_latency_ns(direction.lat_ns.p99) in cells
    assert "MB = 10^6 bytes" in text


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_pipes_and_emphasis_in_text_cannot_break_the_markdown(runs: dict[str, Run]) -> None:
    run = runs["quick-a1-card"]
    first = run.tests[0]
    odd = dataclasses.replace(
        run,
        tests=(dataclasses.replace(first, spec=dataclasses.replace(first.spec, name="a|b*c")),
               *run.tests[1:]),
        warnings=("*buffered* | not the device",),
    )  # fmt: skip
    text = WRITERS.markdown([odd])
    assert "| a\\|b\\*c " in text
    assert "- \\*buffered\\* | not the device" in text
    tables = [line for line in text.splitlines() if line.startswith("| ")]
    widths = {_unescaped_pipes(line) for line in tables if "read MB/s" in line or "a\\|b" in line}
    assert widths == {11}  # 10 columns: the test, 4 per direction, its disturbance


def test_runs_to_markdown_is_one_section_per_run(runs: dict[str, Run]) -> None:
    sections = [WRITERS.markdown([runs[name]]) for name in DOCUMENT_NAMES]
    assert WRITERS.markdown([runs[name] for name in DOCUMENT_NAMES]) == "\n".join(sections)
    assert [section.splitlines()[0] for section in sections] == [
        f"### flashmark run #{runs[name].id}: {runs[name].settings.profile}, "
        f"{runs[name].started_at[:10]} {runs[name].started_at[11:16]} UTC"
        for name in DOCUMENT_NAMES
    ]


def test_ratios_divide_by_the_first_run_and_references_are_labelled(runs: dict[str, Run]) -> None:
    first, second = (runs[name] for name in DOCUMENT_NAMES)
    reference = find_reference(REFERENCE)
    comparison = build_comparison([first, second], [reference])
    assert [c.label for c in comparison.columns] == ["#1", "#2", "R1"]
    assert [c.published for c in comparison.columns] == [False, False, True]
    assert comparison.columns[2].detail == PUBLISHED_LABEL
    row = next(r for r in comparison.rows if r.figure.label == "rand-read-4k IOPS")
    tested = [run.test("rand-read-4k") for run in (first, second)]
    read_1, read_2 = (result.read if result else None for result in tested)
    assert read_1 is not None and read_2 is not None
    assert row.cells[0].ratio is None
    assert row.cells[1].ratio == pytest.approx(read_2.iops / read_1.iops)
    published = reference.value_for("rand-read-4k", "read_iops")
    assert published is not None
    assert row.cells[2].value == published.value
    assert row.cells[2].ratio == pytest.approx(published.value / read_1.iops)
    assert (
        cell_text(row.cells[1]) == f"{format_iops(read_2.iops)} ({read_2.iops / read_1.iops:.2f}x)"
    )
    # Loose published figures carry the marker and a footnote with their note.
    loose = [(r, c) for r in comparison.rows for c in r.cells if c.loose]
    assert loose
    markdown = comparison_to_markdown(comparison)
    for row, cell in loose:
        assert (
            f"R1 {row.figure.label}" in markdown and cell_text(cell).replace("*", "\\*") in markdown
        )


def test_rows_without_any_value_are_left_out(runs: dict[str, Run]) -> None:
    quick = runs["quick-a1-card"]
    comparison = build_comparison([quick, quick])
    labels = [row.figure.label for row in comparison.rows]
    assert not any(label.endswith(" seconds") for label in labels)  # quick has no workloads
    assert all(cell.ratio == 1.0 for row in comparison.rows for cell in row.cells[1:])
    with pytest.raises(ValueError, match="at least one run"):
        build_comparison([], [find_reference(REFERENCE)])
