"""The parser on real fio outputs recorded from emulated devices (tests/data/fio/*/scenario.txt)."""

import dataclasses
import json

import pytest

from flashmark.errors import DeviceFailed, FioFailed, FioOutputError, NotEnoughSpace
from flashmark.fio.jobs import job_for_test
from flashmark.fio.parse import bandwidth_series, parse_prepare_output, parse_test_output
from flashmark.fio.runner import ReplayRunner
from flashmark.model import Settings
from flashmark.profiles import PROFILES, RAND_READ_4K, RAND_WRITE_4K

SETTINGS = Settings(
    profile="quick", size_bytes=128 * 2**20, runtime_s=8, ramp_s=2, direct=True, destructive=False
)
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
        assert getattr(direction, metric) == pytest.approx(expected, rel=0.03), spec.name
        lat = direction.lat_ns
        assert lat.min <= lat.mean <= lat.max
        assert lat.p50 <= lat.p90 <= lat.p99 <= lat.p99_9 <= lat.p99_99
        # fio's percentiles are the bins of its latency histogram (FIO_IO_U_PLAT_BITS = 6 in
        # fio's stat.h: 64 bins per power of two), so one may exceed the exact max by <= 1/64.
        assert lat.p99_99 <= lat.max * (1 + 1 / 64)
        # Rates are per second of the 8 s window. fio's runtime closes when the last I/O in
        # flight completes (at most its max latency later) and, for writes, after end_fsync.
        assert direction.runtime_ms == 8000, spec.name
        assert direction.iops == pytest.approx(direction.total_ios / 8), spec.name
        allowance_ms = lat.max / 1e6 + (1000 if spec.writes else 1)
        assert 8000 <= direction.fio_runtime_ms <= 8000 + allowance_ms, spec.name
        series = direction.bw_per_second
        assert series is not None and len(series.samples_bps) >= 6
        assert series.min_bps <= series.mean_bps <= series.max_bps
        # The per-second samples agree with fio's own average for the window.
        assert series.mean_bps == pytest.approx(direction.bw_bytes, rel=0.05), spec.name


def test_a_slow_card_at_a_deep_queue_is_measured_over_the_window_not_fios_runtime(recordings):
    # 30 write IOPS: the 32 writes still queued when the 8 s window closes take ~1 s more.
    spec = next(t for t in PROFILES["quick"].tests if t.name == "rand-write-4k-q32")
    job, output = replay(recordings, "slow-card-deep-queue", spec)
    fio_write = json.loads(output.json_text or "")["jobs"][0]["write"]
    assert fio_write["runtime"] > 8900 and fio_write["iops"] < 27  # what fio itself reports
    write = parse_test_output(spec, job, output).write
    assert write is not None
    assert write.iops == pytest.approx(30, rel=0.03)
    assert write.fio_runtime_ms == fio_write["runtime"] and write.runtime_ms == 8000
    # fio's per-second log agrees: the device completed 30 writes in each second of the window.
    assert write.bw_per_second is not None
    assert write.bw_per_second.mean_bps == pytest.approx(30 * 4096, rel=0.03)


def test_mixed_test_reports_both_directions_in_the_set_ratio(recordings):
    spec = next(t for t in PROFILES["standard"].tests if t.name == "mixed-4k-70r-q4")
    job, output = replay(recordings, "standard-fast-card", spec)
    result = parse_test_output(spec, job, output)
    assert result.read is not None and result.write is not None
    share = result.read.total_ios / (result.read.total_ios + result.write.total_ios)
    assert share == pytest.approx(0.70, abs=0.02)
    assert result.read.bw_per_second is not None and result.write.bw_per_second is not None


def test_a_device_vanishing_mid_test_is_a_device_failure(recordings):
    job, output = replay(recordings, "folder-device-gone", RAND_WRITE_4K)
    with pytest.raises(DeviceFailed, match="EIO"):
        parse_test_output(RAND_WRITE_4K, job, output)


def test_a_raw_device_shrinking_to_nothing_reports_no_space(recordings):
    # measure() turns this into DeviceFailed for device targets (test_cli covers it).
    job, output = replay(recordings, "device-io-error", RAND_WRITE_4K)
    with pytest.raises(NotEnoughSpace):
        parse_test_output(RAND_WRITE_4K, job, output)


def test_preparation_that_fills_the_filesystem_says_choose_a_smaller_size(recordings):
    output = ReplayRunner(recordings / "no-space").run(
        dataclasses.replace(
            job_for_test(RAND_READ_4K, SETTINGS, "x", readonly=False, log_folder="/w"),
            name="prepare",
        )
    )
    with pytest.raises(NotEnoughSpace, match="--size"):
        parse_prepare_output(output, 64 * 2**20, 1800)


def test_fio_killed_by_a_signal_is_named(recordings):
    job, output = replay(recordings, "fio-killed", RAND_READ_4K)
    assert output.json_text == ""
    with pytest.raises(FioFailed, match="SIGKILL"):
        parse_test_output(RAND_READ_4K, job, output)


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


def test_bandwidth_logs_split_directions_and_reject_other_shapes():
    logs = {
        "mixed_bw.1.log": "1000, 700, 0, 4096, 0\n1000, 300, 1, 4096, 0\n"
        "2000, 710, 0, 4096, 0\n2000, 290, 1, 4096, 0\n"
    }
    read = bandwidth_series(logs, 0)
    assert read is not None and read.samples_bps == (700 * 1024, 710 * 1024)
    assert bandwidth_series(logs, 2) is None
    with pytest.raises(FioOutputError, match="line 1"):
        bandwidth_series({"x_bw.1.log": "1000 700 0\n"}, 0)
