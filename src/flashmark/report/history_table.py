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
        # A long label (a monitored command) is cut to a line: `flashmark show ID` has it.
        table.add_column(
            column,
            justify=justify,  # type: ignore[arg-type]
            no_wrap=column in ("date (UTC)", "profile"),
            max_width=18 if column == "profile" else None,
        )
    for entry in entries:
        table.add_row(
            str(entry.id),
            entry.created_at.replace("T", " ")[:16],
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
    seconds = _duration(document.get("started_at"), document.get("finished_at"))
    return [seq, rand, _grades_answer(document), seconds]


def _grades_answer(document: Mapping[str, Any]) -> str:
    """'A1,C10,U1'; 'none' when none passed; 'not judged (read-only)' when no grade could be
    judged (a read-only device run; a profile without the tests they read: 'not judged')."""
    grades = document.get("grades", {})
    passed = [name for name, grade in grades.items() if grade.get("pass")]
    if passed:
        return ",".join(passed)
    judged = any(grade.get("verdict", grade.get("pass")) is not None for grade in grades.values())
    if judged:
        return "none"
    settings, target = document.get("settings", {}), document.get("target", {})
    read_only = target.get("kind") == "device" and not settings.get("destructive")
    return "not judged (read-only)" if read_only else "not judged"


def _duration(started: str | None, finished: str | None) -> str:
    if not started or not finished:
        return ""
    try:
        delta = datetime.fromisoformat(finished) - datetime.fromisoformat(started)
    except ValueError:
        return ""
    return format_duration(delta.total_seconds())
