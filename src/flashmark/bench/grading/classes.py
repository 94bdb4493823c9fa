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
- Every sequential check reads `seq-write` (1 MiB, depth 1, after a ramp, from the start of
  the area: sustained, not a burst), except that the speed classes (C10, U1, U3, V30),
  when the run measured `sustained-write` (profiles standard, full, sustained), are graded as
  the SD Physical Layer Simplified Specification measures them (flashmark.bench.speed_class_rate):
  the slowest 4 MiB sub-unit of 512 KiB writes after the device's write cache must reach the
  class's MB/s, and no write may be busy longer than 250 ms. The checks then name that test
  and the figure, and the grade's note says which rate was graded. Results without sub-unit
  rates (saved before them, or too short to hold a whole sub-unit after the cache) grade the
  rate after the cache as a whole, as before.
- When the sustained-write test found no fall-off and stopped at its size (or time) limit
  rather than on a steady rate, the cache may be larger than what it wrote and the rate it
  measured may still be the burst: a speed class that would pass is "uncertain" (verdict_reason
  says why); one that fails still fails, since a card writes no faster after its cache than
  into it.
A check whose test did not run (a read-only device run, a profile without it) has no value and
makes its grade `passed: None` rather than a guess.

A test that stopped once its verdict was decided (profiles a1 and quick without --runtime,
flashmark.bench.lengths) is judged on its decision interval instead, the anytime-valid 99.5%
one (flashmark.stats DECISION_ALPHA); its tables still show the 95% one.
Each check is judged with its figure's 95% interval (flashmark.stats.judge): pass when the
whole interval is at or above the threshold, fail when it is wholly below, uncertain when it
contains the threshold. A grade is never "fail" while an interval includes its threshold: it is
"uncertain" and `verdict_reason` names the check ("rand-read-4k IOPS 1,905 ± 40 straddles
1,500"). A figure without an interval (fewer than 2 seconds, old documents) is judged on its
value as before. `passed` is True only for "pass".
A write figure's interval runs from the durable rate's low end to the accepted rate's high end
(the durable rate counts the final flush in the window, the least the device sustained; the
accepted rate leaves it out, the most): a card whose only shortfall is its final flush is
"uncertain", never "fail" ("rand-write-4k IOPS 497 (496..501) straddles 500").
The speed classes' slowest sub-unit and longest busy are a minimum and a maximum, not means:
their interval runs from the slowest to the second slowest sub-unit (from the second longest
to the longest busy), since one outlier alone may be a host delay
(flashmark.bench.speed_class_rate), and they are judged on it the same way: pass when it is wholly
on the right side, fail when wholly on the wrong side (two sub-units short, two writes over 250
ms), uncertain otherwise.
A test another process disturbed (or run on a starved host: flashmark.bench.disturbance) passes
and fails nothing: its measured checks are "uncertain" and `verdict_reason` says what disturbed
it ("another process wrote 3.1 MB/s to mmcblk0 during rand-write-4k"). A clean test's fail
still fails its grade.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flashmark.bench.model import (
    Check,
    DirectionResult,
    DisturbanceStatus,
    Grade,
    SustainedWrite,
    TestResult,
)
from flashmark.bench.sustained import SUSTAINED_WRITE_NAME
from flashmark.stats import MeanInterval, Verdict, judge, judge_bounds
from flashmark.units import MB, format_size

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
    # Speed classes: grade the sustained-write test's sustained rate when it was measured.
    sustained: bool = False


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


SUSTAINED_CHECK_NAME = "sustained sequential write after the write cache"
SUB_UNIT_CHECK_NAME = "slowest 4 MiB sub-unit after the write cache"
BUSY_CHECK_NAME = "longest write busy (512 KiB)"
SUSTAINED_NOTE = (
    "graded on the sustained-write test as the SD speed classes are measured: the slowest "
    "4 MiB sub-unit of 512 KiB writes after the write cache, each write busy at most 250 ms "
    "(SD Physical Layer Simplified Specification 4.10, 4.13.3.3), not the burst"
)
SUSTAINED_WHOLE_NOTE = (
    "graded on the sustained rate after the write cache as a whole (sustained-write, 512 KiB "
    "writes; no sub-unit rates in this result), not the burst"
)


def _speed_class(threshold_mb_s: int) -> CheckRule:
    return dataclasses.replace(_sequential(threshold_mb_s), sustained=True)


def _app_class(
    number: int, test_suffix: str, *, read_iops: int, write_iops: int, note: str = ""
) -> GradeRule:
    """An Application Performance Class: random 4K reads and writes (on the tests named
    rand-read-4k and rand-write-4k plus `test_suffix`) and 10 MB/s sustained sequential."""
    checks = (
        CheckRule("random 4K read", f"rand-read-4k{test_suffix}", "read_iops", read_iops, "IOPS"),
        CheckRule(
            "random 4K write", f"rand-write-4k{test_suffix}", "write_iops", write_iops, "IOPS"
        ),
        _sequential(10),
    )
    return GradeRule(
        f"A{number}", f"Application Performance Class {number}", _APP_CLASS_SOURCE, checks, note
    )


GRADE_RULES: tuple[GradeRule, ...] = (
    _app_class(1, "", read_iops=1500, write_iops=500),
    _app_class(
        2,
        "-q32",
        read_iops=4000,
        write_iops=2000,
        note="A2 needs host support (command queueing and cache); without it an A2 card "
        "can measure below A1",
    ),
    GradeRule("C10", "Speed Class 10", _SPEED_CLASS_SOURCE, (_speed_class(10),)),
    GradeRule("U1", "UHS Speed Class 1", _SPEED_CLASS_SOURCE, (_speed_class(10),)),
    GradeRule("U3", "UHS Speed Class 3", _SPEED_CLASS_SOURCE, (_speed_class(30),)),
    GradeRule("V30", "Video Speed Class 30", _SPEED_CLASS_SOURCE, (_speed_class(30),)),
)


def _direction(results: Sequence[TestResult], test: str, metric: str) -> DirectionResult | None:
    result = next((r for r in results if r.spec.name == test), None)
    if result is None:
        return None
    return result.direction(metric.partition("_")[0])


def measured_with_interval(
    results: Sequence[TestResult], test: str, metric: str
) -> tuple[float, MeanInterval | None] | None:
    """A metric of a test and the interval its verdict rests on, both in the unit of its check;
    None when the test did not run. The interval is the decision interval of a test that
    stopped once its verdict was decided (flashmark.bench.lengths), else the 95% interval;
    None when the figure has none (old documents)."""
    direction = _direction(results, test, metric)
    if direction is None:
        return None
    _, _, quantity = metric.partition("_")
    if quantity == "iops":
        return direction.iops, direction.iops_decision or direction.iops_ci95
    if quantity == "bw_bytes":
        interval = direction.bw_decision or direction.bw_ci95
        return direction.bw_bytes / MB, None if interval is None else interval.scaled(1 / MB)
    raise ValueError(f"unknown metric {metric!r}")


def accepted_factor(results: Sequence[TestResult], test: str, metric: str) -> float:
    """How much higher the rate the host accepted is than the durable (graded) rate of a write
    figure: (window + final flush) / window; 1.0 for reads and without a flush."""
    direction = _direction(results, test, metric)
    if direction is None or not direction.accepted_iops or not direction.iops:
        return 1.0
    return max(1.0, direction.accepted_iops / direction.iops)


def _number(value: float, unit: str) -> str:
    return f"{value:,.2f}" if unit == "MB/s" else f"{value:,.0f}"


def _value_text(check: Check) -> str:
    """'rand-read-4k IOPS 1,905 ± 40' (the value and half its 95% interval), or without ±;
    a minimum or maximum with its bounds ('sustained-write MB/s 29.9 (29.8..30.1)')."""
    if check.value is None:
        return f"{check.test} {check.unit} not measured"
    text = f"{check.test} {check.unit} {_number(check.value, check.unit)}"
    if check.interval is not None:
        low, high = check.interval
        centred = math.isclose((low + high) / 2, check.value, rel_tol=1e-6)
        if check.test == SUSTAINED_WRITE_NAME or not centred:  # a bracket, not value ± half
            text += f" ({_number(low, check.unit)}..{_number(high, check.unit)})"
        else:
            text += f" ± {_number((high - low) / 2, check.unit)}"
    return text


def straddle_text(check: Check) -> str:
    """'rand-read-4k IOPS 1,905 ± 40 straddles 1,500': an uncertain check in words; the
    sustained-write's minimum and maximum say what made them uncertain."""
    if check.test == SUSTAINED_WRITE_NAME and check.interval is not None:
        return _sustained_straddle_text(check)
    return f"{_value_text(check)} straddles {_number(check.threshold, check.unit)}"


def _sustained_straddle_text(check: Check) -> str:
    """Why the slowest sub-unit or the longest write busy is uncertain (flashmark.bench.
    speed_class_rate): one of them alone past the threshold, which may be a host delay; a
    single sub-unit measured; or a value within the log's resolution of the threshold."""
    assert check.value is not None and check.interval is not None
    low, high = check.interval
    value, limit = _number(check.value, check.unit), _number(check.threshold, check.unit)
    unit = check.unit
    if check.at_most:  # the longest write busy: from the second longest to the longest
        if check.value > check.threshold:
            return (
                f"one write was busy {value} {unit}, over the {limit} {unit} a speed class "
                f"allows, the next longest {_number(low, unit)} {unit}: one slow write may be "
                "a delay of the host, not the card; run again on an idle host"
            )
        return f"the longest write busy, {value} {unit}, is within 1 ms of the {limit} {unit} limit"
    if check.value >= check.threshold:
        return (
            f"the slowest 4 MiB sub-unit, {value} {unit}, is within fio's 1 ms log resolution "
            f"of {limit} {unit}"
        )
    if high < check.threshold:  # no second sub-unit to compare with
        return (
            f"the one 4 MiB sub-unit measured after the write cache wrote {value} {unit}, below "
            f"{limit} {unit}: one alone may be a delay of the host; a larger --size writes more"
        )
    return (
        f"only the slowest 4 MiB sub-unit fell below {limit} {unit} ({value} {unit}; the next "
        f"slowest {_number(high, unit)} {unit}): one slow sub-unit may be a delay of the host, "
        "not the card; run again on an idle host"
    )


def sustained_rate(results: Sequence[TestResult]) -> SustainedWrite | None:
    """The sustained-write test's cache and rates, when the run measured them."""
    direction = _direction(results, SUSTAINED_WRITE_NAME, "write")
    return None if direction is None else direction.sustained


def _check(
    name: str,
    rule: CheckRule,
    value: float,
    verdict: Verdict,
    interval: tuple[float, float] | None,
    test: str = SUSTAINED_WRITE_NAME,
    *,
    at_most: bool = False,
) -> Check:
    """A measured check of `rule`'s metric, unit and threshold (a least value, or the most
    allowed, `at_most`): its margin from the value and `passed` from the verdict."""
    margin = (rule.threshold - value if at_most else value - rule.threshold) / rule.threshold
    return Check(
        name,
        test,
        rule.metric,
        rule.unit,
        rule.threshold,
        value,
        margin * 100.0,
        verdict is Verdict.PASS,
        verdict,
        interval,
        at_most=at_most,
    )


def _sustained_checks(rule: CheckRule, sustained: SustainedWrite) -> tuple[Check, ...]:
    """A speed class on the sustained-write test: the slowest sub-unit and the longest busy
    (flashmark.bench.speed_class_rate), or the rate after the cache where sub-units are missing."""
    sub_units = sustained.sub_units
    if sub_units is None:
        value = sustained.sustained_bw_bytes / MB
        # One figure from a fit, without an interval: judged on its value.
        verdict = Verdict.PASS if value >= rule.threshold else Verdict.FAIL
        return (_check(SUSTAINED_CHECK_NAME, rule, value, verdict, None),)
    value = sub_units.min_bw_bytes / MB
    low, high = (bound / MB for bound in sub_units.min_bw_bounds)
    verdict = judge_bounds(low, high, rule.threshold)
    if verdict is Verdict.FAIL and sub_units.count < 2:
        verdict = Verdict.UNCERTAIN  # one sub-unit alone never fails a card (see the top)
    rate = _check(SUB_UNIT_CHECK_NAME, rule, value, verdict, (low, high))
    limit = sub_units.busy_limit_ms
    busy_bounds = sub_units.max_busy_bounds
    busy_verdict = judge_bounds(*busy_bounds, limit, at_most=True)
    busy_rule = CheckRule(BUSY_CHECK_NAME, SUSTAINED_WRITE_NAME, "write_busy_ms", limit, "ms")
    busy_value = sub_units.max_busy_ms
    busy = _check(BUSY_CHECK_NAME, busy_rule, busy_value, busy_verdict, busy_bounds, at_most=True)
    return (rate, busy)


def _checks(rule: CheckRule, results: Sequence[TestResult]) -> tuple[Check, ...]:
    sustained = sustained_rate(results) if rule.sustained else None
    if sustained is not None:
        return _sustained_checks(rule, sustained)
    measured = measured_with_interval(results, rule.test, rule.metric)
    if measured is None:
        return (
            Check(rule.name, rule.test, rule.metric, rule.unit, rule.threshold, None, None, None),
        )
    value, interval = measured
    if interval is None:  # judged on the value alone, as before intervals existed
        verdict = Verdict.PASS if value >= rule.threshold else Verdict.FAIL
    else:
        # A write rate lies between two bounds: the durable rate (the final flush in the
        # window) is the least the device sustained, the rate the host accepted the most (a
        # longer run spreads the one flush thinner). So the interval runs from the durable
        # rate's low end to the accepted rate's high end: a card whose only shortfall is its
        # final flush (an exact-A1 card: 500 IOPS accepted, 497 durable over 8 s) is
        # "uncertain", never "fail"; a card whose flush hides a burst of cached writes stays
        # "uncertain" or "fail" (it cannot pass on its accepted rate).
        factor = accepted_factor(results, rule.test, rule.metric)
        if factor > 1.0:
            interval = dataclasses.replace(interval, high=interval.high * factor)
        verdict = judge(value, interval, rule.threshold).verdict
    bounds = None if interval is None else (interval.low, interval.high)
    return (_check(rule.name, rule, value, verdict, bounds, test=rule.test),)


def cache_not_exceeded_text(sustained: SustainedWrite) -> str:
    """Why a speed class is uncertain when the sustained-write test never left the cache."""
    written = "" if sustained.written_bytes is None else f" {format_size(sustained.written_bytes)}"
    stop = sustained.stopped_by or "a limit"
    return (
        f"the write speed never dropped in the{written or ' bytes'} sustained-write wrote up to "
        f"its {stop}: the card's write cache may be larger than that, and the rate graded may "
        "still be the burst"
    )


def disturbed_tests(results: Sequence[TestResult]) -> dict[str, str]:
    """The tests another process disturbed (or a starved host), each with why
    (flashmark.bench.disturbance): they pass or fail nothing."""
    return {
        result.spec.name: result.disturbance.reason
        for result in results
        if result.disturbance is not None
        and result.disturbance.status is DisturbanceStatus.DISTURBED
    }


def _undisturbed(check: Check, disturbed: Mapping[str, str]) -> Check:
    """A measured check of a disturbed test is uncertain, whatever its figure says."""
    if check.test not in disturbed or check.verdict is None:
        return check
    return dataclasses.replace(check, verdict=Verdict.UNCERTAIN, passed=False)


def grade_verdict(
    checks: Sequence[Check], disturbed: Mapping[str, str] | None = None
) -> tuple[Verdict | None, str]:
    """A grade's verdict from its checks, and why when it is uncertain.

    fail: a check clearly fails (its interval lies below the threshold). Otherwise None when
    a check was not measured; uncertain when an interval contains its threshold (never fail
    then) or its test was `disturbed` (the reason then says what disturbed it); pass when every
    check passes."""
    disturbed = disturbed or {}
    if any(check.verdict is Verdict.FAIL for check in checks):
        return Verdict.FAIL, ""
    if any(check.verdict is None for check in checks):
        return None, ""
    straddling = [check for check in checks if check.verdict is Verdict.UNCERTAIN]
    if straddling:
        reasons = dict.fromkeys(
            disturbed.get(check.test) or straddle_text(check) for check in straddling
        )
        return Verdict.UNCERTAIN, "; ".join(reasons)
    return Verdict.PASS, ""


def grade_results(
    results: Sequence[TestResult], rules: Sequence[GradeRule] = GRADE_RULES
) -> tuple[Grade, ...]:
    grades = []
    sustained = sustained_rate(results)
    disturbed = disturbed_tests(results)
    for rule in rules:
        checks = tuple(
            _undisturbed(check, disturbed)
            for item in rule.checks
            for check in _checks(item, results)
        )
        verdict, reason = grade_verdict(checks, disturbed)
        note = rule.note
        if any(check.test == SUSTAINED_WRITE_NAME for check in checks):
            assert sustained is not None  # a check reads it only when it is there
            graded = SUSTAINED_WHOLE_NOTE if sustained.sub_units is None else SUSTAINED_NOTE
            note = f"{note}; {graded}" if note else graded
            if sustained.cache_exceeded is False and verdict is Verdict.PASS:
                # A pass on what may be the burst is no pass; a fail stands (see the top).
                verdict, reason = Verdict.UNCERTAIN, cache_not_exceeded_text(sustained)
        passed = None if verdict is None else verdict is Verdict.PASS
        grades.append(
            Grade(
                name=rule.name,
                title=rule.title,
                source=rule.source,
                checks=checks,
                passed=passed,
                note=note,
                verdict=verdict,
                verdict_reason=reason,
            )
        )
    return tuple(grades)


GRADE_NAMES: tuple[str, ...] = tuple(rule.name for rule in GRADE_RULES)
# The words of a grade's and a check's document: an upload sends these and no others.
GRADE_TITLES = frozenset(rule.title for rule in GRADE_RULES)
GRADE_SOURCES = frozenset(rule.source for rule in GRADE_RULES)
_NOTES = {rule.note for rule in GRADE_RULES}
_GRADED = (SUSTAINED_NOTE, SUSTAINED_WHOLE_NOTE)
GRADE_NOTES = frozenset(
    {"", *_NOTES, *_GRADED, *(f"{note}; {graded}" for note in _NOTES if note for graded in _GRADED)}
)
CHECK_NAMES = frozenset(
    {
        *(check.name for rule in GRADE_RULES for check in rule.checks),
        SUSTAINED_CHECK_NAME,
        SUB_UNIT_CHECK_NAME,
        BUSY_CHECK_NAME,
    }
)


def graded_tests(rules: Sequence[GradeRule] = GRADE_RULES) -> frozenset[str]:
    """The tests whose figures the classes' thresholds judge, speed classes on a
    sustained-write run left out (they are graded on that size-bound test)."""
    return frozenset(check.test for rule in rules for check in rule.checks if not check.sustained)


def undecided(result: TestResult, rules: Sequence[GradeRule] = GRADE_RULES) -> tuple[str, ...]:
    """The checks of `result`'s own test that its intervals leave uncertain, in words
    (`straddle_text`), each threshold once: () once every threshold the test serves is
    decided, pass or fail, and for a test no class reads. A test stopping on its verdict
    (flashmark.bench.lengths) runs while this is not empty."""
    seen: dict[tuple[str, float], str] = {}
    for rule in rules:
        for item in rule.checks:
            # The speed classes read seq-write where the run measured no sustained-write, as
            # in every profile whose tests stop on their verdicts: they count then too.
            if item.test != result.spec.name:
                continue
            for check in _checks(item, (result,)):
                if check.verdict is Verdict.UNCERTAIN:
                    seen.setdefault((check.metric, check.threshold), straddle_text(check))
    return tuple(seen.values())


def unmet_requirements(grades: Sequence[Grade], required: Sequence[str]) -> tuple[str, ...]:
    """One line per required grade that is not "pass": failed, uncertain (with the check that
    straddles its threshold), not fully measured, or not graded in this run at all."""
    by_name = {grade.name: grade for grade in grades}
    lines = []
    for name in required:
        grade = by_name.get(name)
        if grade is None:
            lines.append(f"{name}: not graded in this run")
        elif grade.verdict is Verdict.PASS:
            continue
        elif grade.verdict is Verdict.FAIL:
            failing = [c for c in grade.checks if c.verdict is Verdict.FAIL]
            lines.append(f"{name}: fail ({'; '.join(fail_text(c) for c in failing)})")
        elif grade.verdict is Verdict.UNCERTAIN:
            lines.append(f"{name}: uncertain ({grade.verdict_reason})")
        else:
            missing = ", ".join(c.test for c in grade.checks if c.value is None)
            lines.append(f"{name}: not graded in this run ({missing} did not run)")
    return tuple(lines)


def fail_text(check: Check) -> str:
    """'random 4K write 594 IOPS < 2000': a failed check's figure against its threshold."""
    sign = ">" if check.at_most else "<"
    return f"{_value_text(check)} {sign} {_number(check.threshold, check.unit)}"
