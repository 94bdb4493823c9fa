"""Adaptive lengths (flashmark.bench.lengths) and what they rest on: intervals from rates between
burst ends, the edge allowance of bursty devices (flashmark.fio.window), and the plan's first
windows and shortened preparation, on synthetic completion streams whose true rate is known exactly
and on a recorded run (tests/data/fio/quick-a1-card-adaptive)."""

from __future__ import annotations

import dataclasses

import pytest

from flashmark.bench.jobs import PREPARE_BLOCK_BYTES, prepare_job
from flashmark.bench.lengths import (
    AT_ONCE,
    FIRST_WINDOW_S,
    MIN_TRANSFERS,
    FastestRates,
    at_once,
    below_floor,
    bursty_reason,
    full_length,
    too_few_for_a_first_window,
    too_few_transfers,
)
from flashmark.bench.model import DirectionResult, TestResult
from flashmark.bench.plan import plan_tests
from flashmark.bench.profiles import PROFILES, RAND_READ_4K, RAND_WRITE_4K, SEQ_READ
from flashmark.fio.window import (
    Completion,
    count_window,
    edge_burst_bytes,
    steady_rates,
    surer_rate,
    written_extent,
)
from flashmark.stats import MeanInterval
from tests.bench import synthetic
from tests.bench.synthetic import LOGS, folder_target, plan_of, spec_named

MiB = 2**20


def steady(spacing_ms: float, size: int, *, first_ms: float, until_ms: float) -> list[Completion]:
    times, t = [], first_ms
    while t <= until_ms:
        times.append(t)
        t += spacing_ms
    return [Completion(t, size) for t in times]


def throttled(per_slice: int, size: int, *, until_ms: float) -> list[Completion]:
    """The kernel block throttle: a slice's budget completes at once every 100 ms, the first
    burst as the window opens (t = 0.5 ms, where fio's epoch falls)."""
    completions = []
    start = 0.5
    while start <= until_ms:
        completions += [Completion(start, size)] * per_slice
        start += 100.0
    return completions


def test_rates_between_burst_ends_are_flat_for_a_throttled_card():
    # 150 I/Os per 100 ms: 1500 IOPS. Per-second rates of a 3 s window read +10% at the start
    # (the opening burst lands whole in it); rates between burst ends read the card's rate.
    completions = throttled(150, 4096, until_ms=3100)
    rates = steady_rates(completions, 3000, 1000)
    assert len(rates) == 3
    assert [r / 4096 for r in rates] == pytest.approx([1500.0] * 3, rel=1e-9)


def test_rates_between_burst_ends_follow_a_steady_stream():
    completions = steady(0.75, 4096, first_ms=0.3, until_ms=3100)  # 1333 IOPS
    rates = steady_rates(completions, 3000, 1000)
    assert [r / 4096 for r in rates] == pytest.approx([1000 / 0.75] * len(rates), rel=1e-3)


def test_too_few_bursts_leave_the_per_second_rates_to_the_caller():
    assert steady_rates(steady(1600, 16 * MiB, first_ms=10, until_ms=3000), 3000, 1000) == ()


def test_a_steady_stream_needs_no_edge_allowance_a_bursty_one_a_burst():
    assert edge_burst_bytes(steady(0.75, 4096, first_ms=0.3, until_ms=3100), 3000) == (
        pytest.approx(0, abs=1e-6)
    )
    # As fio logs it: whole milliseconds (+0.5), two or three completions in each.
    logged = [
        Completion(int(c.time_ms) + 0.5, c.bytes)
        for c in steady(0.75, 4096, first_ms=0.3, until_ms=3100)
    ]
    assert edge_burst_bytes(logged, 3000) < 0.5 * 4096
    # The throttle: 150 I/Os per 100 ms pause; about one burst beyond one I/O.
    edge = edge_burst_bytes(throttled(150, 4096, until_ms=3100), 3000)
    assert edge == pytest.approx(149 * 4096, rel=0.05)


def closed_mid_burst(
    per_slice: int, size: int, *, window_ms: float, before: int
) -> list[Completion]:
    """A throttled card as fio logs it: the burst at the close straddles the window's last
    millisecond, `before` of its completions logged inside the window and the rest after."""
    completions = [c for c in throttled(per_slice, size, until_ms=window_ms - 50)]
    completions += [Completion(window_ms - 0.5, size)] * before
    completions += [Completion(window_ms + 0.5, size)] * (per_slice - before)
    return completions


@pytest.mark.parametrize("before", [0, 4, 75, 146])
def test_a_throttled_card_reads_its_rate_between_whole_bursts_wherever_the_close_cuts(before):
    # 150 I/Os per 100 ms (1500 IOPS); fio's close cuts the burst at 3 s anywhere.
    count = count_window(closed_mid_burst(150, 4096, window_ms=3000, before=before), 3000, 1000)
    assert count.whole is not None
    assert count.whole.iops == pytest.approx(1500, rel=1e-4)
    # Alike bursts leave only the log's millisecond uncertain: 1.5 I/Os of 2.9 s.
    assert count.whole.uncertain_bytes == pytest.approx(1.5 * 4096, rel=0.01)
    # The tiles end at the last whole burst and read the card's rate.
    assert [r / 4096 for r in count.steady_rates_bps] == pytest.approx([1500.0] * 3, rel=1e-3)


def test_a_burst_split_before_the_close_is_counted_whole_or_not_at_all():
    # The throttle's grant at 2.9 s completes in two parts 5 ms apart (a journal write between):
    # counting the first part alone would read 110 I/Os short and be that uncertain.
    completions = [c for c in throttled(150, 4096, until_ms=2850)]
    completions += [Completion(2900.5, 4096)] * 40 + [Completion(2905.5, 4096)] * 110
    completions += [Completion(3000.5, 4096)] * 150
    count = count_window(completions, 3000, 1000)
    assert count.whole is not None
    assert count.whole.stop_ms == 2905.5
    assert count.whole.iops == pytest.approx(1500 * 2900 / 2905, rel=1e-6)
    # Its two parts are one burst of 150, as the opening one, but it ends 5 ms off the steady
    # line: the rate is that uncertain (7.5 I/Os of 2.9 s), and covers the card's rate.
    assert count.whole.uncertain_bytes > 7.5 * 4096
    assert count.whole.uncertain_bps / 4096 >= 1500 - count.whole.iops
    # A split whose second part completes after the close looks like a small last burst: the
    # rate is 110 I/Os short, and uncertain by as much (the opening burst less the last).
    split_at_close = [c for c in completions if c.time_ms < 2905]
    split_at_close += [Completion(3000.5, 4096)] * 110
    count = count_window(split_at_close, 3000, 1000)
    assert count.whole is not None and count.whole.stop_ms == 2900.5
    short_by = 1500 - count.whole.iops
    assert short_by == pytest.approx(110 * 1000 / 2900, rel=1e-6)
    assert count.whole.uncertain_bps / 4096 >= short_by


@pytest.mark.parametrize("rotation", range(4))
@pytest.mark.parametrize("window_ms", [2000, 3000, 5000, 8000])
def test_bursts_of_unequal_size_are_uncertain_by_a_transfer(rotation, window_ms):
    # 37.5 MiB/s of 1 MiB reads through a 100 ms throttle: bursts of 4, 4, 4, 3 transfers,
    # the window falling anywhere in that pattern.
    pattern = [4, 4, 4, 3][rotation:] + [4, 4, 4, 3][:rotation]
    sizes = pattern * 25
    completions = []
    for k, n in enumerate(sizes):
        completions += [Completion(0.5 + 100 * k, MiB)] * n
    count = count_window(completions, window_ms, 1000)
    assert count.whole is not None
    rate_ms = count.whole.bytes / (count.whole.stop_ms - count.whole.start_ms)
    # Bursts differ by a transfer: that is what the count between them may be off by.
    assert count.whole.uncertain_bytes == pytest.approx(MiB + rate_ms)
    true_bps = 3.75 * MiB * 10
    assert abs(count.whole.bw_bytes - true_bps) <= count.whole.uncertain_bps


def test_a_steady_stream_keeps_its_count_the_rate_between_bursts_being_no_surer():
    # One I/O at a time: each is a burst; their rate is the count's, and the count is exact
    # (no edge allowance), where the rate between bursts keeps the log's millisecond: the
    # parser keeps the count (bench/results.py takes the surer of the two).
    count = count_window(steady(100, MiB, first_ms=50, until_ms=3100), 3000, 1000)
    assert count.whole is not None
    assert count.whole.bw_bytes == pytest.approx(count.bw_bytes, rel=1e-6)
    assert edge_burst_bytes(steady(100, MiB, first_ms=50, until_ms=3100), 3000) == 0
    assert count.whole.uncertain_bps > 0


# 16 MiB writes at 10 MB/s (1677.7 ms each) through the kernel block throttle, which grants
# budget per 100 ms slice: completion times (ms) of three 10 s windows recorded on this host
# (2026-11-24; the last one each is fio's drain). The rates between their ends read +0.34%,
# -0.02% and -0.08%; their counts -0.17%, -0.02% and -0.19%.
LONE_TRANSFERS_THROUGH_SLICES = [
    [1700.5, 3364.5, 5036.5, 6712.5, 8388.5, 10084.5],
    [1680.5, 3356.5, 4980.5, 6711.5, 8392.5, 10068.5],
    [1704.5, 3372.5, 5073.5, 6712.5, 8420.5, 10084.5],
]


@pytest.mark.parametrize("times", LONE_TRANSFERS_THROUGH_SLICES)
def test_lone_transfers_through_a_throttle_are_read_within_half_a_percent(times):
    # Each end of the rate between whole bursts is one transfer's completion, which the
    # throttle's slices move by tens of ms: it is uncertain by how far its ends are off the
    # steady line, and the parser (bench/results.py) takes whichever of it and the count is surer.
    completions = [Completion(t, 16 * MiB) for t in times]
    count = count_window(completions, 10_000, 1000)
    assert count.whole is not None
    headline = surer_rate(count, completions)
    assert headline.bw_bytes == pytest.approx(10_000_000, rel=0.005)
    if times is LONE_TRANSFERS_THROUGH_SLICES[0]:  # its rate between bursts, +0.34%, is not taken
        assert not headline.between_bursts


def test_written_extent_reads_offsets_and_sees_a_wrapped_area():
    # time, value, direction, block size, offset, priority (log_offset=1)
    log = "".join(f"{k},1,1,1048576,{k * MiB},0\n" for k in range(2, 10))
    assert written_extent({"seq-write_iops.1.log": log}, 64 * MiB) == 10 * MiB
    wrapped = log + f"11,1,1,1048576,{63 * MiB},0\n12,1,1,1048576,0,0\n"
    assert written_extent({"seq-write_iops.1.log": wrapped}, 64 * MiB) == 64 * MiB
    assert written_extent({"seq-write_iops.1.log": "2,1,1,1048576\n"}, 64 * MiB) == 0


def direction(ios: float, window_ms: int, interval: MeanInterval | None) -> DirectionResult:
    """`ios` 4 KiB transfers in a window of `window_ms`."""
    return synthetic.direction(
        ios * 1000 / window_ms, ios * 4096 * 1000 / window_ms, runtime_ms=window_ms,
        io_bytes=int(ios * 4096), total_ios=int(ios), bw_ci95=interval,
    )  # fmt: skip


def interval(mean: float, half_pct: float, edge_pct: float = 0.0) -> MeanInterval:
    half = mean * half_pct / 100
    return MeanInterval(mean, mean - half, mean + half, 3, 3.0, edge=mean * edge_pct / 100)


def result(read: DirectionResult) -> TestResult:
    return synthetic.result(RAND_READ_4K, read, elapsed_s=5.0)


def test_a_narrow_interval_over_enough_transfers_keeps_the_first_window():
    read = direction(4500, 3000, interval(1500, 0.4))
    assert full_length(result(read), 8) is None


def test_a_wide_interval_is_lengthened_to_the_full_length_and_says_why():
    # Wide by its spread, its edges nothing: extended (tests/bench/test_extensions.py).
    read = direction(4500, 3000, interval(1500, 2.5))
    longer = full_length(result(read), 8)
    assert longer is not None and longer.window_s == 8 and not longer.bursty
    assert longer.extendable
    assert longer.reason == "read interval +-2.5% (wider than +-1%)"


def test_an_interval_wide_by_its_edges_marks_the_device_bursty():
    read = direction(4650, 3000, interval(1550, 3.4, edge_pct=3.3))
    longer = full_length(result(read), 8)
    assert longer is not None and longer.bursty
    assert bursty_reason("seq-read", 1).startswith(
        "seq-read found the device completing in bursts,"
    )
    assert "at queue depth 8," in bursty_reason("seq-read-q8", 8)


def test_large_transfers_run_until_the_window_holds_twenty():
    # 16 MiB at 30 MB/s: 1.79 a second, 5.4 in 3 s: 20 need 12 s (11.2 rounded up, and one more)
    read = direction(5.36, 3000, interval(1.79, 0.5))
    longer = full_length(result(read), 10)
    assert longer is not None and longer.window_s == 13
    assert f"(fewer than {MIN_TRANSFERS})" in longer.reason


def test_a_test_on_its_verdict_stops_when_decided_not_at_one_percent():
    # +-2.5% is too wide for a figure, but decided for a verdict: the +-1% rule gives way.
    read = direction(4500, 3000, interval(1500, 2.5))
    assert full_length(result(read), 8, undecided=()) is None
    longer = full_length(result(read), 8, undecided=("rand-read-4k IOPS 1,500 straddles 1,500",))
    assert longer is not None and longer.extendable
    assert longer.reason == "undecided: rand-read-4k IOPS 1,500 straddles 1,500"


def test_a_write_test_on_its_verdict_writes_its_floor_first():
    # 500 4K writes a second for 3 s: 5.9 MiB, short of the 8 MiB floor, decided or not.
    write = direction(1500, 3000, interval(2_048_000, 0.5))
    test = synthetic.result(RAND_WRITE_4K, write, elapsed_s=5.0)
    longer = full_length(test, 8, undecided=())
    assert longer is not None and longer.extendable
    assert "less than 8 MiB, the floor of a write test" in longer.reason
    enough = direction(3000, 3000, interval(4_096_000, 0.5))  # 11.7 MiB
    assert full_length(dataclasses.replace(test, write=enough), 8, undecided=()) is None


def test_below_the_floor_is_short_of_time_or_of_transfers():
    assert below_floor(2000, 1000) and below_floor(3000, 19)
    assert not below_floor(2960, 20) and not below_floor(8000, 4000)


def test_no_interval_is_not_enough():
    longer = full_length(result(direction(4500, 3000, None)), 8)
    assert longer is not None and "too few for an interval" in longer.reason


def test_the_quick_plan_measures_first_windows_after_a_full_length_seq_write(tmp_path):
    plan = plan_of("quick", folder_target(tmp_path))
    assert plan.settings.first_window_s == FIRST_WINDOW_S
    assert plan.prepare_after == 1  # seq-write, then the preparation of the rest
    assert [job.name for job in plan.all_jobs][:3] == ["seq-write", "prepare", "seq-read"]
    assert [job.window_s for job in plan.jobs] == [8.0] + [3.0] * 5
    assert [plan.is_first_window(i) for i in range(len(plan.jobs))] == [False] + [True] * 5
    # quick grades: its seq-write ends once it has written the area, 8 s at most after its
    # ramp; fio ends a job that is not time_based at its size (measure.py measures it again
    # where that leaves less than a first window).
    seq_write = plan.jobs[0]
    assert seq_write.ends_when_written and "time_based" not in seq_write.text
    assert "runtime=8\n" in seq_write.text and f"size={128 * MiB}\n" in seq_write.text
    assert "until it has written the area or measured 8 s" in seq_write.text
    assert not any(job.ends_when_written for job in plan.jobs[1:])
    assert plan.describe().startswith("seq-write 10 s at most, until the area is written; ")
    # Shorter than the runtime: the leading seq-write's window measured again (measure.py).
    short = plan.full_length_job(0, 3)
    assert short.name == "seq-write-again" and "measured again for 3 s" in short.text
    again = plan.full_length_job(1, 8)
    assert again.name == "seq-read-full" and again.window_s == 8.0
    assert "runtime=8\n" in again.text and "[seq-read-full]\n" in again.text
    # seq-read ramps 2 s after the preparation, the depth-1 tests after it 1 s, the depth-32
    # ones none (tests/bench/test_ramps.py)
    assert plan.expected_seconds() == 10 + 5 + 2 * 4 + 2 * 3


def test_runtime_fixes_every_length(tmp_path):
    plan = plan_of("quick", folder_target(tmp_path), runtime_s=4)
    assert plan.settings.first_window_s is None
    assert [job.window_s for job in plan.jobs] == [4.0] * 6
    assert not any(plan.is_first_window(i) for i in range(6))
    # Every length fixed, seq-write's too: time-based, whatever it wrote.
    assert not any(job.ends_when_written for job in plan.jobs)
    assert all("time_based=1\n" in job.text for job in plan.jobs)


def test_the_preparation_writes_what_seq_write_did_not(tmp_path):
    plan = plan_of("quick", folder_target(tmp_path))
    assert plan.rest_of_prepare(0) is plan.prepare_job
    rest = plan.rest_of_prepare(100 * MiB + 5)  # rounded down to whole preparation blocks
    assert rest is not None
    assert f"offset={100 * MiB}\n" in rest.text and f"size={28 * MiB}\n" in rest.text
    assert plan.rest_of_prepare(128 * MiB) is None
    with pytest.raises(ValueError):
        prepare_job(plan.settings, ".flashmark-1.tmp", offset_bytes=PREPARE_BLOCK_BYTES + 1)


def test_a_plan_of_reads_alone_has_no_leading_writes(tmp_path):
    settings = dataclasses.replace(
        synthetic.SETTINGS, size_bytes=64 * MiB, follow_ramp_s=1, first_window_s=3
    )
    profile = dataclasses.replace(PROFILES["quick"], tests=(SEQ_READ, RAND_READ_4K))
    plan = plan_tests(profile, settings, folder_target(tmp_path), log_folder=LOGS)
    assert plan.prepare_after == 0 and [job.window_s for job in plan.jobs] == [3.0, 3.0]


def test_large_blocks_that_cannot_fill_a_first_window_start_at_their_length():
    fastest = FastestRates(read=60e6, write=30e6)
    read = too_few_for_a_first_window(spec_named("rand-read-16M"), fastest, 10)
    # 60 MB/s of 16 MiB reads: 3.6 a second, 11 in 3 s; 20 need 6 s, the full length is 10.
    assert read is not None and read.window_s == 10
    assert read.reason.startswith("at most 11 reads would fit in its first window")
    write = too_few_for_a_first_window(spec_named("seq-write-16M"), fastest, 10)
    # 30 MB/s: 1.8 a second; 20 need 12 s (+1 for the transfer cut at an edge).
    assert write is not None and write.window_s == 13
    assert too_few_for_a_first_window(spec_named("rand-read-1M"), fastest, 10) is None
    assert too_few_for_a_first_window(spec_named("rand-read-16M"), FastestRates(), 10) is None
    # Only the test's own directions count: a slow write does not lengthen a read.
    assert (
        too_few_for_a_first_window(spec_named("rand-read-16M"), FastestRates(600e6, 1e6), 10)
        is None
    )


def test_after_a_bursty_test_deeper_ones_start_at_full_length_and_hold_enough_transfers():
    fastest = FastestRates(read=60e6, write=30e6)
    bursty = spec_named("rand-write-512k")  # queue depth 1: every later test skips its window
    plain = at_once(spec_named("rand-read-1M"), fastest, 10, bursty)
    assert plain is not None and plain.window_s == 10
    assert plain.reason == bursty_reason("rand-write-512k", 1)
    # 16 MiB writes at 30 MB/s: the runtime would hold 17.9 of them; 20 need 13 s. Both
    # reasons are given, the transfers' first (as a result said before).
    large = at_once(spec_named("rand-write-16M"), fastest, 10, bursty)
    assert large is not None and large.window_s == 13
    assert large.reason.startswith(AT_ONCE + "at most 5 writes would fit in its first window")
    assert large.reason.endswith("; " + bursty_reason("rand-write-512k", 1))
    # Without a bursty test, only the transfers decide; a bursty test deeper than this one's
    # queue does not count (a device may complete in bursts only at depth).
    alone = at_once(spec_named("rand-write-16M"), fastest, 10, None)
    too_few = too_few_for_a_first_window(spec_named("rand-write-16M"), fastest, 10)
    assert alone is not None and too_few is not None
    assert alone.window_s == 13
    assert alone.reason == AT_ONCE + too_few.reason
    deeper = spec_named("seq-read-q8")
    assert at_once(spec_named("rand-read-1M"), fastest, 10, deeper) is None
    assert at_once(spec_named("seq-read-q8"), fastest, 10, deeper) is not None
    # Too few transfers behind a bursty test too deep to count: the transfers' reason alone.
    behind = at_once(spec_named("rand-write-16M"), fastest, 10, deeper)
    assert behind is not None and (behind.window_s, behind.reason) == (13, alone.reason)


def test_the_fastest_rates_count_what_the_host_accepted_of_writes():
    accepted = dataclasses.replace(direction(1500, 3000, None), accepted_bw_bytes=9e6)
    written = TestResult(spec=RAND_READ_4K, read=None, write=accepted, job_file="", elapsed_s=5.0)
    fastest = FastestRates(read=1e6).seen(written).seen(result(direction(3, 3000, None)))
    assert fastest == FastestRates(read=1e6, write=9e6)


def test_the_standard_plan_writes_its_area_with_the_sustained_write_and_seq_write_first(tmp_path):
    plan = plan_of("standard", folder_target(tmp_path))
    names = [job.name for job in plan.all_jobs]
    # The sustained write first, on an empty cache; seq-write after it measures past it.
    assert names[:4] == ["sustained-write", "seq-write", "prepare", "seq-read"]
    assert plan.prepare_after == 2
    # standard measures figures, not verdicts: seq-write its full length, time-based.
    assert not plan.jobs[1].ends_when_written and "time_based=1\n" in plan.jobs[1].text
    sustained = plan.jobs[0]
    # Its offsets say how far it wrote: the preparation writes only the rest.
    assert "log_offset=1\n" in sustained.text
    log = "".join(f"{k},1,1,524288,{k * 524288},0\n" for k in range(1, 1536))
    written = written_extent({"sustained-write_iops.1.log": log}, plan.settings.size_bytes)
    assert written == 1536 * 524288 == 768 * MiB
    rest = plan.rest_of_prepare(written)
    assert rest is not None and f"offset={768 * MiB}\n" in rest.text


def test_a_test_measured_at_once_runs_again_when_it_was_slower_than_the_fastest_rate():
    # rand-write-16M planned from a 60 MB/s sequential write (10 s), but it writes 20 MB/s:
    # 10 s hold 12 of its transfers; 20 need 17 s, plus one for a transfer cut at an edge.
    planned = too_few_for_a_first_window(spec_named("rand-write-16M"), FastestRates(0, 60e6), 10)
    assert planned is not None and planned.window_s == 10
    slow = synthetic.result(spec_named("rand-write-16M"), direction(11.92, 10_000, None), 12.0)
    again = too_few_transfers(slow, 10)
    assert again is not None and again.window_s == 18
    assert again.reason == "12 writes (fewer than 20)"
    enough = dataclasses.replace(slow, write=direction(21, 10_000, None))
    assert too_few_transfers(enough, 10) is None


def test_a_grant_the_close_cut_at_depth_1_is_not_a_whole_burst():
    # 1K writes at 2000 IOPS through a 100 ms throttle at queue depth 1: 200 a grant. The close
    # at 3 s cut the grant due then after its first I/O (logged at 2999.5 ms), and at depth 1
    # nothing is drained after it: that lone I/O is not a whole burst.
    completions = [c for c in throttled(200, 1024, until_ms=2950)]
    completions.append(Completion(2999.5, 1024))
    count = count_window(completions, 3000, 1000)
    assert count.whole is not None and count.whole.stop_ms == 2900.5
    assert count.whole.iops == pytest.approx(2000, rel=1e-4)
    assert count.whole.uncertain_bytes < 2 * 3 * 1024  # the log's millisecond: 2 I/Os of 2.9 s
    assert [r / 1024 for r in count.steady_rates_bps] == pytest.approx([2000.0] * 3, rel=1e-3)
