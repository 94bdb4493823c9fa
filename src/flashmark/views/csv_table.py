"""Views as one CSV table of a kind: its columns, then every view's records; text cells
guarded so that no spreadsheet runs them (flashmark.spreadsheet), figures as they are."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from flashmark.spreadsheet import text_cell
from flashmark.views.model import Cell, View


def views_to_csv(columns: Sequence[str], views: Sequence[View]) -> str:
    stream = io.StringIO()
    writer = csv.writer(stream)
    writer.writerow(columns)
    for view in views:
        writer.writerows([_cell(cell) for cell in record] for record in view.records)
    return stream.getvalue()


def _cell(cell: Cell) -> str | int | float:
    if cell is None:
        return ""
    return text_cell(cell) if isinstance(cell, str) else cell
