"""The leading seq-write of a profile that grades ends once it has written the test area
(bench/jobs.py `until_written`), replayed from real fio runs on throttled cards
(tests/data/fio/a1-until-written, a1-seq-write-again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flashmark.bench.benchmark import BenchmarkRequest, run_benchmark
from flashmark.fio.runner import ReplayRunner


def test_a_seq_write_that_writes_the_area_after_its_ramp_ends_there(
    tmp_path: Path, recordings: Path
) -> None:
    # 20 MB/s: the 128 MiB area takes about 6.7 s, the ramp's 2 s included.
    runner = ReplayRunner(recordings / "a1-until-written")
    run = run_benchmark(BenchmarkRequest(str(tmp_path), profile="a1"), runner)
    names = [job.name for job in runner.jobs_run]
    # Nothing measured again, and nothing left for the preparation to write.
    assert names[0] == "seq-write" and "seq-write-again" not in names and "prepare" not in names
    seq_write = run.tests[0]
    write = seq_write.write
    assert seq_write.lengthened is None and write is not None
    assert 3000 <= write.runtime_ms < 8000
    # The window ends at the last write: the end_fsync is in the durable rate once.
    assert write.fsync_ms is not None
    assert write.runtime_ms + write.fsync_ms == pytest.approx(write.fio_runtime_ms, abs=2)
    assert write.accepted_bw_bytes is not None
    durable = write.accepted_bw_bytes * write.runtime_ms / (write.runtime_ms + write.fsync_ms)
    assert write.bw_bytes == pytest.approx(durable, rel=1e-6)
    assert write.accepted_bw_bytes == pytest.approx(20e6, rel=0.05)
    assert {grade.name: grade.passed for grade in run.grades}["U1"] is True


def test_a_seq_write_that_fills_its_area_too_soon_is_measured_again(
    tmp_path: Path, recordings: Path
) -> None:
    # 59 MB/s: the area is written within about 2.3 s, less than a 3 s window after the ramp.
    runner = ReplayRunner(recordings / "a1-seq-write-again")
    run = run_benchmark(BenchmarkRequest(str(tmp_path), profile="a1"), runner)
    names = [job.name for job in runner.jobs_run]
    assert names[:2] == ["seq-write", "seq-write-again"] and "prepare" not in names
    assert "measured again for 3 s: its first window was too short" in runner.jobs_run[1].text
    seq_write = run.tests[0]
    assert seq_write.lengthened is not None
    assert seq_write.lengthened.startswith("it wrote the 128 MiB area ")
    assert seq_write.lengthened.endswith(", too short a window")
    assert seq_write.discarded_s > 0
    assert seq_write.write is not None and seq_write.write.runtime_ms == 3000
    verdicts = {grade.name: grade.verdict.value for grade in run.grades if grade.verdict}
    assert verdicts["U3"] == "pass"
