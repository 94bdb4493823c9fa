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
        ("answer", "left"),
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
        return ["", "", _answer(document), ""]
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
    """A run's grades in a few words: "passed A1,C10,U1", "passed none", or "none judged"
    (a read-only device run, a profile without the tests they read)."""
    grades = document.get("grades", {})
    passed = [name for name, grade in grades.items() if grade.get("pass")]
    if passed:
        return "passed " + ",".join(passed)
    judged = any(grade.get("verdict", grade.get("pass")) is not None for grade in grades.values())
    if judged:
        return "passed none"
    settings, target = document.get("settings", {}), document.get("target", {})
    read_only = target.get("kind") == "device" and not settings.get("destructive")
    return "none judged (read-only)" if read_only else "none judged"


def _answer(document: Mapping[str, Any]) -> str:
    """Another kind's answer: the first clause of its one-line summary ("fake: 128 MiB real of
    512 MiB, the rest wraps to the start"); blank for documents saved before it."""
    summary = document.get("summary", document.get("summary_line"))
    if not isinstance(summary, str):
        return ""
    return summary.removeprefix("verdict: ").split("; ", 1)[0]


def _duration(started: str | None, finished: str | None) -> str:
    if not started or not finished:
        return ""
    try:
        delta = datetime.fromisoformat(finished) - datetime.fromisoformat(started)
    except ValueError:
        return ""
    return format_duration(delta.total_seconds())
