"""A test whose transfers could not fill a first window measures its length at once, from the
rate the run measured before it (flashmark.bench.measure with flashmark.bench.lengths), on a
recorded run: seq-read and rand-read-16M of the full profile on a 40 MB/s throttled card
(tests/data/fio/large-blocks-at-once/scenario.txt). The live run on the same card is
tests/bench/test_adaptive_lengths.py, which asserts the rule for whatever its host made
seq-read's first window; here the outcome cannot vary."""

from __future__ import annotations

from pathlib import Path

import pytest

from flashmark.bench.measure import measure
from flashmark.fio.runner import ReplayRunner
from tests.bench.synthetic import large_blocks_plan

MiB = 2**20


def test_rand_read_16m_measures_its_length_at_once_from_seq_reads_rate(
    tmp_path: Path, recordings: Path
):
    runner = ReplayRunner(recordings / "large-blocks-at-once")
    seq_read, large = measure(large_blocks_plan(str(tmp_path), runner.log_folder), runner).tests
    # seq-read's first window (+-1.9% on the busy host it was recorded on) was not enough: it
    # ran again for the profile's 4 s, and its 3 s were discarded.
    assert [job.name for job in runner.jobs_run] == [
        "prepare",
        "seq-read",
        "seq-read-full",
        "rand-read-16M-full",
    ]
    assert seq_read.lengthened == (
        "its first window was not enough: read interval +-1.9% (wider than +-1%)"
    )
    assert seq_read.read is not None and seq_read.read.runtime_ms == 4000
    assert seq_read.discarded_s == 6.0
    # 16 MiB at seq-read's 38.7 MB/s: 2.3 a second, 7 in a 3 s first window; 20 take 9 s, one
    # more for a transfer cut at an edge: 10 s, longer than the profile's 4, at once.
    assert seq_read.read.bw_bytes == pytest.approx(38.7e6, rel=1e-3)
    assert runner.jobs_run[-1].window_s == 10
    assert large.lengthened == (
        "measured at full length at once: at most 7 reads would fit in its first window at the "
        "fastest read rate so far (38.7 MB/s; fewer than 20)"
    )
    assert large.read is not None and large.read.runtime_ms == 10_000
    assert large.discarded_s == 0.0
    assert large.read.runtime_ms / 1000 * large.read.iops >= 20
