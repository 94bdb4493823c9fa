"""flashmark.bench.benchmark as a library: the pipeline the CLI, scans and the results service
share."""

from __future__ import annotations

from pathlib import Path

import pytest

import flashmark.bench.benchmark
from flashmark.bench.benchmark import BenchmarkRequest, plan_benchmark, run_benchmark
from flashmark.bench.model import TargetKind
from flashmark.bench.results import BATCH_MS
from flashmark.errors import ExitStatus, Interrupted
from flashmark.fio.runner import ReplayRunner
from flashmark.system.sysroot import SystemRoots


def test_one_call_measures_grades_and_removes_its_test_file(tmp_path: Path, recordings: Path):
    # The default quick profile as recorded on a busy host, on a card exactly at the A1
    # thresholds (1500/500 IOPS, 10 MB/s): seq-write at full length, the preparation of what it
    # did not write, seq-read's 3 s first window, kept though its interval was wider than +-1%
    # (the throttled card passes its 1 MiB reads 3 or 4 to a 100 ms grant): no class reads it,
    # and quick exists to grade (its recorded run again for 8 s is not replayed). The graded
    # tests stop on their verdicts: rand-read-4k and rand-write-4k cannot be
    # decided at the thresholds and run to 8 s in 3 windows; rand-read-4k-q32 is decided below
    # A2's 4000 at its first window; rand-write-4k-q32, decided too, is extended once to its
    # floor of 8 MiB written (tests/data/fio/quick-a1-card-adaptive/scenario.txt).
    runner = ReplayRunner(recordings / "quick-a1-card-adaptive")
    run = run_benchmark(BenchmarkRequest(str(tmp_path)), runner)
    assert [t.spec.name for t in run.tests][:2] == ["seq-write", "seq-read"]
    assert {grade.name: grade.passed for grade in run.grades}["A2"] is False
    assert {grade.name: grade.verdict.value for grade in run.grades if grade.verdict}["A1"] in (
        "pass",
        "uncertain",
    )  # never "fail" at the thresholds
    assert list(tmp_path.iterdir()) == []
    assert [job.name for job in runner.jobs_run] == [
        "seq-write",
        "prepare",
        "seq-read",
        "rand-read-4k",
        "rand-read-4k-more1",
        "rand-read-4k-more2",
        "rand-read-4k-q32",
        "rand-write-4k",
        "rand-write-4k-more1",
        "rand-write-4k-more2",
        "rand-write-4k-q32",
        "rand-write-4k-q32-more1",
    ]
    assert "prepare: write the test area from byte" in runner.jobs_run[1].text
    # Extensions as long as a first window, the last one shortened to the cap, after the follow
    # ramp.
    assert [(job.window_s, job.ramp_s) for job in runner.jobs_run[3:6]] == [
        (3.0, 1),
        (3.0, 1),
        (2.0, 1),
    ]
    lengthened = [t.lengthened or "" for t in run.tests]
    for index in (2, 4):
        assert lengthened[index].startswith("its first window was not enough: undecided: ")
        assert "straddles" in lengthened[index]
        assert lengthened[index].endswith("extended to 8 s in 3 windows, pooled")
    assert "less than 8 MiB, the floor of a write test" in lengthened[5]
    assert lengthened[5].endswith("extended to 6 s in 2 windows, pooled")
    assert lengthened[0] == lengthened[1] == lengthened[3] == ""
    # Every second the tests took is in the result: the pooled windows as elapsed (fio's whole
    # seconds, as recorded), nothing discarded.
    assert [t.discarded_s for t in run.tests] == [0.0] * 6
    assert [t.elapsed_s for t in run.tests][1::4] == [6.0, 9.0]
    directions = [t.read or t.write for t in run.tests]
    assert [d.runtime_ms if d else None for d in directions] == [8000, 3000, 8000, 3000, 8000, 6000]
    for name, direction in zip([t.spec.name for t in run.tests], directions, strict=True):
        assert direction is not None and direction.bw_ci95 is not None
        # Graded tests: a decision interval at 99.5%, anytime-valid where the test may stop
        # on it (not seq-write, measured at its full length at once); seq-read: fixed-length.
        graded = name != "seq-read"
        assert (direction.bw_decision is not None) is graded
        assert direction.bw_decision is None or direction.bw_decision.confidence == 0.995
        stops = graded and name != "seq-write"
        assert ("confidence sequence" in direction.bw_ci95.method) is stops
    assert "whole bursts" in (
        directions[4].bw_ci95.method if directions[4] and directions[4].bw_ci95 else ""
    )
    # The pooled test: both windows' transfers, and the rate of their bytes over their time.
    pooled = directions[5]
    assert pooled is not None and pooled.bw_ci95 is not None
    assert pooled.bw_ci95.samples == 6000 // BATCH_MS
    assert pooled.accepted_iops == pytest.approx(500, rel=0.01)
    # The jobs that ran are the plan's jobs, built once: the first windows and the preparation
    # as planned.
    plan = plan_benchmark(BenchmarkRequest(str(tmp_path)), SystemRoots(), runner.log_folder)
    planned = [job.name for job in plan.all_jobs]
    assert planned == [
        "seq-write",
        "prepare",
        "seq-read",
        "rand-read-4k",
        "rand-read-4k-q32",
        "rand-write-4k",
        "rand-write-4k-q32",
    ]
    assert [job.window_s for job in plan.jobs] == [8.0, 3.0, 3.0, 3.0, 3.0, 3.0]


def test_the_plan_names_every_job_and_touches_nothing(tmp_path: Path):
    plan = plan_benchmark(
        BenchmarkRequest(str(tmp_path), profile="a1", size_bytes=3 * 2**20 + 5),
        SystemRoots(),
        "/work",
        probe=False,
    )
    assert plan.target.kind is TargetKind.FILE
    assert plan.prepare_job is not None and len(plan.jobs) == len(plan.tests)
    assert plan.area_note is not None and "rounded down" in plan.area_note
    assert all(f"filename={plan.target.test_file}\n" in job.text for job in plan.all_jobs)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("ramp_s", "expected"), [(None, [2, 2, 0, 1, 0]), (0, [0] * 5), (7, [7] * 5)]
)
def test_the_ramp_asked_for_is_the_plans_and_every_timed_jobs(tmp_path: Path, ramp_s, expected):
    """None takes the profile's default (a1: 2 s) before seq-write and the test after the
    preparation, 1 s after a timed test and none after the same I/O at another depth (plan.py);
    0 is a ramp of 0, not a missing value;
    a ramp given is every timed test's."""
    request = BenchmarkRequest(str(tmp_path), profile="a1", runtime_s=3, ramp_s=ramp_s)
    plan = plan_benchmark(request, SystemRoots(), "/work", probe=False)
    assert plan.settings.ramp_s == expected[0]
    assert [job.ramp_s for job in plan.jobs] == expected
    assert all(f"ramp_time={job.ramp_s}\n" in job.text for job in plan.jobs)
    assert plan.expected_seconds() == sum(3 + ramp for ramp in expected)


def test_a_signal_during_the_probe_stops_the_run(tmp_path: Path, monkeypatch):
    def interrupted(*args: object, **kwargs: object) -> None:
        raise Interrupted("SIGINT", ExitStatus.INTERRUPTED)

    monkeypatch.setattr(flashmark.bench.benchmark, "probe_target", interrupted)
    with pytest.raises(Interrupted):
        plan_benchmark(BenchmarkRequest(str(tmp_path)), SystemRoots(), "/work")
