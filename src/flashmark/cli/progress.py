"""Progress of a run on stderr: live bars with ETA on a terminal, one line per step otherwise.

fio reports how far each job is ("[45.0%]"); the runner passes that fraction and fio's current
speed text here from its reader thread, so updates must be thread-safe (rich's are).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)

from flashmark.units import format_duration


class PlainProgress:
    """For logs and CI: a line when a step starts and one when it ends."""

    def __init__(self) -> None:
        self._started = 0.0
        self._label = ""

    def begin(self, step: str, number: int, total: int, expected_s: float | None) -> None:
        self._started = time.monotonic()
        self._label = f"[{number}/{total}] {step}"
        expected = f" (about {format_duration(expected_s)})" if expected_s else ""
        print(f"{self._label}: running{expected}", file=sys.stderr, flush=True)

    def update(self, fraction: float | None, status: str) -> None:
        pass

    def end(self, step: str, summary: str) -> None:
        took = format_duration(time.monotonic() - self._started)
        print(f"{self._label}: {summary} ({took})", file=sys.stderr, flush=True)


class BarProgress:
    """A bar per step with fio's live speed, and an overall bar with the run's ETA."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.description:<22}"),
            BarColumn(bar_width=28),
            TaskProgressColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}", style="dim"),
            console=console,
            transient=False,
        )
        self._overall = self._progress.add_task("all steps", total=None, status="")
        self._current: TaskID | None = None
        self._done_steps = 0

    def __enter__(self) -> BarProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._progress.stop()

    def begin(self, step: str, number: int, total: int, expected_s: float | None) -> None:
        self._progress.update(self._overall, total=total)
        self._current = self._progress.add_task(
            f"[{number}/{total}] {step}", total=1.0, status="starting fio"
        )

    def update(self, fraction: float | None, status: str) -> None:
        if self._current is None:
            return
        if fraction is not None:
            self._progress.update(self._current, completed=fraction, status=status)
            self._progress.update(self._overall, completed=self._done_steps + fraction)
        else:
            self._progress.update(self._current, status=status)

    def end(self, step: str, summary: str) -> None:
        if self._current is not None:
            self._progress.update(self._current, completed=1.0, status=summary)
        self._done_steps += 1
        self._progress.update(self._overall, completed=self._done_steps)
        self._current = None


@contextmanager
def progress_display() -> Iterator[PlainProgress | BarProgress]:
    console = Console(file=sys.stderr)
    if console.is_terminal:
        with BarProgress(console) as bars:
            yield bars
    else:
        yield PlainProgress()
