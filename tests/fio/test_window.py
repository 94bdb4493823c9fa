"""Counting the measuring window from per-I/O completions (flashmark.fio.window), on synthetic
completion streams whose true rate is known exactly."""

import pytest

from flashmark.fio.window import Completion, count_window

MiB = 2**20


def steady(spacing_ms, size, *, first_ms, until_ms):
    """A device completing one `size` transfer every `spacing_ms`, first at `first_ms`."""
    times = []
    t = first_ms
    while t <= until_ms:
        times.append(t)
        t += spacing_ms
    return [Completion(t, size) for t in times]


@pytest.mark.parametrize("phase_ms", [1.0, 250.0, 499.0, 731.0, 999.0])
def test_one_transfer_per_second_is_exact_whatever_the_phase(phase_ms):
    # 1.05 s per 16 MiB transfer: counting whole transfers in 8 s gives 7 or 8 (-12.5%..+0%).
    completions = steady(1050, 16 * MiB, first_ms=phase_ms, until_ms=9000)
    count = count_window(completions, 8000, 1000)
    truth = 16 * MiB * 1000 / 1050
    assert count.bw_bytes == pytest.approx(truth, rel=1e-9)
    assert count.iops == pytest.approx(1000 / 1050, rel=1e-9)


def test_the_transfer_straddling_the_end_counts_for_its_part_inside_the_window():
    # Completions at 0.5, 1.5, ... 7.5 s, and 8.5 s (drained after the window): the last spans
    # 7.5..8.5 s, half of it inside.
    completions = steady(1000, MiB, first_ms=500, until_ms=8500)
    count = count_window(completions, 8000, 1000)
    assert count.ios == pytest.approx(8.0)
    assert count.last_completion_ms == 8500


def test_per_second_samples_partition_the_window():
    completions = steady(300, MiB, first_ms=120, until_ms=8400)
    count = count_window(completions, 8000, 1000)
    assert len(count.interval_bytes) == 8
    assert sum(count.interval_bytes) == pytest.approx(count.bytes)
    for sample in count.interval_rates_bps:
        assert sample == pytest.approx(MiB * 1000 / 300, rel=1e-9)


def test_a_pause_inside_the_window_lowers_only_its_seconds():
    # 10 transfers/s, then nothing from 3.0 to 5.0 s (garbage collection), then 10/s again.
    before = steady(100, MiB, first_ms=50, until_ms=2950)
    after = steady(100, MiB, first_ms=5050, until_ms=8050)
    count = count_window(before + after, 8000, 1000)
    # The first transfer spans a median spacing (100 ms), half of it in the window; the one
    # completing at 5.05 s spans the pause (2.95..5.05 s); the last is drained, half inside.
    assert count.ios == pytest.approx(0.5 + 29 + 1 + 29 + 0.5)
    rates = count.interval_rates_bps
    assert rates[0] == pytest.approx(10 * MiB) and rates[7] == pytest.approx(10 * MiB)
    assert rates[3] < 1 * MiB and rates[4] < 1 * MiB


def test_a_stall_in_a_stream_of_completions_lowers_only_its_second():
    # 2000 writes/s logged to the millisecond (two per millisecond, so no quiet between them),
    # a 250 ms stall at 1.2 s, and the stream past the window's close (fio's drain): the stall
    # is the first I/O's after it, not spread over the 1.8 s of the stream that follows.
    def stream(from_ms, until_ms):
        return [Completion(float(int(from_ms + k * 0.5)), 4096)
                for k in range(int((until_ms - from_ms) * 2))]  # fmt: skip

    count = count_window(stream(0, 1200) + stream(1450, 3100), 3000, 1000)
    full = 2000 * 4096
    rates = count.interval_rates_bps
    assert rates[0] == pytest.approx(full, rel=0.01)
    assert rates[1] == pytest.approx(0.75 * full, rel=0.01)
    assert rates[2] == pytest.approx(full, rel=0.01)
    assert count.bw_bytes == pytest.approx(2750 / 3000 * full, rel=0.01)


def test_same_millisecond_completions_count_whole():
    # A fast device: many completions logged in the same millisecond.
    completions = [Completion(t + 0.5, 4096) for t in range(0, 8010) for _ in range(3)]
    count = count_window(completions, 8000, 1000)
    assert count.iops == pytest.approx(3000, rel=1e-3)


def test_no_completions_is_a_zero_rate_not_a_crash():
    count = count_window([], 8000, 1000)
    assert count.bw_bytes == 0 and count.interval_bytes == (0.0,) * 8
    assert count.last_completion_ms is None


def test_a_burst_at_the_window_start_loses_at_most_the_queue_depth_to_the_ramp():
    # The block throttle's way: 150 I/Os completing together every 100 ms, at queue depth 32,
    # the window opening in a burst: only the 32 in flight then can belong to the ramp.
    bursts = [Completion(t + 0.5, 4096) for t in range(0, 8001, 100) for _ in range(150)]
    count = count_window(bursts[:-150] + bursts[-150:][:32], 8000, 1000, iodepth=32)
    assert count.iops == pytest.approx(1500, rel=1e-3)


def test_a_window_shorter_than_a_second_is_one_sample():
    count = count_window(steady(100, 4096, first_ms=50, until_ms=700), 600, 1000)
    assert len(count.interval_bytes) == 1 and count.interval_ms == 600


def test_without_a_ramp_the_first_transfer_was_issued_in_the_window_and_counts_whole():
    # A card answering its first write from its cache in 10 ms, then one a second. After a ramp
    # that first one was in flight when the window opened, and spans a median spacing back
    # (1 s, 1% of it inside); with ramp_time=0 the window opened with its issue.
    completions = [Completion(10.5, MiB), *steady(1000, MiB, first_ms=1010.5, until_ms=8010.5)]
    after_a_ramp = count_window(completions, 8000, 1000)
    without = count_window(completions, 8000, 1000, ramped=False)
    # 7 whole transfers at 1.01..7.01 s; the one drained at 8.01 s is 98.95% inside
    assert after_a_ramp.ios == pytest.approx(0.0105 + 7 + 0.9895)
    assert without.ios == pytest.approx(1 + 7 + 0.9895)
    # the first second holds it and most of the next one (10.5..1010.5 ms)
    assert without.interval_bytes[0] == pytest.approx(MiB * (1 + 0.9895))


@pytest.mark.parametrize("early_ms", [0.0, 35.0, 68.0])
def test_a_first_transfer_completing_early_is_counted_by_the_pace_of_the_next(early_ms):
    # 16 MiB reads at 30 MB/s through the kernel block throttle: one every 560 ms, the first
    # at 556 ms, and now and then one some 70 ms early, the next back in its place (recorded). The
    # first transfer's span starts one spacing before where the next ones put its end, not before
    # its own end: that one alone read 0.12 of a transfer (-0.73% in 10 s) too little.
    transfers = steady(560, 16 * MiB, first_ms=556, until_ms=10_100)
    transfers[0] = Completion(556 - early_ms, 16 * MiB)
    count = count_window(transfers, 10_000, 1000)
    assert count.ios == pytest.approx(10_000 / 560, rel=0.001)
