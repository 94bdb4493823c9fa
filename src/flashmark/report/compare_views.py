"""A Comparison (report/compare.py) laid out for the terminal (rich), Markdown and CSV.

Every view labels reference columns as published figures, not measured here, names their
source in a footnote, and marks loose (*) and suspect (!) figures as `flashmark references`
does. Pure: builds text and renderables, prints nothing.
"""

from __future__ import annotations

import csv
import io

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flashmark.bench.render.cells import UNIT_NOTE, plain_number
from flashmark.markdown import bullets, code, escape_inline, markdown_table
from flashmark.references.loader import PUBLISHED_LABEL
from flashmark.report.compare import Cell, Comparison, Figure
from flashmark.spreadsheet import text_cell
from flashmark.units import MB

GRADES_LABEL = "grades passed"
_CSV_UNITS = {"B/s": ("MBps", MB), "IOPS": ("IOPS", 1.0), "ns": ("us", 1000.0), "s": ("s", 1.0)}


def row_label(figure: Figure) -> str:
    return f"{figure.label} (lower is better)" if figure.lower_is_better else figure.label


def cell_text(cell: Cell) -> str:
    """'22.0* (0.54x)': the value, its markers, and its ratio to the first column."""
    if cell.value is None:
        return "-"
    marks = ("*" if cell.loose else "") + ("!" if cell.suspect else "")
    ratio = f" ({cell.ratio:.2f}x)" if cell.ratio is not None else ""
    return f"{cell.text}{marks}{ratio}"


def footnotes(comparison: Comparison) -> list[str]:
    """Ratio definition, the references' sources, then each loose or suspect figure."""
    first = comparison.columns[0].label
    lines = [
        f"Ratios: the value divided by the value of {first} in the same row; for rows where "
        f"lower is better, below 1.00x is better than {first}. {UNIT_NOTE}."
    ]
    for column in comparison.columns:
        if column.published:
            lines.append(
                f"{column.label} = {column.slug}, {column.title}: {PUBLISHED_LABEL}. "
                f"Source: {column.source}."
            )
    for row in comparison.rows:
        for column, cell in zip(comparison.columns, row.cells, strict=True):
            if cell.value is None or not (cell.loose or cell.suspect):
                continue
            kinds = " ".join(
                kind
                for kind, flag in (("* loose", cell.loose), ("! suspect", cell.suspect))
                if flag
            )
            note = f": {cell.note}" if cell.note else ""
            lines.append(f"{kinds}: {column.label} {row.figure.label}{note}")
    if any(cell.loose for row in comparison.rows for cell in row.cells):
        lines.append(
            "* loose: the published test differs noticeably from the flashmark test of the row "
            "(`flashmark references` shows the method)."
        )
    if any(cell.suspect for row in comparison.rows for cell in row.cells):
        lines.append("! suspect: the figure looks wrong in its source and is kept as published.")
    return lines


def render_comparison(comparison: Comparison) -> RenderableType:
    table = Table(title="Comparison", title_justify="left", header_style="bold")
    table.add_column("figure")
    for column in comparison.columns:
        # fold: a long path has no space to wrap at, and a cut one would hide where it ran
        table.add_column(
            f"{column.label}\n{column.title}\n{column.detail}", justify="right", overflow="fold"
        )
    for row in comparison.rows:
        table.add_row(row_label(row.figure), *(cell_text(cell) for cell in row.cells))
    table.add_row(GRADES_LABEL, *(grades or "-" for grades in comparison.grades))
    return Group(table, Text("\n".join(footnotes(comparison))))


def comparison_to_markdown(comparison: Comparison) -> str:
    header = ["figure", *(f"{c.label} {c.title}" for c in comparison.columns)]
    rows = [[row_label(row.figure), *(cell_text(cell) for cell in row.cells)]
            for row in comparison.rows]  # fmt: skip
    rows.append([GRADES_LABEL, *(grades or "-" for grades in comparison.grades)])
    lines = ["### flashmark comparison", ""]
    for column in comparison.columns:
        detail = column.detail if column.published else code(column.detail)
        lines.append(f"- {column.label}: {escape_inline(column.title)}; {detail}")
    lines.append("")
    lines += markdown_table(header, rows, [False, *[True] * len(comparison.columns)])
    lines.append("")
    lines += bullets(footnotes(comparison))
    return "\n".join(lines) + "\n"


def comparison_to_csv(comparison: Comparison) -> str:
    """Side by side as on screen: per column its value, its ratio and, for references, flags.

    Values are in the unit column's unit (MBps = MB/s with MB = 10^6 bytes, us = microseconds);
    reference column names carry the published label.
    """
    header = ["figure", "test", "unit", "lower_is_better"]
    for column in comparison.columns:
        name = f"{column.label} {column.title}"
        if column.published:
            name = f"{column.label} {column.slug} ({PUBLISHED_LABEL})"
        header += [text_cell(name), text_cell(f"{column.label} ratio")]
        if column.published:
            header.append(f"{column.label} flags")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    for row in comparison.rows:
        unit, divisor = _CSV_UNITS[row.figure.unit]
        line = [
            row.figure.label,
            row.figure.test,
            unit,
            "yes" if row.figure.lower_is_better else "no",
        ]
        for column, cell in zip(comparison.columns, row.cells, strict=True):
            line.append("" if cell.value is None else plain_number(cell.value / divisor, 6))
            line.append("" if cell.ratio is None else plain_number(cell.ratio, 4))
            if column.published:
                flags = (
                    ("loose", cell.loose),
                    ("suspect", cell.suspect),
                    ("derived", cell.derived),
                )
                line.append(" ".join(name for name, flag in flags if flag))
        writer.writerow(line)
    grades_line = [GRADES_LABEL, "", "", ""]
    for column, grades in zip(comparison.columns, comparison.grades, strict=True):
        grades_line += [text_cell(grades), ""] + ([""] if column.published else [])
    writer.writerow(grades_line)
    return buffer.getvalue()
