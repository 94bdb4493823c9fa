"""Grade verdicts from the 95% intervals: pass, fail, uncertain, never fail while straddling."""

import dataclasses
import json

import click
import pytest
from rich.console import Console

from flashmark.bench.document import document_to_run, run_to_document
from flashmark.bench.grading.classes import GRADE_NAMES, grade_results, unmet_requirements
from flashmark.bench.profiles import (
    RAND_READ_4K,
    RAND_READ_4K_Q32,
    RAND_WRITE_4K,
    RAND_WRITE_4K_Q32,
    SEQ_WRITE,
)
from flashmark.bench.render.view import WRITERS
from flashmark.cli.params import GRADES
from flashmark.errors import ResultFormatError
from flashmark.report.html import render_html_report
from flashmark.stats import MeanInterval, Verdict
from tests.bench.synthetic import SAVED, direction, graded, result, saved_run


def interval(mean, half):
    if half is None:
        return None
    return MeanInterval(mean=mean, low=mean - half, high=mean + half, samples=8,
                        effective_samples=6.0)  # fmt: skip


def measured(iops, bw_bytes, iops_half=None, bw_half=None):
    return direction(
        iops, bw_bytes, runtime_ms=8000,
        iops_ci95=interval(iops, iops_half), bw_ci95=interval(bw_bytes, bw_half),
    )  # fmt: skip


def card(read=(3000, 30), write=(1000, 10), seq=(50e6, 1e6), q32=(8000, 80, 4000, 40)):
    """Results of a card: (value, half-width) per headline; a half-width of None: no interval."""
    q_read, q_read_half, q_write, q_write_half = q32
    return [
        result(RAND_READ_4K, measured(read[0], 0, read[1])),
        result(RAND_WRITE_4K, measured(write[0], 0, write[1])),
        result(RAND_READ_4K_Q32, measured(q_read, 0, q_read_half)),
        result(RAND_WRITE_4K_Q32, measured(q_write, 0, q_write_half)),
        result(SEQ_WRITE, measured(seq[0] / 2**20, seq[0], None, seq[1])),
    ]


def test_intervals_wholly_above_every_threshold_pass():
    grades = graded(card())
    assert {name: grade.verdict for name, grade in grades.items()} == dict.fromkeys(
        GRADE_NAMES, Verdict.PASS
    )
    assert all(grade.passed is True and grade.verdict_reason == "" for grade in grades.values())
    a1 = grades["A1"]
    assert [c.interval for c in a1.checks] == [(2970, 3030), (990, 1010), (49.0, 51.0)]


def test_an_interval_wholly_below_fails():
    a1 = graded(card(read=(1400, 50)))["A1"]  # 1350..1450 < 1500
    assert a1.verdict is Verdict.FAIL and a1.passed is False
    assert [c.verdict for c in a1.checks] == [Verdict.FAIL, Verdict.PASS, Verdict.PASS]


def test_the_value_above_but_the_interval_straddling_is_uncertain_and_says_why():
    a1 = graded(card(read=(1905, 410)))["A1"]  # 1495..2315 contains 1500
    assert a1.verdict is Verdict.UNCERTAIN
    assert a1.passed is False  # True only for "pass"
    assert a1.checks[0].passed is False and a1.checks[0].verdict is Verdict.UNCERTAIN
    assert a1.verdict_reason == "rand-read-4k IOPS 1,905 ± 410 straddles 1,500"


@pytest.mark.parametrize("value", [1450.0, 1499.0, 1500.0, 1501.0, 1550.0])
def test_never_fail_while_the_interval_includes_the_threshold(value):
    a1 = graded(card(read=(value, 60)))["A1"]  # every interval here contains 1500
    assert a1.verdict is Verdict.UNCERTAIN
    assert a1.checks[0].verdict is Verdict.UNCERTAIN
    assert a1.verdict_reason.startswith(f"rand-read-4k IOPS {value:,.0f} ± 60 straddles 1,500")


def test_sequential_interval_straddling_in_mb_s():
    grades = graded(card(seq=(30.2e6, 0.5e6)))  # 29.7..30.7 MB/s
    assert grades["U3"].verdict is Verdict.UNCERTAIN and grades["V30"].verdict is Verdict.UNCERTAIN
    assert grades["U3"].verdict_reason == "seq-write MB/s 30.20 ± 0.50 straddles 30.00"
    assert grades["U1"].verdict is Verdict.PASS  # 29.7 >= 10


def test_a_clear_failure_outweighs_a_straddle():
    a1 = graded(card(read=(1500, 100), write=(400, 20)))["A1"]
    assert a1.verdict is Verdict.FAIL and a1.passed is False and a1.verdict_reason == ""


def test_every_straddling_check_is_named():
    a2 = graded(card(q32=(3999, 896, 1987, 390)))["A2"]
    assert a2.verdict is Verdict.UNCERTAIN
    assert a2.verdict_reason == (
        "rand-read-4k-q32 IOPS 3,999 ± 896 straddles 4,000; "
        "rand-write-4k-q32 IOPS 1,987 ± 390 straddles 2,000"
    )


def with_flush(results, test, accepted_over_durable):
    """The results with `test`'s write figures durable (flush in the window) and the rate the
    host accepted `accepted_over_durable` times higher."""
    changed = []
    for each in results:
        if each.spec is test:
            write = each.write
            write = dataclasses.replace(
                write,
                accepted_iops=write.iops * accepted_over_durable,
                accepted_bw_bytes=write.bw_bytes * accepted_over_durable,
                fsync_ms=8000 * (accepted_over_durable - 1),
            )
            each = dataclasses.replace(each, write=write)
        changed.append(each)
    return changed


@pytest.mark.parametrize(
    ("durable", "half", "accepted_over_durable", "verdict", "interval"),
    [
        # an exact-A1 card: 500 IOPS accepted, its one final flush (40 ms in 8 s) below the line
        (497.5, 0.5, 1.005, Verdict.UNCERTAIN, (497.0, 498.0 * 1.005)),
        # the whole bracket below: even the accepted rate misses
        (480.0, 2.0, 1.005, Verdict.FAIL, (478.0, 482.0 * 1.005)),
        # the durable rate's interval wholly above: pass, as without a flush
        (520.0, 2.0, 1.005, Verdict.PASS, (518.0, 522.0 * 1.005)),
        # a flush that hides a burst of cached writes (accepted twice the durable): not a pass
        (300.0, 5.0, 2.0, Verdict.UNCERTAIN, (295.0, 610.0)),
    ],
)
def test_a_write_figure_runs_from_its_durable_to_its_accepted_rate(
    durable, half, accepted_over_durable, verdict, interval
):
    results = with_flush(card(write=(durable, half)), RAND_WRITE_4K, accepted_over_durable)
    a1 = graded(results)["A1"]
    check = a1.checks[1]
    assert check.value == durable and check.verdict is verdict and a1.verdict is verdict
    assert check.interval == pytest.approx(interval)
    if verdict is Verdict.UNCERTAIN:  # a bracket, not "value ± half": it is not centred
        low, high = interval
        assert a1.verdict_reason == (
            f"rand-write-4k IOPS {durable:,.0f} ({low:,.0f}..{high:,.0f}) straddles 500"
        )


@pytest.mark.parametrize(("value", "verdict"), [(1499.9, Verdict.FAIL), (1500.0, Verdict.PASS)])
def test_without_an_interval_the_value_decides_as_before(value, verdict):
    a1 = graded(card(read=(value, None)))["A1"]
    assert a1.checks[0].interval is None
    assert a1.checks[0].verdict is verdict and a1.verdict is verdict
    assert a1.passed is (verdict is Verdict.PASS)


def test_a_straddle_with_a_check_not_measured_is_not_graded():
    results = [r for r in card(read=(1500, 100)) if r.spec is not RAND_WRITE_4K]
    a1 = graded(results)["A1"]
    assert a1.passed is None and a1.verdict is None
    assert a1.checks[1].value is None and a1.checks[1].verdict is None


def test_verdicts_survive_saving_and_reading():
    run = saved_run()
    grades = grade_results(card(read=(1905, 410), seq=(8e6, 0.5e6)))
    document = run_to_document(dataclasses.replace(run, grades=grades))
    a1, u1 = document["grades"]["A1"], document["grades"]["U1"]
    assert a1["verdict"] == "fail" and a1["pass"] is False
    assert u1["verdict"] == "fail" and u1["checks"][0]["interval"] == [7.5, 8.5]
    a2 = document["grades"]["A2"]
    assert a2["verdict"] == "fail"  # the sequential check fails A2 as well
    read_back = document_to_run(json.loads(json.dumps(document)))
    assert read_back.grades == grades
    uncertain = run_to_document(
        dataclasses.replace(run, grades=grade_results(card(read=(1905, 410))))
    )
    assert uncertain["grades"]["A1"]["verdict"] == "uncertain"
    assert (
        uncertain["grades"]["A1"]["verdict_reason"]
        == "rand-read-4k IOPS 1,905 ± 410 straddles 1,500"
    )
    assert uncertain["grades"]["A1"]["checks"][0]["verdict"] == "uncertain"
    assert document_to_run(uncertain).grades[0].verdict is Verdict.UNCERTAIN  # fmt: skip


def test_an_unknown_verdict_is_a_format_error():
    document = json.loads(SAVED.read_text())
    document["grades"]["A1"]["verdict"] = "maybe"
    with pytest.raises(ResultFormatError, match="unknown grade verdict 'maybe'"):
        document_to_run(document)


def test_unmet_requirements_name_each_grade_and_why():
    grades = grade_results(card(read=(1905, 410), seq=(20e6, 0.5e6)))
    assert unmet_requirements(grades, ("A1", "U1", "U3")) == (
        "A1: uncertain (rand-read-4k IOPS 1,905 ± 410 straddles 1,500)",
        "U3: fail (seq-write MB/s 20.00 ± 0.50 < 30.00)",
    )
    assert unmet_requirements(grades, ("U1", "C10")) == ()
    assert unmet_requirements(grades[:1], ("A1", "V30")) == (
        "A1: uncertain (rand-read-4k IOPS 1,905 ± 410 straddles 1,500)",
        "V30: not graded in this run",
    )
    partial = grade_results([r for r in card() if r.spec is not SEQ_WRITE])
    assert unmet_requirements(partial, ("U1",)) == (
        "U1: not graded in this run (seq-write did not run)",
    )


def test_require_names_are_checked_while_parsing():
    assert GRADES.convert("a1, U3,A1", None, None) == ("A1", "U3")
    known = "known grades are A1, A2, C10, U1, U3, V30"
    with pytest.raises(click.BadParameter, match=f"unknown grade 'X9': {known}"):
        GRADES.convert("A1,X9", None, None)
    with pytest.raises(click.BadParameter, match="empty grade name"):
        GRADES.convert("A1,,U3", None, None)


def _run_with_an_uncertain_a1():
    run = saved_run()
    return dataclasses.replace(run, grades=grade_results(card(read=(1905, 410))))


def test_reports_show_an_uncertain_grade_and_why():
    run = _run_with_an_uncertain_a1()
    reason = "rand-read-4k IOPS 1,905 ± 410 straddles 1,500"
    markdown = WRITERS.markdown([run])
    assert f"| A1    | uncertain ({reason}) | random 4K read 1905 IOPS" in markdown
    html = render_html_report([run])
    assert '<span class="badge uncertain">A1 uncertain</span>' in html
    assert f'<span class="note">uncertain: {reason}</span>' in html
    console = Console(width=300, record=True, color_system=None)
    console.print(WRITERS.terminal(run))
    terminal = console.export_text()
    assert "│ A1    │ uncertain │" in terminal
    assert f"uncertain: {reason}" in terminal
