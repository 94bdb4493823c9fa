"""A first window extended by further windows of the same test, pooled (flashmark.lengths
`next_extension_s`, flashmark.fio.parse `parse_extended_output`): on three real seq-read windows
recorded in a row (tests/data/fio/extended-windows/scenario.txt) and on the extension rule."""

from __future__ import annotations

import dataclasses
import math

import pytest

from flashmark.fio.jobs import job_for_test
from flashmark.fio.parse import parse_extended_output, parse_test_output
from flashmark.fio.runner import ReplayRunner
from flashmark.lengths import (
    EXTENSION_EDGE_PCT,
    FIRST_WINDOW_S,
    TARGET_HALF_WIDTH_PCT,
    full_length,
    next_extension_s,
)
from flashmark.model import DirectionResult, LatencyNs, Settings, TestResult
from flashmark.profiles import SEQ_READ
from flashmark.stats import MeanInterval

SETTINGS = Settings(
    profile="quick",
    size_bytes=128 * 2**20,
    runtime_s=8,
    ramp_s=2,
    follow_ramp_s=1,
    direct=True,
    destructive=False,
)
WINDOWS = ((3, 0), (3, 1), (2, 2))  # (seconds, extension) as recorded


def recorded_runs(recordings):
    replay = ReplayRunner(recordings / "extended-windows")
    runs = []
    for window_s, extension in WINDOWS:
        job = job_for_test(
            SEQ_READ,
            SETTINGS,
            "t.tmp",
            readonly=False,
            log_folder="/replayed",
            window_s=window_s,
            ramp_s=SETTINGS.ramp_s if extension == 0 else SETTINGS.follow_ramp_s,
            extension=extension,
        )
        runs.append((job, replay.run(job)))
    return runs


def test_one_window_pooled_is_that_window(recordings):
    (job, output), *_ = recorded_runs(recordings)
    assert parse_extended_output(SEQ_READ, [(job, output)]) == parse_test_output(
        SEQ_READ, job, output
    )


def test_windows_pool_into_their_bytes_over_their_time(recordings):
    runs = recorded_runs(recordings)
    assert [job.name for job, _ in runs] == ["seq-read", "seq-read-more1", "seq-read-more2"]
    alone = [parse_test_output(SEQ_READ, job, output).read for job, output in runs]
    pooled = parse_extended_output(SEQ_READ, runs)
    read = pooled.read
    assert read is not None and pooled.write is None
    assert all(a is not None for a in alone)
    windows = [a for a in alone if a is not None]
    assert read.runtime_ms == sum(w.runtime_ms for w in windows) == 8000
    assert read.io_bytes == sum(w.io_bytes for w in windows)
    assert read.total_ios == sum(w.total_ios for w in windows)
    assert read.fio_runtime_ms == sum(w.fio_runtime_ms for w in windows)
    # Each window's exact rate weighted by its length: all their bytes over all their time.
    weighted = sum(w.bw_bytes * w.runtime_ms for w in windows) / read.runtime_ms
    assert read.bw_bytes == pytest.approx(weighted, rel=1e-12)
    assert read.bw_bytes == pytest.approx(40e6, rel=0.015)  # the card's cap, edges and all
    # The interval rests on every window's rates and is widened by what their edges may be
    # off by, weighted alike: an edge does not shrink as windows are added.
    interval = read.bw_ci95
    assert interval is not None
    assert interval.samples == sum(w.bw_ci95.samples for w in windows if w.bw_ci95) == 8
    edge = sum(w.bw_ci95.edge * w.runtime_ms for w in windows if w.bw_ci95) / read.runtime_ms
    assert interval.edge == pytest.approx(edge, rel=1e-9)
    assert interval.low < read.bw_bytes < interval.high
    # The per-second rates of all three, in order.
    assert read.bw_per_second is not None
    assert read.bw_per_second.samples_bps == tuple(
        x for w in windows if w.bw_per_second for x in w.bw_per_second.samples_bps
    )
    # Latency: extremes and the mean of every I/O; percentiles of the window with the most.
    assert read.lat_ns.min == min(w.lat_ns.min for w in windows)
    assert read.lat_ns.max == max(w.lat_ns.max for w in windows)
    ios = [w.total_ios for w in windows]
    mean = sum(w.lat_ns.mean * n for w, n in zip(windows, ios, strict=True)) / sum(ios)
    assert read.lat_ns.mean == pytest.approx(mean, rel=1e-12)
    busiest = max(windows, key=lambda w: w.total_ios)
    assert read.lat_ns.p99 == busiest.lat_ns.p99
    assert read.lat_ns.stddev >= min(w.lat_ns.stddev for w in windows)
    # The job file says what was pooled; the time is every run's.
    assert pooled.job_file.count("[seq-read") == 3
    assert "pooled with the window above" in pooled.job_file
    assert pooled.elapsed_s == pytest.approx(sum(output.elapsed_s for _, output in runs))


def direction(half_width_pct: float, edge_pct: float, iops: float = 1000.0) -> DirectionResult:
    mean = iops * 4096
    half, edge = mean * half_width_pct / 100, mean * edge_pct / 100
    latency = LatencyNs(1, 2, 3, 1, 2, 2, 3, 3, 3)
    return DirectionResult(
        iops=iops,
        bw_bytes=mean,
        io_bytes=int(mean * 3),
        total_ios=int(iops * 3),
        runtime_ms=3000,
        fio_runtime_ms=3000,
        lat_ns=latency,
        bw_per_second=None,
        bw_ci95=MeanInterval(mean, mean - half, mean + half, 3, 3.0, edge=edge),
    )


def result(read: DirectionResult) -> TestResult:
    return TestResult(spec=SEQ_READ, read=read, write=None, job_file="", elapsed_s=4.0)


def test_a_first_window_wide_by_its_spread_is_extended():
    wide = result(direction(half_width_pct=2.5, edge_pct=0.2))
    longer = full_length(wide, 8)
    assert longer is not None and longer.extendable and not longer.bursty
    # As long as a first window each time, up to the profile's runtime in all, while too wide.
    assert next_extension_s(wide, 8, FIRST_WINDOW_S) == 3
    assert next_extension_s(wide, 8, 6) == 2
    assert next_extension_s(wide, 8, 8) is None
    assert next_extension_s(wide, 10, 9) == 1
    narrow = result(direction(half_width_pct=0.8, edge_pct=0.2))
    assert next_extension_s(narrow, 8, 6) is None


def test_a_first_window_wide_at_its_edges_runs_again_at_full_length():
    # Edges more than half the target: pooled windows keep their edges (see the recording).
    edges = result(direction(half_width_pct=1.5, edge_pct=EXTENSION_EDGE_PCT + 0.1))
    longer = full_length(edges, 8)
    assert longer is not None and not longer.extendable and not longer.bursty
    bursty = result(direction(half_width_pct=2.0, edge_pct=TARGET_HALF_WIDTH_PCT + 0.1))
    longer = full_length(bursty, 8)
    assert longer is not None and longer.bursty and not longer.extendable


def test_too_few_transfers_run_again_for_as_long_as_they_need():
    # 16 MiB at 4 transfers a second: 12 in 3 s, fewer than 20; one run of the needed length.
    slow = direction(half_width_pct=2.0, edge_pct=0.1, iops=4.0)
    slow = dataclasses.replace(slow, bw_bytes=4 * 16 * 2**20)
    longer = full_length(result(slow), 8)
    assert longer is not None and not longer.extendable
    assert longer.window_s == max(8, math.ceil(20 / 4) + 1)
