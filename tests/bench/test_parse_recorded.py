"""The parser on real fio outputs recorded from emulated devices (tests/data/fio/*/scenario.txt)."""

import dataclasses
import json

import pytest

from flashmark.bench.jobs import job_for_test
from flashmark.bench.profiles import PROFILES, RAND_READ_4K, RAND_WRITE_4K
from flashmark.bench.results import BATCH_MS, parse_prepare_output
from flashmark.errors import DeviceFailed, FioFailed, FioOutputError, NotEnoughSpace
from flashmark.fio.runner import ReplayRunner
from flashmark.fio.window import read_completions
from tests.bench.parsed import parse_test_output
from tests.bench.synthetic import SETTINGS, spec_named

# The card recorded in quick-a1-card: the kernel block throttle's caps.
A1_CAPS = {"read_iops": 1500, "write_iops": 500, "read_bps": 40e6, "write_bps": 10e6}


def replay(recordings, scenario, spec):
    job = job_for_test(spec, SETTINGS, "t.tmp", readonly=False, log_folder="/replayed")
    return job, ReplayRunner(recordings / scenario).run(job)


def test_quick_profile_on_an_a1_card_reads_back_its_caps(recordings):
    truth = {
        "seq-write": ("write", "bw_bytes", A1_CAPS["write_bps"]),
        "seq-read": ("read", "bw_bytes", A1_CAPS["read_bps"]),
        "rand-read-4k": ("read", "iops", A1_CAPS["read_iops"]),
        "rand-write-4k": ("write", "iops", A1_CAPS["write_iops"]),
        "rand-read-4k-q32": ("read", "iops", A1_CAPS["read_iops"]),
        "rand-write-4k-q32": ("write", "iops", A1_CAPS["write_iops"]),
    }
    for spec in PROFILES["quick"].tests:
        job, output = replay(recordings, "quick-a1-card", spec)
        result = parse_test_output(spec, job, output)
        direction_name, metric, expected = truth[spec.name]
        direction = getattr(result, direction_name)
        other = result.write if direction_name == "read" else result.read
        assert other is None, spec.name
        # The window's own rate (for writes: what the host accepted) is the throttle's cap:
        # its count could be off by one of the throttle's 100 ms grants (1.25% of 8 s); where
        # the bursts are alike the rate between the window's whole bursts is surer, and exact
        # (flashmark.fio.window.WholeBursts). In this recording every test but seq-write had
        # alike bursts; seq-write's 1 MiB writes come one to a grant, which leaves it to its
        # count.
        window = getattr(direction, f"accepted_{metric}") if spec.writes else None
        window = getattr(direction, metric) if window is None else window
        interval = direction.bw_ci95
        assert interval is not None
        between_bursts = "whole bursts" in interval.method
        assert between_bursts is (spec.name != "seq-write"), spec.name
        tolerance = 0.002 if between_bursts else 0.0126
        assert window == pytest.approx(expected, rel=tolerance), spec.name
        lat = direction.lat_ns
        assert lat.min <= lat.mean <= lat.max
        assert lat.p50 <= lat.p90 <= lat.p99 <= lat.p99_9 <= lat.p99_99
        # fio's percentiles are the bins of its latency histogram (FIO_IO_U_PLAT_BITS = 6 in
        # fio's stat.h: 64 bins per power of two), so one may exceed the exact max by <= 1/64.
        assert lat.p99_99 <= lat.max * (1 + 1 / 64)
        # fio's runtime closes when the last I/O in flight completes (at most its max latency
        # later) and, for writes, after end_fsync.
        assert direction.runtime_ms == 8000, spec.name
        allowance_ms = lat.max / 1e6 + (1000 if spec.writes else 1)
        assert 8000 <= direction.fio_runtime_ms <= 8000 + allowance_ms, spec.name
        series = direction.bw_per_second
        assert series is not None and len(series.samples_bps) == 8
        assert series.min_bps <= series.mean_bps <= series.max_bps
        # The seconds partition the window: their mean is the window's count, the headline
        # unless the rate between whole bursts is surer; that one is within a grant of it.
        window_bw = direction.accepted_bw_bytes if spec.writes else direction.bw_bytes
        assert series.mean_bps == pytest.approx(
            window_bw, rel=0.0126 if between_bursts else 1e-9
        ), spec.name
        # Batches of a quarter second or more (large transfers need longer ones).
        assert 8 <= interval.samples <= 8000 // BATCH_MS
        assert interval.low <= direction.bw_bytes <= interval.high
        assert direction.iops_ci95 is not None
        assert direction.iops_ci95.low == pytest.approx(interval.low / spec.block_size_bytes)
        if spec.writes:
            # Durable: until the end_fsync returned, so never above what the host accepted.
            assert direction.fsync_ms is not None and direction.fsync_ms >= 0
            assert direction.bw_bytes <= direction.accepted_bw_bytes * 1.0001, spec.name
        else:
            assert direction.accepted_bw_bytes is None and direction.fsync_ms is None


def test_sequential_rates_count_only_the_window_not_the_transfer_completing_after_it(recordings):
    # 10 MB/s in 1 MiB transfers: fio's io_bytes includes the transfer in flight when the
    # window closed, one of ~76 (+1.3%); the window holds 80 MB.
    spec = spec_named("seq-write", "quick")
    job, output = replay(recordings, "quick-a1-card", spec)
    write = parse_test_output(spec, job, output).write
    assert write is not None and write.accepted_bw_bytes is not None
    fio_figure = write.io_bytes * 1000 / write.runtime_ms
    assert fio_figure > A1_CAPS["write_bps"] * 1.005
    assert write.accepted_bw_bytes == pytest.approx(A1_CAPS["write_bps"], rel=0.002)
    assert write.bw_bytes < write.accepted_bw_bytes  # durable: the drain and the fsync count


def test_a_slow_card_at_a_deep_queue_is_measured_over_the_window_not_fios_runtime(recordings):
    # 30 write IOPS: the 32 writes still queued when the 8 s window closes take ~1 s more.
    spec = spec_named("rand-write-4k-q32", "quick")
    job, output = replay(recordings, "slow-card-deep-queue", spec)
    fio_write = json.loads(output.json_text or "")["jobs"][0]["write"]
    # What fio itself divides by. (Its IOPS figure also counts the 32 writes queued at the
    # start, this test ramping 0 s after rand-write-4k, which happens to offset the drain.)
    assert fio_write["runtime"] > 8900
    write = parse_test_output(spec, job, output).write
    assert write is not None
    assert write.iops == pytest.approx(30, rel=0.03)
    assert write.fio_runtime_ms == fio_write["runtime"] and write.runtime_ms == 8000
    # fio's per-second log agrees: the device completed 30 writes in each second of the window.
    assert write.bw_per_second is not None
    assert write.bw_per_second.mean_bps == pytest.approx(30 * 4096, rel=0.03)


def test_mixed_test_reports_both_directions_in_the_set_ratio(recordings):
    spec = spec_named("mixed-4k-70r-q4", "standard")
    job, output = replay(recordings, "standard-fast-card", spec)
    result = parse_test_output(spec, job, output)
    assert result.read is not None and result.write is not None
    share = result.read.total_ios / (result.read.total_ios + result.write.total_ios)
    assert share == pytest.approx(0.70, abs=0.02)
    assert result.read.bw_per_second is not None and result.write.bw_per_second is not None


@pytest.mark.parametrize(
    ("scenario", "spec", "error", "match"),
    [
        ("folder-device-gone", RAND_WRITE_4K, DeviceFailed, "EIO"),
        # measure() turns this into DeviceFailed for device targets (test_cli covers it).
        ("device-io-error", RAND_WRITE_4K, NotEnoughSpace, None),
        ("fio-killed", RAND_READ_4K, FioFailed, "SIGKILL"),
    ],
    ids=["device-vanishing-mid-test", "raw-device-shrinking-to-nothing", "fio-killed-by-a-signal"],
)
def test_a_failed_run_is_named_by_its_cause(recordings, scenario, spec, error, match):
    job, output = replay(recordings, scenario, spec)
    if scenario == "fio-killed":
        assert output.json_text == ""
    with pytest.raises(error, match=match):
        parse_test_output(spec, job, output)


def test_preparation_that_fills_the_filesystem_says_choose_a_smaller_size(recordings):
    output = ReplayRunner(recordings / "no-space").run(
        dataclasses.replace(
            job_for_test(RAND_READ_4K, SETTINGS, "x", readonly=False, log_folder="/w"),
            name="prepare",
        )
    )
    with pytest.raises(NotEnoughSpace, match="--size"):
        parse_prepare_output(output, 64 * 2**20, 1800)


def test_notes_before_the_json_are_skipped_and_garbage_is_quoted(recordings):
    job, output = replay(recordings, "quick-a1-card", RAND_READ_4K)
    noted = dataclasses.replace(output, json_text="fio: note: a warning\n" + output.json_text)
    assert parse_test_output(RAND_READ_4K, job, noted).read is not None
    broken = dataclasses.replace(output, json_text='{"jobs": [ {"read": ')
    with pytest.raises(FioOutputError, match="does not parse"):
        parse_test_output(RAND_READ_4K, job, broken)


def test_missing_percentiles_point_at_lat_percentiles_and_the_fio_version(recordings):
    job, output = replay(recordings, "quick-a1-card", RAND_READ_4K)
    document = json.loads(output.json_text)
    del document["jobs"][0]["read"]["lat_ns"]["percentile"]
    changed = dataclasses.replace(output, json_text=json.dumps(document))
    with pytest.raises(FioOutputError, match="lat_percentiles"):
        parse_test_output(RAND_READ_4K, job, changed)


def test_a_string_where_a_number_belongs_is_quoted():
    from flashmark.fio.runner import FioOutput

    document = {"jobs": [{"error": 0, "read": {"iops": "fast"}}]}
    output = FioOutput("rand-read-4k", (), 0, json.dumps(document), "", {}, 1.0)
    job = job_for_test(RAND_READ_4K, SETTINGS, "x", readonly=True, log_folder="/w")
    with pytest.raises(FioOutputError, match="fast"):
        parse_test_output(RAND_READ_4K, job, output)


def test_per_io_logs_split_directions_and_reject_other_shapes():
    logs = {
        "mixed_iops.1.log": "100, 1, 0, 4096, 0\n150, 1, 1, 4096, 0\n"
        "600, 1, 0, 4096, 0\n1200, 1, 0, 4096, 0\n"
    }
    assert [c.time_ms for c in read_completions(logs, 0)] == [100.5, 600.5, 1200.5]
    assert len(read_completions(logs, 1)) == 1 and read_completions(logs, 2) == []
    with pytest.raises(FioOutputError, match="line 1"):
        read_completions({"x_iops.1.log": "1000 700 0\n"}, 0)
    with pytest.raises(FioOutputError, match="log_avg_msec"):  # an averaged log: 700 IOPS
        read_completions({"x_iops.1.log": "1000, 700, 0, 4096, 0\n"}, 0)


def test_io_fio_counted_but_did_not_log_at_the_ramps_end_is_added_and_more_is_refused(recordings):
    # fio 3.33 counts, without logging, I/Os completing between the ramp's end and its switch
    # to the running state (seen on a fast disk): at most the queue depth of them.
    job, output = replay(recordings, "quick-a1-card", RAND_READ_4K)
    whole = parse_test_output(RAND_READ_4K, job, output).read
    ((name, text),) = output.logs.items()
    lines = text.splitlines(keepends=True)
    one_short = dataclasses.replace(output, logs={name: "".join(lines[1:])})
    read = parse_test_output(RAND_READ_4K, job, one_short).read
    assert whole is not None and read is not None
    assert read.iops == pytest.approx(whole.iops, abs=1 / 8)
    two_short = dataclasses.replace(output, logs={name: "".join(lines[2:])})
    with pytest.raises(FioOutputError, match="io_bytes"):
        parse_test_output(RAND_READ_4K, job, two_short)
    with pytest.raises(FioOutputError, match="write_iops_log"):
        parse_test_output(RAND_READ_4K, job, dataclasses.replace(output, logs={}))
