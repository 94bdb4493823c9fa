"""The table of `flashmark history`: one row per saved result, newest first.

Its own module, apart from terminal.py, so that `flashmark history` imports only rich's table,
not the whole result model. An entry is anything shaped like the
history's StoredResult (HistoryEntry): reports never import the store itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from rich.console import RenderableType
from rich.table import Table

from flashmark.units import format_duration


class HistoryEntry(Protocol):
    """What the table reads of a saved result (flashmark.history.store.StoredResult has it)."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def created_at(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def document(self) -> Mapping[str, Any]: ...


def render_history(entries: Sequence[HistoryEntry]) -> RenderableType:
    table = Table(header_style="bold")
    for column, justify in (
        ("id", "right"),
        ("date (UTC)", "left"),
        ("kind", "left"),
        ("target", "left"),
        ("profile", "left"),
        ("seq R/W MB/s", "right"),
        ("4K R/W IOPS", "right"),
        ("grades passed", "left"),
        ("time", "right"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for entry in entries:
        table.add_row(
            str(entry.id),
            entry.created_at.replace("T", " ")[:19],
            entry.kind,
            entry.target,
            entry.label,
            *_headline_cells(entry),
        )
    return table


def _headline_cells(entry: HistoryEntry) -> list[str]:
    document = entry.document
    if entry.kind != "benchmark":
        return ["", "", "", ""]
    tests = {test["name"]: test for test in document.get("tests", [])}

    def figure(test: str, direction: str, key: str) -> str:
        section = (tests.get(test) or {}).get(direction) or {}
        value = section.get(key)
        if value is None:
            return "-"
        return f"{value / 1e6:.1f}" if key == "bw_bytes" else f"{value:.0f}"

    seq = f"{figure('seq-read', 'read', 'bw_bytes')}/{figure('seq-write', 'write', 'bw_bytes')}"
    rand = f"{figure('rand-read-4k', 'read', 'iops')}/{figure('rand-write-4k', 'write', 'iops')}"
    passed = [name for name, grade in document.get("grades", {}).items() if grade.get("pass")]
    seconds = _duration(document.get("started_at"), document.get("finished_at"))
    return [seq, rand, ",".join(passed) or "none", seconds]


def _duration(started: str | None, finished: str | None) -> str:
    if not started or not finished:
        return ""
    try:
        delta = datetime.fromisoformat(finished) - datetime.fromisoformat(started)
    except ValueError:
        return ""
    return format_duration(delta.total_seconds())
