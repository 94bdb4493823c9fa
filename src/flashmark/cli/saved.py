"""Saved results for `show`, `export` and `compare`: look them up, and render them as a format.

An unknown id is one line that says which ids the history holds; a result asked for in a format
its kind has no renderer for is one line that says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from flashmark.bench.document import document_to_run
from flashmark.bench.run_result import Run
from flashmark.errors import RunNotFound, UsageError
from flashmark.history.entries import StoredResult
from flashmark.history.store import MAX_ID, History
from flashmark.references.records import ReferenceDevice
from flashmark.report.exporters import SavedResult, exporter, formats, suffix_formats

# Formats that write a file (export) or a page of text (show), from the exporter registry;
# "table" is show's terminal view.
FILE_FORMATS = formats()
SUFFIX_FORMATS = suffix_formats()


class RunIdType(click.types.IntParamType):
    """A run id: a whole number from 1 to SQLite's largest integer, checked while parsing.

    A UsageError rather than click's BadParameter: one line and exit 2, like every other
    flashmark error, instead of click's three-line usage message.
    """

    name = "ID"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            # isdecimal() and ascii: int() would also take '+3', '1_000' and other scripts' digits.
            if not (text.isascii() and text.isdecimal()):
                raise UsageError(f"{value!r} is not a run id: ids are whole numbers "
                                 "(`flashmark history` lists them)")  # fmt: skip
            # More digits than MAX_ID has (after leading zeros) is out of range; int() refuses
            # past 4,300 digits.
            digits = text.lstrip("0") or "0"
            number = int(digits) if len(digits) <= len(str(MAX_ID)) else MAX_ID + 1
        if not 1 <= number <= MAX_ID:
            raise UsageError(
                f"{value} is not a run id: ids go from 1 to {MAX_ID} "
                "(`flashmark history` lists them)"
            )
        return number


RUN_ID = RunIdType()


def _id_ranges(ids: Sequence[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'."""
    spans: list[list[int]] = []
    for value in sorted(ids):
        if spans and value == spans[-1][1] + 1:
            spans[-1][1] = value
        else:
            spans.append([value, value])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def load_entries(db_path: Path | None, result_ids: Sequence[int]) -> list[StoredResult]:
    """The saved results in the order asked; RunNotFound naming the ids that do exist."""
    history = History.locate(db_path)
    entries: list[StoredResult] = []
    for result_id in result_ids:
        try:
            entries.append(history.get(result_id))
        except RunNotFound:
            saved = [entry.id for entry in history.list()]
            holds = f"it holds {_id_ranges(saved)}" if saved else "it is empty"
            raise RunNotFound(
                f"no run {result_id} in the history {history.path}; {holds} "
                "(`flashmark history` lists them)"
            ) from None
    return entries


def benchmark_runs(entries: Sequence[StoredResult], instead: str) -> list[Run]:
    """The entries as Runs; a UsageError for any that is not a benchmark run.

    `instead` says what the user can do with such an entry, e.g. "use --format json or table".
    """
    for entry in entries:
        if entry.kind != "benchmark":
            raise UsageError(f"result {entry.id} is a {entry.kind} recording; {instead}")
    return [document_to_run(dict(entry.document)) for entry in entries]


def render_entries(
    entries: Sequence[StoredResult],
    format_name: str,
    instead: str,
    references: Sequence[ReferenceDevice] = (),
) -> str:
    """The entries as one text in `format_name` (one of FILE_FORMATS), by its exporter.

    A result of a kind the format cannot hold is a UsageError that says so; `instead` says
    what the user can do, e.g. "use --format json".
    """
    if format_name not in FILE_FORMATS:
        raise UsageError(f"unknown format {format_name!r}: use one of {', '.join(FILE_FORMATS)}")
    chosen = exporter(format_name)
    for entry in entries:
        if not chosen.accepts(entry.kind):
            raise UsageError(f"result {entry.id} is a {entry.kind} recording; {instead}")
    return chosen.render([SavedResult(entry.kind, entry.document) for entry in entries], references)
