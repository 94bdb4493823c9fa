"""The speed classes graded as the SD Physical Layer specification measures them: the
slowest 4 MiB sub-unit of 512 KiB writes after the write cache, each write busy
at most 250 ms, and an honest verdict when the sustained-write test never left the cache."""

import dataclasses
import io
import json

import pytest
from rich.console import Console

from flashmark.bench.document import document_to_run, run_to_document
from flashmark.bench.grading.classes import grade_results, unmet_requirements
from flashmark.bench.model import STOPPED_SIZE_LIMIT, STOPPED_STEADY
from flashmark.bench.render.cells import check_text, sustained_text
from flashmark.bench.render.view import WRITERS
from flashmark.bench.results import sustained_write
from flashmark.bench.speed_class_rate import SUB_UNIT_BYTES, sub_unit_rates
from flashmark.bench.sustained import SUSTAINED_WRITE
from flashmark.fio.window import Completion
from flashmark.report.html import render_html_report
from flashmark.stats import Verdict
from flashmark.units import MB, KiB, MiB, format_rate
from tests.bench.synthetic import direction, graded, result, saved_run

BLOCK = 512 * KiB


def log(*phases, pauses=()):
    """fio's per-I/O log of 512 KiB writes: `phases` are (bytes, rate) in order; `pauses` are
    (write number, extra ms) added to that write's busy. Times cut to whole ms as fio logs."""
    extra = dict(pauses)
    completions, now_ms, number = [], 0.0, 0
    for size, rate in phases:
        for _ in range(size // BLOCK):
            now_ms += BLOCK / rate * 1000 + extra.get(number, 0.0)
            number += 1
            completions.append(Completion(int(now_ms) + 0.5, BLOCK))
    return completions


def measured(completions, steady=False, limit=None):
    written = sum(c.bytes for c in completions)
    found = sustained_write(
        completions, steady=steady, size_limit_bytes=written if limit is None else limit
    )
    assert found is not None
    return found


def with_sustained(found):
    """The sustained-write test's result whose write found `found`."""
    return result(SUSTAINED_WRITE, direction(1, found.sustained_bw_bytes, sustained=found))


def grades_for(sustained):
    return graded([with_sustained(sustained)])


def test_sub_units_after_the_cache_are_graded_and_the_slowest_is_the_figure():
    # 64 MiB cache at 60 MB/s, then 32 MB/s; one sub-unit after the cache has a 60 ms pause
    # in one write (a card's garbage collection): that sub-unit is the slowest.
    slow_write = (64 * MiB + 20 * SUB_UNIT_BYTES) // BLOCK + 3
    completions = log((64 * MiB, 60 * MB), (192 * MiB, 32 * MB), pauses=[(slow_write, 60.0)])
    found = measured(completions)
    units = found.sub_units
    assert units is not None and found.cache_exceeded is True
    assert units.from_bytes >= found.cache_bytes and units.from_bytes % SUB_UNIT_BYTES == 0
    assert units.count == (256 * MiB - units.from_bytes) // SUB_UNIT_BYTES
    expected = SUB_UNIT_BYTES / (SUB_UNIT_BYTES / (32 * MB) + 0.060)
    assert units.min_bw_bytes == pytest.approx(expected, rel=0.01)
    low, high = units.min_bw_bounds
    assert low <= units.min_bw_bytes <= high
    assert units.median_bw_bytes == pytest.approx(32 * MB, rel=0.01)
    assert units.max_busy_ms == pytest.approx(BLOCK / (32 * MB) * 1000 + 60, abs=1.5)
    assert units.busy_over_limit == 0


def test_u3_fails_on_slow_sub_units_although_the_average_after_the_cache_passes():
    # 33 MB/s after the cache on average, but two sub-units in it at 25 MB/s: Pw is a minimum
    # over AUs (SD Physical Layer Simplified Specification 4.10, 4.13.1.3), so U3 fails.
    completions = log((32 * MiB, 90 * MB), (100 * MiB, 34 * MB), (4 * MiB, 25 * MB),
                      (40 * MiB, 34 * MB), (4 * MiB, 25 * MB), (20 * MiB, 34 * MB))  # fmt: skip
    found = measured(completions)
    assert found.sustained_bw_bytes / MB > 30
    grades = grades_for(found)
    u3 = grades["U3"]
    assert u3.verdict is Verdict.FAIL
    rate, busy = u3.checks
    assert rate.name == "slowest 4 MiB sub-unit after the write cache"
    assert rate.test == "sustained-write" and rate.value == pytest.approx(25.0, rel=0.02)
    assert busy.verdict is Verdict.PASS and busy.at_most
    assert "slowest 4 MiB sub-unit" in u3.note and "250 ms" in u3.note
    assert grades["U1"].verdict is Verdict.PASS
    assert unmet_requirements(list(grades.values()), ["U3"])[0].startswith("U3: fail (")


def test_one_slow_sub_unit_alone_is_uncertain_it_may_be_a_host_delay():
    completions = log((32 * MiB, 90 * MB), (100 * MiB, 34 * MB), (4 * MiB, 25 * MB),
                      (60 * MiB, 34 * MB))  # fmt: skip
    u3 = grades_for(measured(completions))["U3"]
    rate = u3.checks[0]
    assert rate.value == pytest.approx(25.0, rel=0.02) and rate.interval[1] > 30
    assert u3.verdict is Verdict.UNCERTAIN
    assert u3.verdict_reason.startswith(
        "only the slowest 4 MiB sub-unit fell below 30.00 MB/s (24.97 MB/s; the next slowest "
    )
    assert "one slow sub-unit may be a delay of the host" in u3.verdict_reason


def test_a_slowest_sub_unit_at_the_threshold_is_uncertain_never_fail():
    # 10 MB/s exactly: 419.4 ms a sub-unit; the log's whole milliseconds cannot say which side.
    completions = log((16 * MiB, 50 * MB), (64 * MiB, 10 * MB))
    found = measured(completions)
    grade = grades_for(found)["U1"]
    rate = grade.checks[0]
    low, high = rate.interval
    assert low < 10 <= high
    assert rate.verdict is Verdict.UNCERTAIN and grade.verdict is Verdict.UNCERTAIN
    assert "fell below 10.00 MB/s (9.99 MB/s; the next slowest 10.01 MB/s)" in grade.verdict_reason


def test_writes_busy_over_250_ms_fail_the_speed_classes():
    # Table 4-60: "Each write busy shall be less than or equal to 250ms". Two writes over it
    # fail; one alone is uncertain (one delay may be the host's).
    one = measured(log((16 * MiB, 60 * MB), (64 * MiB, 40 * MB), pauses=[(100, 300.0)]))
    assert one.sub_units is not None and one.sub_units.busy_over_limit == 1
    assert grades_for(one)["U1"].verdict is Verdict.UNCERTAIN
    completions = log((16 * MiB, 60 * MB), (64 * MiB, 40 * MB), pauses=[(100, 300.0), (120, 280.0)])
    found = measured(completions)
    assert found.sub_units is not None and found.sub_units.busy_over_limit == 2
    grade = grades_for(found)["U1"]
    busy = grade.checks[1]
    assert busy.verdict is Verdict.FAIL and grade.verdict is Verdict.FAIL
    assert busy.value == pytest.approx(300 + BLOCK / (40 * MB) * 1000, abs=1.5)
    assert check_text(busy).startswith("longest write busy (512 KiB) 31")
    assert " ms (<= 250, -2" in check_text(busy)
    (line,) = unmet_requirements([grade], ["U1"])
    assert "> 250" in line


def test_the_first_write_may_take_the_cards_preparation_second():
    # 4.13.3.4: up to 1 s of preparation at the start of a recording is not a busy violation.
    completions = log((64 * MiB, 20 * MB), pauses=[(0, 900.0)])
    found = measured(completions, steady=True)
    assert found.sub_units is not None and found.sub_units.busy_over_limit == 0
    assert found.sub_units.from_bytes == SUB_UNIT_BYTES  # the first sub-unit is not graded


def test_a_test_that_never_left_the_cache_makes_a_pass_uncertain():
    # 112 MiB at 45 MB/s, no fall-off, stopped at the size limit: the cache may be larger.
    found = measured(log((112 * MiB, 45 * MB)))
    assert found.cache_bytes is None and found.cache_exceeded is False
    assert found.stopped_by == STOPPED_SIZE_LIMIT and found.written_bytes == 112 * MiB
    grades = grades_for(found)
    u3 = grades["U3"]
    assert u3.checks[0].verdict is Verdict.PASS  # the figure itself is above 30 MB/s
    assert u3.verdict is Verdict.UNCERTAIN and u3.passed is False
    assert "may still be the burst" in u3.verdict_reason and "112 MiB" in u3.verdict_reason


def test_a_test_that_never_left_the_cache_still_fails_below_the_class():
    # Writing after a cache is no faster than into it: below the class is a fail regardless.
    found = measured(log((112 * MiB, 8 * MB)))
    assert found.cache_exceeded is False
    assert grades_for(found)["U1"].verdict is Verdict.FAIL


def test_a_steady_rate_without_a_fall_off_is_graded_as_a_device_without_a_cache():
    found = measured(log((64 * MiB, 45 * MB)), steady=True, limit=1 << 30)
    assert found.stopped_by == STOPPED_STEADY and found.cache_exceeded is None
    assert grades_for(found)["U3"].verdict is Verdict.PASS


def run_with(found):
    run = saved_run()
    tests = (*run.tests, with_sustained(found))
    return dataclasses.replace(run, tests=tests, grades=grade_results(tests))


def test_sub_units_and_the_busy_check_survive_saving_and_reading():
    found = measured(log((32 * MiB, 60 * MB), (64 * MiB, 20 * MB)))
    run = run_with(found)
    document = json.loads(json.dumps(run_to_document(run)))
    saved = document["tests"][-1]["write"]["sustained"]
    assert saved["stopped_by"] == "size limit" and saved["cache_exceeded"] is True
    assert saved["sub_units"]["busy_limit_ms"] == 250.0
    assert document["grades"]["U1"]["checks"][1]["at_most"] is True
    assert document["grades"]["U1"]["checks"][0]["at_most"] is False
    read_back = document_to_run(document)
    assert read_back.tests[-1].write is not None
    assert read_back.tests[-1].write.sustained == found
    assert read_back.grades == run.grades


def test_the_reports_say_which_rate_was_graded_and_when_the_cache_was_not_exceeded():
    cliff = run_with(measured(log((32 * MiB, 60 * MB), (64 * MiB, 20 * MB))))
    text = sustained_text(cliff)
    assert text is not None and text.startswith("write cache 32")
    assert "slowest 4 MiB sub-unit of 512 KiB writes after the cache 20.0 MB/s" in text
    assert f"sustained-write: {text}" in WRITERS.markdown([cliff])
    never = run_with(measured(log((112 * MiB, 45 * MB))))
    text = sustained_text(never)
    assert text is not None
    rate = format_rate(45 * MB)
    assert text.startswith(
        f"write cache not exceeded: the write speed never dropped, {rate} throughout the "
        "112 MiB written, so the cache may be larger than that"
    )
    assert "may still be the burst rate, not the speed the card keeps up" in text
    assert "uncertain (the write speed never dropped in the 112 MiB" in WRITERS.markdown([never])
    page = render_html_report([never])
    assert "sustained-write: write cache not exceeded: the write speed never dropped" in page
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(WRITERS.terminal(cliff))
    assert "slowest 4 MiB sub-unit of 512 KiB writes after the cache" in console.export_text()


def test_a_pass_too_short_for_a_whole_sub_unit_after_the_cache_has_none():
    completions = log((8 * MiB, 50 * MB))
    assert sub_unit_rates(completions, 8 * MiB) is None


def test_one_fast_first_write_is_no_cache():
    # A buffered first write (recorded: 1 GB/s, then 60 MB/s) is not a cache that was left.
    completions = [Completion(0.5, BLOCK), *log((64 * MiB, 60 * MB))]
    completions = [Completion(c.time_ms + 0.5, c.bytes) for c in completions]
    found = measured(completions)
    assert found.cache_bytes is None and found.cache_exceeded is False


def with_latencies(completions, stalls=()):
    """fio's latency log for `completions` (made by `log`): each write's time from its issue
    to its completion; `stalls` are (write number, ms) the host waited before issuing it, in
    which the card sat idle (its completion and all later ones move on by as much)."""
    extra = dict(stalls)
    shifted, latencies, delay, previous = [], [], 0.0, 0.0
    for number, completion in enumerate(completions):
        delay += extra.get(number, 0.0)
        time_ms = completion.time_ms + delay
        shifted.append(Completion(int(time_ms) + 0.5, completion.bytes))
        latencies.append(round((completion.time_ms - previous) * 1e6))
        previous = completion.time_ms
    return shifted, latencies


def test_a_stalled_host_is_not_the_cards_time_but_a_card_pause_is():
    # 20 MB/s after a 16 MiB cache; the host stalls 120 ms before one write (the card idles),
    # and the card pauses 60 ms inside another write (garbage collection, in its latency).
    card_pause = (16 * MiB + 30 * SUB_UNIT_BYTES) // BLOCK + 2
    completions = log((16 * MiB, 60 * MB), (240 * MiB, 20 * MB), pauses=[(card_pause, 60.0)])
    stalled = (16 * MiB + 10 * SUB_UNIT_BYTES) // BLOCK + 5
    shifted, latencies = with_latencies(completions, stalls=[(stalled, 120.0)])
    written = sum(c.bytes for c in shifted)
    without = sustained_write(shifted, steady=False, size_limit_bytes=written)
    found = sustained_write(shifted, steady=False, size_limit_bytes=written, latencies_ns=latencies)
    assert without is not None and found is not None
    assert without.sub_units is not None and found.sub_units is not None
    # Without the latency log the stall counts against the card: its sub-unit is the slowest.
    stall_rate = SUB_UNIT_BYTES / (SUB_UNIT_BYTES / (20 * MB) + 0.120)
    assert without.sub_units.min_bw_bytes == pytest.approx(stall_rate, rel=0.01)
    # With it, the stall is left out and the card's own pause decides.
    pause_rate = SUB_UNIT_BYTES / (SUB_UNIT_BYTES / (20 * MB) + 0.060)
    assert found.sub_units.min_bw_bytes == pytest.approx(pause_rate, rel=0.01)
    assert found.sub_units.max_busy_ms == pytest.approx(BLOCK / (20 * MB) * 1000 + 60, abs=1.0)
    low, high = found.sub_units.max_busy_bounds  # from the second longest to the longest
    assert high == found.sub_units.max_busy_ms  # logged in ns: exact
    assert low == pytest.approx(BLOCK / (20 * MB) * 1000, abs=1.0)
    assert "latency log" in found.sub_units.method


def test_a_single_sub_unit_after_the_cache_never_fails_a_card():
    # 16 MiB cache, then one whole sub-unit at 8 MB/s: below U1, but one sub-unit alone.
    found = measured(log((16 * MiB, 60 * MB), (8 * MiB + BLOCK, 8 * MB)))
    assert found.sub_units is not None and found.sub_units.count == 1
    assert grades_for(found)["U1"].verdict is Verdict.UNCERTAIN
