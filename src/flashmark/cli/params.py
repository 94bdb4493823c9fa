"""Parameter types for every number and size typed on the command line, checked while parsing.

click's FloatRange lets "nan" and "inf" through, and IntRange without a maximum accepts counts
no SQLite LIMIT or timer can hold, which would fail far from where they were typed. These types
refuse empty text, nan, infinities, negatives and anything out of range before the command
starts, as click's usage error (exit 2). The limits are wide: they stop typos and overflows.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from flashmark.cli import Decorated
from flashmark.errors import UsageError
from flashmark.system.watchdog import DEFAULT_FLOOR_S
from flashmark.units import parse_size

if TYPE_CHECKING:  # click >= 8.2 types ParamType by its value; 8.1 cannot subscript it
    _FloatType = click.ParamType[float]
    _IntType = click.ParamType[int]
    _NamesType = click.ParamType[tuple[str, ...]]
    _StrType = click.ParamType[str]
else:
    _FloatType = _IntType = _NamesType = _StrType = click.ParamType

# Limits shared by several commands (each says why it is where it is).
MIN_INTERVAL_S = 0.05  # /proc/diskstats counters move in jiffies; finer samples are noise
MAX_INTERVAL_S = 3600.0  # one reading an hour is the coarsest view that still says anything
MAX_RUNTIME_S = 86_400  # a day per test: longer is a typo (seconds taken for minutes)
# An hour of warm-up before each test: a write cache or a sleeping device is past its start
# long before that (the sustained profile, not a ramp, finds where a cache ends); longer is a
# typo, and would be spent again before every test of the profile.
MAX_RAMP_S = 3600
MAX_TIMEOUT_S = 30 * 86_400  # a monitored command may run a month, not forever
# Workloads build their package set in memory: scale 10 is ~220,000 files and ~12 GB written,
# ten times seed 002's desktop install, well past what any card test needs.
MAX_WORKLOAD_SCALE = 10.0
MAX_COUNT = 1_000_000_000  # counts of intervals or history rows; SQLite LIMIT is 64-bit
# The watchdog's floor (flashmark.system.watchdog): a day of silence is a device that is gone.
MAX_STALL_TIMEOUT_S = 86_400.0


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number_text(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _range_text(minimum: float, maximum: float, min_open: bool) -> str:
    low = f"above {_number_text(minimum)}" if min_open else f"at least {_number_text(minimum)}"
    return f"{low} and at most {_number_text(maximum)}"


def _wanted(kind: str, unit: str, minimum: float, maximum: float, min_open: bool) -> str:
    """What to type instead, the same words for every refusal of one option: "use a whole
    number of seconds at least 1 and at most 86,400"."""
    of_unit = f" of {unit}" if unit else ""
    return f"use {kind}{of_unit} {_range_text(minimum, maximum, min_open)}"


def _quoted(value: Any) -> str:
    """The input as typed, shortened: a 400-digit number need not be echoed whole."""
    text = str(value)
    return repr(text) if len(text) <= 24 else f"{text[:20]!r}... ({len(text)} characters)"


class BoundedFloat(_FloatType):
    """A finite decimal number within [minimum, maximum] (or (minimum, maximum])."""

    name = "number"
    kind = "a number"  # what every refusal asks for instead

    def __init__(
        self, minimum: float, maximum: float, *, min_open: bool = False, unit: str = ""
    ) -> None:
        self.minimum = minimum
        self.maximum = maximum
        self.min_open = min_open
        self.unit = unit  # "seconds": said in every refusal, so the fix is typed right at once

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float | int) and not isinstance(value, bool):
            number = self._given(value)  # a default from the code, not typed text
        else:
            text = str(value).strip()
            if not text:
                self.fail(f"'' is empty: {self._wanted()}", param, ctx)
            number = self._read(text, value, param, ctx)
        below = number <= self.minimum if self.min_open else number < self.minimum
        if below or number > self.maximum:
            self.fail(f"{_quoted(value)} is out of range: {self._wanted()}", param, ctx)
        return number

    def _given(self, value: float) -> float:
        return float(value)

    def _read(
        self, text: str, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            number = float(text)
        except ValueError:
            self.fail(f"{_quoted(value)} is not a number: {self._wanted()}", param, ctx)
        # Plain decimal notation only: float() also takes '1_0', 'infinity' and other
        # scripts' digits, none of which anyone means as a number of seconds.
        if math.isnan(number) or (math.isfinite(number) and not _DECIMAL.fullmatch(text)):
            self.fail(f"{_quoted(value)} is not a number: {self._wanted()}", param, ctx)
        if math.isinf(number):
            self.fail(f"{_quoted(value)} is not a finite number: {self._wanted()}", param, ctx)
        return number

    def _wanted(self) -> str:
        return _wanted(self.kind, self.unit, self.minimum, self.maximum, self.min_open)


class BoundedInt(BoundedFloat):
    """A whole number within [minimum, maximum]."""

    name = "integer"
    kind = "a whole number"

    def __init__(self, minimum: int, maximum: int, *, unit: str = "") -> None:
        super().__init__(minimum, maximum, unit=unit)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        return int(super().convert(value, param, ctx))

    def _given(self, value: float) -> float:
        return value

    def _read(
        self, text: str, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        # A minus sign before ASCII digits is a whole number, only out of range: saying
        # "not a whole number" of "-5" would send the user looking for the wrong mistake.
        digits = text.removeprefix("-")
        # ASCII digits only, as for run ids (cli/saved.py): int() would also take '1_000',
        # '+3' and other scripts' digits.
        if not (digits.isascii() and digits.isdecimal()):
            self.fail(f"{_quoted(value)} is not a whole number: {self._wanted()}", param, ctx)
        # Past 4300 digits int() refuses (CVE-2020-10735 limit); any such number is too big.
        return int(self.maximum) + 1 if len(digits) > 4000 else int(text)


class Size(_IntType):
    """A size in bytes as units.parse_size reads it ("256M", "1G", "4k", "512MiB")."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return parse_size(str(value))
        except UsageError as error:
            self.fail(str(error), param, ctx)


class Choice(click.Choice):  # type: ignore[type-arg]
    """One of a few names (a profile, a format), in any case ("A1" is "a1"), returned as the
    list spells it; a name that is not one of them is refused with the one it is closest to,
    if any ("did you mean standard?")."""

    def __init__(self, choices: Sequence[str]) -> None:
        super().__init__(list(choices), case_sensitive=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            names = [str(choice) for choice in self.choices]
            close = difflib.get_close_matches(str(value).lower(), names, n=1, cutoff=0.6)
            hint = f": did you mean {close[0]}?" if close else ""
            self.fail(f"{_quoted(value)} is not one of {', '.join(names)}{hint}", param, ctx)


class GradeNames(_NamesType):
    """A comma-separated list of grade names ("A1,U3"), each one flashmark grades
    (flashmark.bench.grading.GRADE_RULES); case-insensitive, returned as the grades spell them."""

    name = "grades"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, ...]:
        if isinstance(value, tuple):
            return value  # already converted (a default from the code)
        # Imported here: the grades load the benchmark's model, which `flashmark history`
        # (whose options are defined in this module too) must not.
        from flashmark.bench.grading.classes import GRADE_NAMES

        known = {name.upper(): name for name in GRADE_NAMES}
        names: list[str] = []
        for part in str(value).split(","):
            text = part.strip()
            if not text:
                self.fail(
                    f"{_quoted(value)} has an empty grade name: give names such as A1,U3",
                    param,
                    ctx,
                )
            name = known.get(text.upper())
            if name is None:
                self.fail(
                    f"unknown grade {_quoted(text)}: known grades are {', '.join(GRADE_NAMES)}",
                    param,
                    ctx,
                )
            if name not in names:
                names.append(name)
        return tuple(names)


# An SD or eMMC CID register: 128 bits, printed by the kernel (and `flashmark probe`) as 32
# hex digits (SD Physical Layer Simplified Specification 5.2; JEDEC eMMC 7.2).
_CID = re.compile(r"[0-9a-f]{32}")


class CardCid(_StrType):
    """A card's CID as `flashmark probe` shows it: 32 hex digits (either case, an optional
    0x), returned lower-case, as the history keeps it."""

    name = "cid"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip().lower()
        text = text.removeprefix("0x")
        if not _CID.fullmatch(text):
            self.fail(
                f"{_quoted(value)} is not a card CID: give the 32 hex digits `flashmark probe` "
                "shows for the card",
                param,
                ctx,
            )
        return text


INTERVAL = BoundedFloat(MIN_INTERVAL_S, MAX_INTERVAL_S, unit="seconds")
RUNTIME = BoundedInt(1, MAX_RUNTIME_S, unit="seconds")
RAMP = BoundedInt(0, MAX_RAMP_S, unit="seconds")  # 0: no warm-up, measuring starts at once
TIMEOUT = BoundedFloat(0.0, MAX_TIMEOUT_S, min_open=True, unit="seconds")
WORKLOAD_SCALE = BoundedFloat(0.0, MAX_WORKLOAD_SCALE)  # 0 skips the workloads
WORKLOAD_SCALE_POSITIVE = BoundedFloat(0.0, MAX_WORKLOAD_SCALE, min_open=True)
COUNT = BoundedInt(1, MAX_COUNT)
STALL_TIMEOUT = BoundedFloat(0.0, MAX_STALL_TIMEOUT_S, min_open=True, unit="seconds")
SIZE = Size()
GRADES = GradeNames()
CARD_CID = CardCid()


def interval_option(read: str) -> Callable[[Decorated], Decorated]:
    """--interval SECONDS (default 1), the time between two readings of `read`."""
    return click.option(
        "--interval",
        "interval_s",
        type=INTERVAL,
        default=1.0,
        show_default=True,
        metavar="SECONDS",
        help=f"Seconds between two readings of {read}.",
    )


# Shared by the commands that wait on a device (run, surface).
stall_timeout_option = click.option(
    "--stall-timeout",
    "stall_timeout_s",
    type=STALL_TIMEOUT,
    default=DEFAULT_FLOOR_S,
    show_default=True,
    metavar="SECONDS",
    help="Give up (exit 5) when the device completes no request for this long; raised for "
    "big requests (their size at 0.5 MB/s) and to 10 x the slowest request seen. What was "
    "measured is kept.",
)
