"""Progress of a run on stderr: a bounded live display on a terminal, one line per step
otherwise (nothing live when stderr is not a terminal).

One unit system: every rate shown while running goes through units.format_rate (MB/s with
MB = 10^6 bytes, the results' unit) and IOPS through units.format_iops; fio's own KiB/s and
MiB/s status text is converted, never shown as is.

The overall ETA comes from the plan, not from fio's early "[eta ...]" guesses: the known
length (ramp + runtime) of every test not yet finished, the time left in the running test, and
for the preparation the bytes still to write divided by the write rate seen so far. Each test
also costs what the finished ones took beyond their plan (fio's start, the parsing of its log:
about 0.3 s a test on this machine, more on a Pi), the median of those that ran as planned; and
a test that runs longer than planned (an extension of its first window, a second run at full
length, flashmark.bench.lengths) counts that run's own length from when measure() says it starts.
A size-bound test (sustained-write) counts like the preparation: its bytes left at the write rate
seen in it (at most: it may stop sooner on a steady rate).

The live region is at most three lines (the overall bar, "k done, m to go", the running step);
finished steps are printed above it once, as ordinary scrolling lines, so the running step is
visible on any terminal at least that high.

fio reports from the runner's reader thread, so updates take a lock.
"""

from __future__ import annotations

import re
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from flashmark.bench.jobs import PREPARE_JOB_NAME
from flashmark.bench.plan import Plan, PlannedStep
from flashmark.cli.output import is_quiet, stderr_console
from flashmark.units import format_duration, format_iops, format_rate

_RATE_RE = re.compile(r"\b([rwt])=(\d+(?:\.\d+)?)([kKMGT]i?)?B/s")
_IOPS_GROUP_RE = re.compile(r"((?:[rwt]=\d+(?:\.\d+)?[kM]?,?)+) IOPS")  # "r=2688,w=900 IOPS"
_IOPS_RE = re.compile(r"([rwt])=(\d+(?:\.\d+)?)([kM]?)")
# fio's rate prefixes: binary (KiB/s) and decimal (kB/s, KB/s, MB/s) ones.
_RATE_FACTORS = {"": 1.0, "k": 1e3} | {
    prefix + binary: float((1024 if binary else 1000) ** power)
    for power, prefix in enumerate("KMGT", 1)
    for binary in ("i", "")
}
_DIRECTIONS = {"r": "read", "w": "write", "t": "trim"}


@dataclass(frozen=True)
class FioStatus:
    """fio's live figures, in bytes/s and IOPS, per direction ("read", "write")."""

    rates: dict[str, float]
    iops: dict[str, float]

    def text(self) -> str:
        """The figures in the results' units: 'read 6.15 MB/s 1501 IOPS'."""
        parts = []
        for direction in ("read", "write", "trim"):
            if direction not in self.rates and direction not in self.iops:
                continue
            part: str = direction
            if direction in self.rates:
                part += f" {format_rate(self.rates[direction])}"
            if direction in self.iops:
                part += f" {format_iops(self.iops[direction])} IOPS"
            parts.append(part)
        return ", ".join(parts)


def parse_fio_status(status: str) -> FioStatus:
    """fio's status text ("r=6006KiB/s r=1501 IOPS") in bytes/s and IOPS."""
    rates = {
        _DIRECTIONS[d]: float(value) * _RATE_FACTORS[unit]
        for d, value, unit in _RATE_RE.findall(status)
    }
    iops = {
        _DIRECTIONS[d]: float(value) * {"": 1.0, "k": 1e3, "M": 1e6}[unit]
        for group in _IOPS_GROUP_RE.findall(status)
        for d, value, unit in _IOPS_RE.findall(group)
    }
    return FioStatus(rates, iops)


def steps_of(plan: Plan) -> tuple[PlannedStep, ...]:
    """The plan's steps in the order they run."""
    return plan.steps()


class PlainProgress:
    """For logs and CI: a line when a step starts and one when it ends; nothing at all with
    --quiet (`prints_lines` False)."""

    def __init__(self, *, quiet: bool = False) -> None:
        self._started = 0.0
        self._label = ""
        self.prints_lines = not quiet

    def begin(self, step: str, number: int, total: int, expected_s: float | None) -> None:
        self._started = time.monotonic()
        self._label = f"[{number}/{total}] {step}"
        expected = f" (about {format_duration(expected_s)})" if expected_s else ""
        if self.prints_lines:
            print(f"{self._label}: running{expected}", file=sys.stderr, flush=True)

    def update(
        self, fraction: float | None, status: str, *, left_s: float | None = None, then: str = ""
    ) -> None:
        pass

    def end(self, step: str, summary: str) -> None:
        took = format_duration(time.monotonic() - self._started)
        if self.prints_lines:
            print(f"{self._label}: {summary} ({took})", file=sys.stderr, flush=True)


class BarProgress:
    """The overall bar with the plan's ETA, a "k done, m to go" line and the running step."""

    def __init__(
        self,
        console: Console,
        steps: Sequence[PlannedStep] = (),
        clock: Callable[[], float] = time.monotonic,
        *,
        live: bool = True,
    ) -> None:
        self._console = console
        self._steps = list(steps)
        self._clock = clock
        self._lock = threading.RLock()
        self._number = 0
        self._total = len(self._steps)
        self._name = ""
        self._expected_s: float | None = None
        self._started = 0.0
        self._fraction = 0.0
        self._status: FioStatus | None = None
        # A step that is not fio (a surface pass) gives its own status text and time left.
        self._plain_status = ""
        self._step_left: tuple[float, float] | None = None  # (seconds left, when said)
        self._then = ""  # what follows the step and the ETA leaves out, e.g. "read pass"
        self._write_rate: float | None = None  # bytes/s seen while preparing
        self._done = 0
        # What each finished step that ran as planned took beyond its planned length.
        self._overheads: list[float] = []
        self._live = (
            Live(get_renderable=self.renderable, console=console, refresh_per_second=4)
            if live
            else None
        )

    def __enter__(self) -> BarProgress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._live is not None:
            self._live.stop()

    def begin(self, step: str, number: int, total: int, expected_s: float | None) -> None:
        with self._lock:
            self._number, self._total, self._name = number, max(total, len(self._steps)), step
            self._expected_s = expected_s
            self._started = self._clock()
            self._fraction = 0.0
            self._status = None
            self._plain_status = ""
            self._step_left = None
            self._then = ""

    def update(
        self, fraction: float | None, status: str, *, left_s: float | None = None, then: str = ""
    ) -> None:
        """`status` is fio's live status text, or a step's own words (shown as they are).
        `left_s`: the running step's own estimate of its time left, for steps the plan gives no
        length, and for a test that runs longer than planned (measure.Progress); `then`: a step
        to come whose length nobody knows yet (named after the ETA)."""
        with self._lock:
            if fraction is not None:
                self._fraction = max(0.0, min(1.0, fraction))
            if left_s is not None:
                self._step_left = (left_s, self._clock())
            self._then = then
            if status:
                parsed = parse_fio_status(status)
                if not parsed.rates and not parsed.iops:
                    self._plain_status, self._status = status, None
                    return
                self._status = parsed
                write = self._status.rates.get("write")
                if write and self._size_bound():
                    self._write_rate = write

    def end(self, step: str, summary: str) -> None:
        with self._lock:
            took_s = self._clock() - self._started
            took = format_duration(took_s)
            if self._expected_s is not None and self._step_left is None:
                self._overheads.append(max(0.0, took_s - self._expected_s))
            self._done += 1
            self._name = ""
        self._console.print(f"[{self._number}/{self._total}] {step}: {summary} ({took})")

    def _size_bound(self) -> bool:
        """Whether the running step's time is its bytes at its write rate."""
        if 0 < self._number <= len(self._steps):
            return self._steps[self._number - 1].bytes_to_write is not None
        return self._name == PREPARE_JOB_NAME

    def remaining_s(self) -> float | None:
        """Seconds left in the whole plan, or None while a needed rate is still unknown."""
        with self._lock:
            overhead = statistics.median(self._overheads) if self._overheads else 0.0
            left = 0.0
            for step in self._steps[self._number :]:  # steps after the running one
                if step.expected_s is not None:
                    left += step.expected_s + overhead
            if not self._name:
                return left
            if self._step_left is not None:
                said, at = self._step_left
                planned = overhead if self._expected_s is not None else 0.0
                return left + max(0.0, said + planned - (self._clock() - at))
            if self._expected_s is not None:
                running = self._expected_s + overhead
                return left + max(0.0, running - (self._clock() - self._started))
            current = (
                self._steps[self._number - 1] if 0 < self._number <= len(self._steps) else None
            )
            if current is not None and current.bytes_to_write is not None:
                if not self._write_rate:
                    return None
                bytes_left = current.bytes_to_write * (1.0 - self._fraction)
                return left + bytes_left / self._write_rate
            return left

    def _unknown_suffix(self) -> str:
        """' + workloads' while a step the plan gives no length is to come (a size-bound one
        too, until it runs and shows its rate): the ETA leaves it out rather than guess."""
        first = self._number - 1 if self._name else self._number
        unknown = [
            step.name.split(" ")[0]
            for index, step in enumerate(self._steps[max(first, 0) :], start=max(first, 0))
            if step.expected_s is None
            and not (index == first and self._name and step.bytes_to_write is not None)
        ]
        then = [self._then] if self._then and self._name else []
        return "".join(f" + {name}" for name in (*then, *unknown))

    def renderable(self) -> RenderableType:
        with self._lock:
            total = max(self._total, 1)
            running = 1 if self._name else 0
            overall = Table.grid(padding=(0, 1))
            overall.add_row(
                Text("all steps"),
                ProgressBar(
                    total=float(total), completed=self._done + running * self._fraction, width=24
                ),
                Text(
                    _eta_text(self.remaining_s()) + self._unknown_suffix(),
                    overflow="ellipsis",
                    no_wrap=True,
                ),
            )
            to_go = total - self._done - running
            lines: list[RenderableType] = [
                overall,
                Text(f"{self._done} done, {to_go} to go", style="dim"),
            ]
            if self._name:
                label = f"[{self._number}/{self._total}] {self._name}"
                status = self._status.text() if self._status else self._plain_status
                status = status or "starting fio"
                lines.append(
                    Text(
                        f"{label}  {self._fraction:.0%}  {status}",
                        overflow="ellipsis",
                        no_wrap=True,
                    )
                )
            return Group(*lines)


def _eta_text(remaining: float | None) -> str:
    return "ETA ?" if remaining is None else f"ETA {format_duration(remaining)}"


@contextmanager
def progress_display(plan: Plan | None = None) -> Iterator[PlainProgress | BarProgress]:
    console = Console(file=sys.stderr)
    if is_quiet():
        yield PlainProgress(quiet=True)
    elif console.is_terminal:
        with BarProgress(console, steps_of(plan) if plan is not None else ()) as bars:
            yield bars
    else:
        yield PlainProgress()


@contextmanager
def live_lines(lines: Callable[[], Sequence[str]]) -> Iterator[Callable[[], None]]:
    """On a terminal (stderr): `lines()` one a row, each cut to fit, redrawn each time the
    function given is called (`fleet run`: a line a board) and left on the screen at the end."""

    def table() -> Table:
        view = Table.grid(padding=(0, 1))
        view.add_column(no_wrap=True, overflow="ellipsis")
        for line in lines():
            view.add_row(Text(line))
        return view

    with Live(table(), console=stderr_console(), auto_refresh=False) as live:
        yield lambda: live.update(table(), refresh=True)
