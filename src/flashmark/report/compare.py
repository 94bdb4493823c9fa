"""Runs and published references side by side: the headline figures and ratios to the first run.

`build_comparison` turns runs (measured here) and reference records (published elsewhere, see
flashmark.references) into a typed table: one row per headline figure, one column per run or
reference. A ratio is the cell's value divided by the first column's value for the same row
(the first column is always a run), so 2.00x means "twice the first run's figure" whatever the
direction: for latency and seconds, lower is better and each row says so. The views
(compare_views.py) only lay this out; nothing here formats for a particular output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flashmark.bench.render.cells import grades_passed, seconds_text, started_text, target_place
from flashmark.bench.run_result import Run
from flashmark.references.loader import PUBLISHED_LABEL
from flashmark.references.records import ReferenceDevice
from flashmark.units import format_iops, format_latency_ns, format_rate

# History of the `compare --format json` document: 1: first version.
# `compare --json` (docs/reports.md).
#   1: first version.
COMPARE_SCHEMA = "flashmark.compare/1"


@dataclass(frozen=True)
class Figure:
    """One headline row: a test, a direction and a metric, with the unit of its value."""

    label: str  # "seq-read MB/s"
    test: str  # flashmark test or workload name
    metric: str  # "read_bw_bytes", "read_iops", "read_lat_p99_ns", "seconds" (unit in name)
    unit: str  # of the stored value: "B/s", "IOPS", "ns", "s"
    lower_is_better: bool
    # The metric of flashmark.references that publishes the same figure, or None when no
    # reference can have it (the seeds publish mean latencies, never p99).
    reference_metric: str | None


# The figures `flashmark history` and seed 002's table lead with: sequential speed, 4K random
# at depth 1 (A1) and depth 32 (A2), and the tail latency of 4K random I/O.
HEADLINES: tuple[Figure, ...] = (
    Figure("seq-read MB/s", "seq-read", "read_bw_bytes", "B/s", False, "read_bw_bytes"),
    Figure("seq-write MB/s", "seq-write", "write_bw_bytes", "B/s", False, "write_bw_bytes"),
    Figure("rand-read-4k IOPS", "rand-read-4k", "read_iops", "IOPS", False, "read_iops"),
    Figure("rand-write-4k IOPS", "rand-write-4k", "write_iops", "IOPS", False, "write_iops"),
    Figure("rand-read-4k-q32 IOPS", "rand-read-4k-q32", "read_iops", "IOPS", False, "read_iops"),
    Figure(
        "rand-write-4k-q32 IOPS", "rand-write-4k-q32", "write_iops", "IOPS", False, "write_iops"
    ),
    Figure("rand-read-4k p99 latency", "rand-read-4k", "read_lat_p99_ns", "ns", True, None),
    Figure("rand-write-4k p99 latency", "rand-write-4k", "write_lat_p99_ns", "ns", True, None),
)


@dataclass(frozen=True)
class Column:
    label: str  # "#3" for a run, "R1" for a reference
    title: str  # run: profile and date; reference: the device's name
    detail: str  # run: where it ran and the device; reference: PUBLISHED_LABEL
    run_id: int | None  # a run's id in the history
    slug: str | None  # a reference's slug
    source: str  # a reference's source, setup and tool; empty for a run

    @property
    def published(self) -> bool:
        return self.slug is not None


@dataclass(frozen=True)
class Cell:
    value: float | None  # in the row's unit; None: not measured or not published
    text: str  # the value formatted as the terminal shows it, "" when absent
    ratio: float | None  # value / first column's value; None for the first column
    loose: bool = False  # a published figure from a noticeably different test
    suspect: bool = False  # a published figure that looks wrong in its source
    derived: bool = False  # computed from another published figure, not printed
    note: str = ""


@dataclass(frozen=True)
class Row:
    figure: Figure
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Comparison:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]  # figures with a value in at least one column
    grades: tuple[str, ...]  # per column: the grades passed ("" for references)


def _run_value(run: Run, figure: Figure) -> float | None:
    if figure.metric == "seconds":
        workload = next((w for w in run.workloads if w.name == figure.test), None)
        return None if workload is None or workload.skipped is not None else workload.seconds
    result = run.test(figure.test)
    # metric = direction + "_" + quantity: "read_bw_bytes", "write_lat_p99_ns"
    direction_name, _, quantity = figure.metric.partition("_")
    if result is None:
        return None
    direction = result.direction(direction_name)
    if direction is None:
        return None
    values = {
        "bw_bytes": direction.bw_bytes,
        "iops": direction.iops,
        "lat_p99_ns": direction.lat_ns.p99,
    }
    return float(values[quantity])


def _text(figure: Figure, value: float | None) -> str:
    if value is None:
        return ""
    if figure.unit == "B/s":
        return format_rate(value).removesuffix(" MB/s")
    if figure.unit == "IOPS":
        return format_iops(value)
    if figure.unit == "ns":
        return format_latency_ns(value)
    return seconds_text(value)


def _ratio(value: float | None, first: float | None) -> float | None:
    if value is None or first is None or first == 0:
        return None
    return value / first


def _reference_cell(device: ReferenceDevice, figure: Figure, first: float | None) -> Cell:
    if figure.reference_metric is None:
        return Cell(None, "", None)
    found = device.value_for(figure.test, figure.reference_metric)
    if found is None:
        return Cell(None, "", None)
    return Cell(
        value=found.value,
        text=_text(figure, found.value),
        ratio=_ratio(found.value, first),
        loose=found.loose,
        suspect=found.suspect,
        derived=found.derived,
        note=found.note,
    )


def _workload_figures(runs: Sequence[Run]) -> list[Figure]:
    names = dict.fromkeys(w.name for run in runs for w in run.workloads)
    return [Figure(f"{name} seconds", name, "seconds", "s", True, "seconds") for name in names]


def _run_column(run: Run) -> Column:
    label = f"#{run.id}" if run.id is not None else "run"
    return Column(
        label=label,
        title=f"{run.settings.profile}, {started_text(run)}",
        detail=target_place(run),
        run_id=run.id,
        slug=None,
        source="",
    )


def _reference_column(index: int, device: ReferenceDevice) -> Column:
    source, setup = device.source, device.setup
    version = f" {setup.tool_version}" if setup.tool_version else ""
    return Column(
        label=f"R{index}",
        title=device.name,
        detail=PUBLISHED_LABEL,
        run_id=None,
        slug=device.slug,
        source=f"{source.citation}; host {setup.host_board}; "
        f"tool {setup.tool}{version}; via {device.interface}",
    )


def build_comparison(runs: Sequence[Run], references: Sequence[ReferenceDevice] = ()) -> Comparison:
    """Runs first (the first is what ratios divide by), then the references, in order."""
    if not runs:
        raise ValueError("a comparison needs at least one run: ratios divide by the first")
    columns = [_run_column(run) for run in runs]
    columns += [_reference_column(i, device) for i, device in enumerate(references, start=1)]
    rows: list[Row] = []
    for figure in (*HEADLINES, *_workload_figures(runs)):
        first = _run_value(runs[0], figure)
        cells = [Cell(first, _text(figure, first), None)]
        for run in runs[1:]:
            value = _run_value(run, figure)
            cells.append(Cell(value, _text(figure, value), _ratio(value, first)))
        cells += [_reference_cell(device, figure, first) for device in references]
        if any(cell.value is not None for cell in cells):
            rows.append(Row(figure, tuple(cells)))
    grades = tuple(grades_passed(run) for run in runs) + ("",) * len(references)
    return Comparison(tuple(columns), tuple(rows), grades)


def comparison_to_document(comparison: Comparison) -> dict[str, Any]:
    """The `compare --format json` document: values in stored units (B/s, IOPS, ns, s)."""
    return {
        "schema": COMPARE_SCHEMA,
        "ratio": f"value / the value of the first column ({comparison.columns[0].label})",
        "published_label": PUBLISHED_LABEL,
        "columns": [
            {
                "label": column.label,
                "kind": "reference" if column.published else "run",
                "id": column.run_id,
                "slug": column.slug,
                "title": column.title,
                "detail": column.detail,
                "source": column.source or None,
                "grades_passed": grades if not column.published else None,
            }
            for column, grades in zip(comparison.columns, comparison.grades, strict=True)
        ],
        "rows": [
            {
                "label": row.figure.label,
                "test": row.figure.test,
                "metric": row.figure.metric,
                "unit": row.figure.unit,
                "lower_is_better": row.figure.lower_is_better,
                "cells": [
                    {
                        "value": cell.value,
                        "text": cell.text,
                        "ratio": cell.ratio,
                        "loose": cell.loose,
                        "suspect": cell.suspect,
                        "derived": cell.derived,
                        "note": cell.note,
                    }
                    for cell in row.cells
                ],
            }
            for row in comparison.rows
        ],
    }
