"""Each timed test's ramp (plan.py): the profile's for the run's first test, the first after the
preparation and the first after the sustained write; FOLLOW_RAMP_S for a test right after
another timed test or its own first window; none for a test right after the same I/O at another
depth; --ramp for every test. And the saved setting."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from flashmark.bench.document import document_to_run, run_to_document
from flashmark.bench.plan import DEPTH_CHANGE_RAMP_S, FOLLOW_RAMP_S, Plan, follows_at_another_depth
from flashmark.bench.render.cells import lengths_text
from flashmark.bench.sustained import SUSTAINED_WRITE_NAME
from tests.bench.synthetic import DEVICE, folder_target, plan_of, saved_run


def plan_for(profile: str, tmp_path: Path, *, ramp_s: int | None = None) -> Plan:
    return plan_of(profile, folder_target(tmp_path), ramp_s=ramp_s)


def ramps(plan: Plan) -> list[int]:
    return [job.ramp_s for job in plan.jobs]


def test_the_follow_ramp_is_one_second():
    assert FOLLOW_RAMP_S == 1


def test_quick_ramps_fully_before_seq_write_and_after_the_preparation_then_one_second(tmp_path):
    plan = plan_for("quick", tmp_path)
    assert (plan.settings.ramp_s, plan.settings.follow_ramp_s) == (2, 1)
    assert plan.prepare_after == 1
    # Each depth-32 test right after its depth-1 test, without a ramp.
    assert [spec.name for spec in plan.tests][2:] == [
        "rand-read-4k",
        "rand-read-4k-q32",
        "rand-write-4k",
        "rand-write-4k-q32",
    ]
    assert DEPTH_CHANGE_RAMP_S == 0
    assert ramps(plan) == [2, 2, 1, 0, 1, 0]
    assert [f"ramp_time={job.ramp_s}\n" in job.text for job in plan.jobs] == [True] * 6
    assert [job.expected_s for job in plan.jobs] == [10.0, 5.0, 4.0, 3.0, 4.0, 3.0]
    assert plan.expected_seconds() == 10 + 5 + 2 * 4 + 2 * 3
    assert "5 tests x 5 s (4 s after a timed test, 3 s after the same I/O at another depth; " in (
        plan.describe()
    )


def test_a1_has_no_seq_read_so_the_test_after_the_preparation_ramps_fully(tmp_path):
    plan = plan_for("a1", tmp_path)
    assert [job.name for job in plan.all_jobs][:3] == ["seq-write", "prepare", "rand-read-4k"]
    assert ramps(plan) == [2, 2, 0, 1, 0]


def test_a_preparation_with_nothing_left_to_write_leaves_the_next_test_the_follow_ramp(tmp_path):
    plan = plan_for("a1", tmp_path)
    after = plan.without_preparation_ramp()
    assert ramps(after) == [2, 1, 0, 1, 0]
    assert "ramp_time=1\n" in after.jobs[1].text and after.jobs[1].expected_s == 4.0
    assert after.jobs[1].window_s == plan.jobs[1].window_s and after.jobs[1].name == "rand-read-4k"
    assert after.jobs[2:] == plan.jobs[2:] and after.without_preparation_ramp() == after
    ramped = plan_for("a1", tmp_path, ramp_s=3)
    assert ramped.without_preparation_ramp() == ramped


def test_standard_ramps_its_own_three_seconds_where_the_rule_says(tmp_path):
    plan = plan_for("standard", tmp_path)
    assert (plan.settings.ramp_s, plan.settings.follow_ramp_s) == (3, 1)
    names = [spec.name for spec in plan.tests]
    assert names[:3] == [SUSTAINED_WRITE_NAME, "seq-write", "seq-read"]
    # The sustained write has no ramp (its start is the cache) nor a window; seq-write follows
    # it, and seq-read the preparation: both ramp fully.
    assert ramps(plan) == [0, 3, 3, 1, 0, 1, 0, 1, 1, 1]
    assert plan.jobs[0].window_s is None and "\nramp_time=" not in plan.jobs[0].text


def test_the_first_timed_test_after_the_sustained_write_ramps_fully(tmp_path):
    plan = plan_for("full", tmp_path)
    after = [spec.name for spec in plan.tests].index(SUSTAINED_WRITE_NAME) + 1
    assert plan.jobs[after - 1].ramp_s == 0
    assert plan.jobs[after].ramp_s == 2 and plan.tests[after].name == "seq-write"
    # seq-read, after the preparation, ramps fully too; then one second each, but none after
    # the same I/O at another depth.
    assert plan.jobs[after + 1].ramp_s == 2
    assert all(
        job.ramp_s == (0 if spec.name.endswith("-q32") else 1)
        for spec, job in zip(plan.tests[after + 2 :], plan.jobs[after + 2 :], strict=True)
    )
    assert ramps(plan)[:4] == [0, 2, 2, 1]


def test_a_read_only_device_run_ramps_its_first_test_fully(tmp_path):
    plan = plan_of("quick", DEVICE)
    assert plan.prepare_job is None
    assert [spec.name for spec in plan.tests][:2] == ["seq-read", "rand-read-4k"]
    assert ramps(plan) == [2, 1, 0]


def test_a_ramp_asked_for_is_every_timed_tests_ramp(tmp_path):
    plan = plan_for("standard", tmp_path, ramp_s=3)
    assert plan.settings.follow_ramp_s == 3
    assert ramps(plan) == [0] + [3] * 9
    assert plan.full_length_job(4, 8).ramp_s == 3
    quick = plan_for("quick", tmp_path, ramp_s=3)
    assert ramps(quick) == [3] * 6 and "3 s per test after 3 s ramp, " in lengths_text(
        quick.settings
    )


def test_no_ramp_asked_for_is_no_ramp_anywhere(tmp_path):
    plan = plan_for("quick", tmp_path, ramp_s=0)
    assert (plan.settings.ramp_s, plan.settings.follow_ramp_s) == (0, 0)
    assert ramps(plan) == [0] * 6
    assert all("ramp_time=0\n" in job.text for job in plan.jobs)
    again = plan.full_length_job(2, 8)
    assert again.ramp_s == 0 and "ramp_time=0\n" in again.text


def test_a_test_measured_again_follows_its_own_first_window(tmp_path):
    plan = plan_for("quick", tmp_path)
    # seq-read ramps fully after the preparation; run again at once after it, one second.
    again = plan.full_length_job(1, 8)
    assert again.name == "seq-read-full" and again.ramp_s == FOLLOW_RAMP_S
    assert "ramp_time=1\n" in again.text and again.expected_s == 9.0
    # Measured at full length at once, in place of its first window: that window's ramp.
    at_once = plan.full_length_job(1, 8, after_first_window=False)
    assert at_once.ramp_s == 2 and "ramp_time=2\n" in at_once.text
    assert plan.full_length_job(4, 8, after_first_window=False).ramp_s == 1
    # rand-read-4k-q32, after rand-read-4k, had none; measured again after its first window,
    # the follow ramp.
    assert plan.full_length_job(3, 8, after_first_window=False).ramp_s == 0
    assert plan.full_length_job(3, 8).ramp_s == FOLLOW_RAMP_S


def test_the_lengths_text_names_both_ramps(tmp_path):
    plan = plan_for("quick", tmp_path)
    assert lengths_text(plan.settings) == (
        "3 s per test after 2 s ramp (1 s after a timed test), up to 8 s where 3 s were not enough"
    )
    assert lengths_text(plan.settings, plan.tests) == (
        "3 s per test after 2 s ramp (1 s after a timed test, 0 s after the same I/O at another "
        "depth), up to 8 s where 3 s were not enough"
    )


def test_a_run_in_the_order_saved_before_the_depth_pairs_names_no_depth_ramp():
    """Runs saved before the depth-32 tests followed their depth-1 ones ramped 1 s there: their
    order says so, since no test of theirs follows the same I/O at another depth."""
    run = saved_run()
    names = [test.spec.name for test in run.tests]
    assert names.index("rand-write-4k") + 1 == names.index("rand-read-4k-q32")
    assert not follows_at_another_depth([test.spec for test in run.tests])
    ramped = dataclasses.replace(run.settings, ramp_s=2, follow_ramp_s=1)
    assert "another depth" not in lengths_text(ramped, [test.spec for test in run.tests])


def test_the_follow_ramp_is_saved_and_read_back():
    run = saved_run()
    settings = dataclasses.replace(run.settings, ramp_s=2, follow_ramp_s=1)
    document = json.loads(json.dumps(run_to_document(dataclasses.replace(run, settings=settings))))
    assert (document["settings"]["ramp_s"], document["settings"]["follow_ramp_s"]) == (2, 1)
    assert document_to_run(document).settings == settings
