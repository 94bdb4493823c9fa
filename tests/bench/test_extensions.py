"""A first window extended by further windows of the same test, pooled (flashmark.bench.lengths
`extension_s`, flashmark.bench.results `pooled_result`): on three real seq-read windows
recorded in a row (tests/data/fio/extended-windows/scenario.txt) and on the extension rule."""

from __future__ import annotations

import dataclasses
import math

import pytest

from flashmark.bench.jobs import job_for_test
from flashmark.bench.lengths import (
    EXTENSION_EDGE_PCT,
    FIRST_WINDOW_S,
    TARGET_HALF_WIDTH_PCT,
    extension_s,
    full_length,
    still_settling,
)
from flashmark.bench.model import TestResult
from flashmark.bench.profiles import RAND_WRITE_4K_Q32, SEQ_READ
from flashmark.bench.results import BATCH_MS
from flashmark.fio.runner import ReplayRunner
from flashmark.stats import MeanInterval
from tests.bench import synthetic
from tests.bench.parsed import parse_extended_output, parse_test_output

SETTINGS = dataclasses.replace(synthetic.SETTINGS, follow_ramp_s=1)
WINDOWS = ((3, 0), (3, 1), (2, 2))  # (seconds, extension) as recorded


def recorded_runs(recordings, scenario, spec, windows, settings=SETTINGS):
    """The jobs of `spec`'s first window and its extensions, `windows` of (seconds, extension),
    and their outputs replayed from `scenario`."""
    replay = ReplayRunner(recordings / scenario)
    runs = []
    for window_s, extension in windows:
        ramp_s = settings.ramp_s if extension == 0 else settings.follow_ramp_s
        job = job_for_test(
            spec, settings, "t.tmp", readonly=False, log_folder="/replayed", window_s=window_s,
            ramp_s=ramp_s, extension=extension,
        )  # fmt: skip
        runs.append((job, replay.run(job)))
    return runs


def test_windows_pool_into_their_bytes_over_their_time(recordings):
    runs = recorded_runs(recordings, "extended-windows", SEQ_READ, WINDOWS)
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
    assert (
        interval.samples == sum(w.bw_ci95.samples for w in windows if w.bw_ci95) == 8000 // BATCH_MS
    )  # half-second batches
    edge = sum(w.bw_ci95.edge * w.runtime_ms for w in windows if w.bw_ci95) / read.runtime_ms
    assert interval.edge == pytest.approx(edge, rel=1e-9)
    assert (interval.low + interval.high) / 2 == pytest.approx(read.bw_bytes, rel=1e-12)
    assert interval.high - read.bw_bytes > edge
    # As recorded: each window's edges 0.9%, 1.8% and 2.7% of the rate; pooled, +-2.7%.
    assert interval.half_width_pct == pytest.approx(2.7, abs=0.1)
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
    # fio's sample standard deviation of all the I/Os, from each window's (the recordings'
    # lat_ns "N" equal their total_ios).
    squares = sum(
        (n - 1) * w.lat_ns.stddev**2 + n * (w.lat_ns.mean - mean) ** 2
        for w, n in zip(windows, ios, strict=True)
    )
    assert read.lat_ns.stddev == pytest.approx(math.sqrt(squares / (sum(ios) - 1)), rel=1e-12)
    # The job file says what was pooled; the time is every run's.
    assert pooled.job_file.count("[seq-read") == 3
    assert "pooled with the window above" in pooled.job_file
    assert pooled.elapsed_s == pytest.approx(sum(output.elapsed_s for _, output in runs))


def test_write_windows_pool_into_a_durable_rate(recordings):
    # rand-write-4k-q32 and its extension, recorded in quick-a1-card-adaptive (500 IOPS card):
    # each window's end_fsync counts, so the durable rate is all the windows' accepted I/O
    # over their time plus every fsync's.
    settings = dataclasses.replace(SETTINGS, ramp_s=1)  # both windows ramped 1 s, as recorded
    runs = recorded_runs(
        recordings, "quick-a1-card-adaptive", RAND_WRITE_4K_Q32, ((3, 0), (3, 1)), settings
    )
    windows = [parse_test_output(RAND_WRITE_4K_Q32, job, output).write for job, output in runs]
    write = parse_extended_output(RAND_WRITE_4K_Q32, runs).write
    assert write is not None and None not in windows
    alone = [w for w in windows if w is not None]
    assert all(w.fsync_ms is not None and w.accepted_iops is not None for w in alone)
    assert write.runtime_ms == 6000 and write.fsync_ms == sum(w.fsync_ms or 0 for w in alone)
    accepted = sum((w.accepted_iops or 0) * w.runtime_ms for w in alone)
    assert write.accepted_iops == pytest.approx(accepted / 6000, rel=1e-12)
    assert write.iops == pytest.approx(accepted / (6000 + write.fsync_ms), rel=1e-12)
    assert write.iops == pytest.approx(500, rel=0.01)  # the card's cap
    assert write.bw_ci95 is not None and write.iops_ci95 is not None
    assert write.bw_ci95.samples == 6000 // BATCH_MS  # half-second batches
    assert write.iops_ci95.low < write.iops < write.iops_ci95.high
    assert write.iops_ci95.high / write.iops == pytest.approx(
        write.bw_ci95.high / write.bw_bytes, rel=1e-12
    )
    # The extension waits for the window before it when its job file is run with plain fio.
    assert "stonewall" in runs[1][0].text and "stonewall" not in runs[0][0].text


def result(half_width_pct: float, edge_pct: float, iops: float = 1000.0) -> TestResult:
    """seq-read's 3 s window of 4 KiB reads at `iops`, its interval as wide as given."""
    mean = iops * 4096
    half, edge = mean * half_width_pct / 100, mean * edge_pct / 100
    read = synthetic.direction(
        iops, mean, runtime_ms=3000, io_bytes=int(mean * 3), total_ios=int(iops * 3),
        bw_ci95=MeanInterval(mean, mean - half, mean + half, 3, 3.0, edge=edge),
    )  # fmt: skip
    return synthetic.result(SEQ_READ, read, elapsed_s=4.0)


def test_a_first_window_wide_by_its_spread_is_extended():
    wide = result(half_width_pct=2.5, edge_pct=0.2)
    longer = full_length(wide, 8)
    assert longer is not None and longer.extendable and not longer.bursty
    # As long as a first window each time, up to the profile's runtime in all.
    assert extension_s(8, FIRST_WINDOW_S) == 3
    assert extension_s(8, 6) == 2
    assert extension_s(8, 8) is None
    assert extension_s(10, 9) == 1
    narrow = result(half_width_pct=0.8, edge_pct=0.2)
    assert full_length(narrow, 8) is None


def test_a_first_window_still_settling_is_left_out():
    # The next window's interval holds the first window's rate: pooled. Outside it: the first
    # window was still settling, and is left out.
    first = result(half_width_pct=2.5, edge_pct=0.2, iops=1000)
    agreeing = result(half_width_pct=1.5, edge_pct=0.1, iops=1010)
    assert still_settling(first, agreeing) is None
    settled = result(half_width_pct=0.5, edge_pct=0.1, iops=1034)
    why = still_settling(first, settled)
    assert why is not None and why.startswith("its first window's read rate, 4.10 MB/s, is ")
    assert why.endswith("the device was still settling")


def test_a_first_window_wide_at_its_edges_runs_again_at_full_length():
    # Edges more than half the target: pooled windows keep their edges (see the recording).
    edges = result(half_width_pct=1.5, edge_pct=EXTENSION_EDGE_PCT + 0.1)
    longer = full_length(edges, 8)
    assert longer is not None and not longer.extendable and not longer.bursty
    bursty = result(half_width_pct=2.0, edge_pct=TARGET_HALF_WIDTH_PCT + 0.1)
    longer = full_length(bursty, 8)
    assert longer is not None and longer.bursty and not longer.extendable


def test_too_few_transfers_run_again_for_as_long_as_they_need():
    # 16 MiB at 4 transfers a second: 12 in 3 s, fewer than 20; one run of the needed length.
    slow = result(half_width_pct=2.0, edge_pct=0.1, iops=4.0)
    assert slow.read is not None
    slow = dataclasses.replace(slow, read=dataclasses.replace(slow.read, bw_bytes=4 * 16 * 2**20))
    longer = full_length(slow, 8)
    assert longer is not None and not longer.extendable
    assert longer.window_s == max(8, math.ceil(20 / 4) + 1)
