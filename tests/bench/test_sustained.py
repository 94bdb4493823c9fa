"""The sustained-write test: which profiles run it, its fio job, the cache
found in its per-I/O log, the result document, and the speed classes graded on its rate."""

import dataclasses
import json

import pytest

from flashmark.bench.document import document_to_run, run_to_document
from flashmark.bench.jobs import sustained_size_limit
from flashmark.bench.model import SustainedWrite
from flashmark.bench.profiles import SEQ_WRITE
from flashmark.bench.results import sustained_write
from flashmark.bench.sustained import SUSTAINED_SIZE_CAP_BYTES, SUSTAINED_WRITE
from flashmark.fio.window import Completion
from flashmark.stats import Verdict
from flashmark.units import MB, GiB, KiB, MiB
from tests.bench.synthetic import DEVICE, LOGS, direction, graded, plan_of, result, saved_run


def plan_for(profile_name, size_bytes=None, destructive=True):
    return plan_of(profile_name, DEVICE, size_bytes=size_bytes, destructive=destructive)


@pytest.mark.parametrize("name", ["standard", "full", "sustained"])
def test_fuller_profiles_and_the_sustained_profile_run_the_sustained_write(name):
    plan = plan_for(name)
    assert "sustained-write" in [test.name for test in plan.tests]
    job = plan.jobs[[test.name for test in plan.tests].index("sustained-write")]
    assert "rw=write\n" in job.text and f"bs={512 * KiB}\n" in job.text
    assert "steadystate=bw_slope:" in job.text and "steadystate_duration=" in job.text
    assert f"io_size={1 * GiB}\n" in job.text and "time_based" not in job.text
    assert f"write_iops_log={LOGS}/sustained-write\n" in job.text
    assert "end_fsync=1\n" in job.text


def test_the_sustained_profile_runs_only_the_sustained_write():
    assert plan_for("sustained").profile.test_names() == ("sustained-write",)


@pytest.mark.parametrize("name", ["quick", "a1"])
def test_quick_and_a1_do_not_run_it(name):
    assert "sustained-write" not in plan_for(name).profile.test_names()


def test_the_plan_prints_both_stop_rules():
    description = SUSTAINED_WRITE.description
    assert "steady for 30 s" in description and "test area (at most 8 GiB)" in description


def test_the_plan_note_gives_the_size_limit_and_the_steady_rule():
    note = plan_for("standard", size_bytes=512 * MiB).sustained_note
    assert note is not None
    assert "steady for 30 s" in note and "after 512 MiB" in note and "at most 8 GiB" in note
    assert plan_for("quick").sustained_note is None
    # The sustained write has no fixed time: only the time-based tests are counted.
    plan = plan_for("sustained")
    assert plan.expected_seconds() == 0


def test_the_size_limit_is_the_area_capped():
    settings = plan_for("sustained", size_bytes=64 * GiB).settings
    assert sustained_size_limit(settings) == SUSTAINED_SIZE_CAP_BYTES
    small = dataclasses.replace(settings, size_bytes=256 * MiB)
    assert sustained_size_limit(small) == 256 * MiB


def test_a_device_run_of_the_sustained_profile_is_not_prepared():
    # The preparation would fill the write cache that sustained-write is there to find.
    assert not plan_for("sustained").prepare
    assert plan_for("standard").prepare


def test_a_read_only_device_run_skips_it():
    plan = plan_for("sustained", destructive=False)
    assert plan.tests == () and plan.skipped == ("sustained-write",)


def test_the_cache_and_both_rates_are_found_in_the_completions():
    # 256 MiB at 60 MB/s, then 20 MB/s, in 512 KiB writes: times in whole ms as fio logs.
    block, cache = 512 * KiB, 256 * MiB
    completions, written, now_ms = [], 0, 0.0
    while written < 768 * MiB:
        rate = 60 * MB if written < cache else 20 * MB
        now_ms += block / rate * 1000
        written += block
        completions.append(Completion(int(now_ms) + 0.5, block))
    found = sustained_write(completions, steady=False, size_limit_bytes=768 * MiB)
    assert found is not None and found.cache_bytes is not None
    assert found.burst_bw_bytes is not None
    assert abs(found.cache_bytes - cache) / cache < 0.05
    assert abs(found.burst_bw_bytes - 60 * MB) / (60 * MB) < 0.02
    assert abs(found.sustained_bw_bytes - 20 * MB) / (20 * MB) < 0.02


def test_too_few_completions_say_nothing():
    assert (
        sustained_write([Completion(1.5, 512 * KiB)], steady=False, size_limit_bytes=None) is None
    )


def written(spec, bw, sustained=None):
    """`spec`'s result: 512 KiB writes at `bw` bytes per second."""
    return result(spec, direction(bw / (512 * KiB), bw, sustained=sustained))


CLIFF = SustainedWrite(cache_bytes=512 * MiB, burst_bw_bytes=80e6, sustained_bw_bytes=18e6)


def test_u3_is_graded_on_the_sustained_rate_and_says_so():
    # Burst (and the seq-write test, inside the cache) above 30 MB/s, sustained below.
    results = [written(SEQ_WRITE, 80e6), written(SUSTAINED_WRITE, 25e6, CLIFF)]
    grades = graded(results)
    for name in ("U3", "V30"):
        grade = grades[name]
        assert grade.verdict is Verdict.FAIL and grade.passed is False
        (check,) = grade.checks
        assert check.test == "sustained-write" and check.value == pytest.approx(18.0)
        assert "sustained rate" in check.name or "after the write cache" in check.name
        assert "graded on the sustained rate" in grade.note
    assert grades["U1"].verdict is Verdict.PASS and grades["C10"].verdict is Verdict.PASS
    # A1/A2's sequential check is not a speed class: it still reads seq-write.
    assert next(c for c in grades["A1"].checks if c.metric == "write_bw_bytes").test == "seq-write"


def test_without_the_sustained_write_the_speed_classes_read_seq_write():
    grades = graded([written(SEQ_WRITE, 80e6)])
    assert grades["U3"].verdict is Verdict.PASS
    assert grades["U3"].checks[0].test == "seq-write"
    assert "sustained rate" not in grades["U3"].note


def test_the_sustained_figures_survive_saving_and_reading():
    run = saved_run()
    tests = (*run.tests, written(SUSTAINED_WRITE, 25e6, CLIFF))
    document = run_to_document(dataclasses.replace(run, tests=tests))
    saved = document["tests"][-1]["write"]["sustained"]
    assert saved == {
        "cache_bytes": 512 * MiB,
        "burst_bw_bytes": 80e6,
        "sustained_bw_bytes": 18e6,
        "written_bytes": None,
        "stopped_by": None,
        "cache_exceeded": None,
        "sub_units": None,
    }
    read_back = document_to_run(json.loads(json.dumps(document)))
    assert read_back.tests[-1].write is not None
    assert read_back.tests[-1].write.sustained == CLIFF
