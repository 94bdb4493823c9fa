"""Verdicts: pure functions from test results to SD Association class grades.

Thresholds (MB = 10^6 bytes, as in the SD Association's own material):
- Application Performance Class (SD Physical Layer Simplified Specification 6.00, 4.16.2.4;
  https://www.sdcard.org/developers/sd-standard-overview/application-performance-class/):
  A1: random 4 KiB read >= 1500 IOPS, random 4 KiB write >= 500 IOPS, sustained sequential
  write >= 10 MB/s. A2: 4000 / 2000 IOPS, 10 MB/s.
- Speed Class (https://www.sdcard.org/developers/sd-standard-overview/speed-class/): minimum
  sustained sequential write: C10 10 MB/s, U1 10 MB/s, U3 30 MB/s, V30 30 MB/s.

Which test feeds which check (documented in docs/result-schema.md too):
- A1 reads `rand-read-4k` and `rand-write-4k` (queue depth 1: A1 cards need no host support).
- A2 reads `rand-read-4k-q32` and `rand-write-4k-q32`: A2 performance is specified with command
  queueing and the card cache, so the host may keep several requests outstanding. On SD hosts
  without command queueing (most SBCs and mainline kernels, seed 002) depth 32 reaches the card
  one request at a time, so the result is the same as depth 1.
- Every sequential check reads `seq-write` (1 MiB, depth 1, time-based after a ramp over a
  prepared area: sustained, not a burst).
A check whose test did not run (a read-only device run, a profile without it) has no value and
makes its grade `passed: None` rather than a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flashmark.model import Check, Grade, TestResult
from flashmark.units import MB

_APP_CLASS_SOURCE = (
    "SD Association, Application Performance Class (Physical Layer Simplified Specification "
    "6.00, section 4.16.2.4): https://www.sdcard.org/developers/sd-standard-overview/"
    "application-performance-class/"
)
_SPEED_CLASS_SOURCE = (
    "SD Association, Speed Class Standards: "
    "https://www.sdcard.org/developers/sd-standard-overview/speed-class/"
)


@dataclass(frozen=True)
class CheckRule:
    name: str
    test: str
    metric: str  # "read_iops", "write_iops" or "write_bw_bytes"
    threshold: float  # in `unit`
    unit: str


@dataclass(frozen=True)
class GradeRule:
    name: str
    title: str
    source: str
    checks: tuple[CheckRule, ...]
    note: str = ""


def _sequential(threshold_mb_s: int) -> CheckRule:
    return CheckRule(
        "sustained sequential write", "seq-write", "write_bw_bytes", threshold_mb_s, "MB/s"
    )


GRADE_RULES: tuple[GradeRule, ...] = (
    GradeRule(
        "A1",
        "Application Performance Class 1",
        _APP_CLASS_SOURCE,
        (
            CheckRule("random 4K read", "rand-read-4k", "read_iops", 1500, "IOPS"),
            CheckRule("random 4K write", "rand-write-4k", "write_iops", 500, "IOPS"),
            _sequential(10),
        ),
    ),
    GradeRule(
        "A2",
        "Application Performance Class 2",
        _APP_CLASS_SOURCE,
        (
            CheckRule("random 4K read", "rand-read-4k-q32", "read_iops", 4000, "IOPS"),
            CheckRule("random 4K write", "rand-write-4k-q32", "write_iops", 2000, "IOPS"),
            _sequential(10),
        ),
        note="A2 needs host support (command queueing and cache); without it an A2 card "
        "can measure below A1",
    ),
    GradeRule("C10", "Speed Class 10", _SPEED_CLASS_SOURCE, (_sequential(10),)),
    GradeRule("U1", "UHS Speed Class 1", _SPEED_CLASS_SOURCE, (_sequential(10),)),
    GradeRule("U3", "UHS Speed Class 3", _SPEED_CLASS_SOURCE, (_sequential(30),)),
    GradeRule("V30", "Video Speed Class 30", _SPEED_CLASS_SOURCE, (_sequential(30),)),
)


def measured_value(results: Sequence[TestResult], test: str, metric: str) -> float | None:
    """A metric of a test in the unit of its check (IOPS, or MB/s for bandwidth)."""
    result = next((r for r in results if r.spec.name == test), None)
    if result is None:
        return None
    direction_name, _, quantity = metric.partition("_")
    direction = result.read if direction_name == "read" else result.write
    if direction is None:
        return None
    if quantity == "iops":
        return direction.iops
    if quantity == "bw_bytes":
        return direction.bw_bytes / MB
    raise ValueError(f"unknown metric {metric!r}")


def _check(rule: CheckRule, results: Sequence[TestResult]) -> Check:
    value = measured_value(results, rule.test, rule.metric)
    if value is None:
        return Check(rule.name, rule.test, rule.metric, rule.unit, rule.threshold, None, None, None)
    margin = (value - rule.threshold) / rule.threshold * 100.0
    return Check(
        rule.name,
        rule.test,
        rule.metric,
        rule.unit,
        rule.threshold,
        value,
        margin,
        value >= rule.threshold,
    )


def grade_results(
    results: Sequence[TestResult], rules: Sequence[GradeRule] = GRADE_RULES
) -> tuple[Grade, ...]:
    grades = []
    for rule in rules:
        checks = tuple(_check(check, results) for check in rule.checks)
        if any(check.passed is False for check in checks):
            passed: bool | None = False
        elif all(check.passed for check in checks):
            passed = True
        else:
            passed = None
        grades.append(Grade(rule.name, rule.title, rule.source, checks, passed, rule.note))
    return tuple(grades)
