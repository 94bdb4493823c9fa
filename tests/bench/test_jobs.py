"""Job files are complete, re-runnable and say what the measurement rules require."""

import dataclasses

import pytest

from flashmark.bench.jobs import job_for_test, prepare_job
from flashmark.bench.model import Settings
from flashmark.bench.profiles import MIXED_4K_70R_Q4, PROFILES, RAND_READ_4K, SEQ_WRITE
from tests.bench.synthetic import LOGS, SETTINGS


def options(text):
    return dict(
        line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith(";")
    )


def test_write_test_is_direct_incompressible_timed_and_fsynced():
    job = job_for_test(SEQ_WRITE, SETTINGS, ".flashmark-1.tmp", readonly=False, log_folder=LOGS)
    opts = options(job.text)
    assert opts["filename"] == ".flashmark-1.tmp"
    assert opts["direct"] == "1"
    assert opts["thread"] == "1"
    assert opts["refill_buffers"] == "1"
    assert (opts["time_based"], opts["runtime"], opts["ramp_time"]) == ("1", "8", "2")
    assert opts["end_fsync"] == "1"
    assert (opts["rw"], opts["bs"], opts["iodepth"]) == ("write", "1048576", "1")
    assert opts["lat_percentiles"] == "1"
    assert opts["percentile_list"] == "50:90:99:99.9:99.99"
    # One log line per completed I/O: no log_avg_msec, which would average it (fio HOWTO).
    assert opts["write_iops_log"] == f"{LOGS}/seq-write" and "log_avg_msec" not in opts
    # A sequential write logs each I/O's offset: how far it wrote, so the preparation after
    # it writes only the rest (plan.py).
    assert (opts["log_offset"], opts["per_job_logs"]) == ("1", "1")
    assert "re-run from inside the measured folder" in job.text
    assert job.expected_s == 10


@pytest.mark.parametrize("ramp_s", [0, 5])
def test_the_ramp_is_the_settings_and_zero_is_written_as_no_warm_up(ramp_s):
    """--ramp reaches the job; ramp_time=0 is fio's own default (no ramp, fio-3.33 time.c
    in_ramp_time), written out so the printed job says what ran. The window stays the runtime;
    only the wait before it changes."""
    settings = dataclasses.replace(SETTINGS, ramp_s=ramp_s)
    for spec in (SEQ_WRITE, RAND_READ_4K):
        job = job_for_test(spec, settings, ".flashmark-1.tmp", readonly=False, log_folder=LOGS)
        assert options(job.text)["ramp_time"] == str(ramp_s)
        assert job.window_s == 8 and job.expected_s == 8 + ramp_s
        assert job.ramp_s == ramp_s  # parse counts the window's start by it (fio/window.py)


def test_read_test_has_no_fsync_and_mixed_test_sets_the_mix():
    assert "end_fsync" not in options(
        job_for_test(RAND_READ_4K, SETTINGS, "/dev/sda", readonly=True, log_folder=LOGS).text
    )
    mixed_job = job_for_test(MIXED_4K_70R_Q4, SETTINGS, "f", readonly=False, log_folder=LOGS)
    mixed = options(mixed_job.text)
    assert (mixed["rw"], mixed["rwmixread"], mixed["iodepth"]) == ("randrw", "70", "4")


def test_buffered_settings_turn_direct_off():
    buffered = Settings(**{**SETTINGS.__dict__, "direct": False})
    job = job_for_test(RAND_READ_4K, buffered, "f", readonly=False, log_folder=LOGS)
    assert options(job.text)["direct"] == "0"


@pytest.mark.parametrize(
    "name",
    ["/media/a:b/x", "/bad\nname", "notes#2024", "semi;colon", "${X}", " x", "x ", "/mnt/x",
     "../x", ".", "", "/dev/../etc/x", "/dev/sd:a", "a=b", "é"],
)  # fmt: skip
def test_job_files_refuse_names_fio_would_reinterpret(name):
    # fio cuts lines at ';' and '#', strips blanks, expands ${..}, splits filename= on ':'
    # (bench/jobs.py): only generated names and the kernel's /dev/NAME may be named.
    with pytest.raises(ValueError):
        prepare_job(SETTINGS, name)


@pytest.mark.parametrize(
    "folder", ["/tmp/a:b", "/tmp/a#b", "/tmp/a;b", "/tmp/${X}", "/tmp/a b", "/tmp/a\nb", "tmp", ""]
)
def test_log_folders_must_be_absolute_and_literal(folder):
    with pytest.raises(ValueError):
        job_for_test(RAND_READ_4K, SETTINGS, "f", readonly=False, log_folder=folder)


@pytest.mark.parametrize("name", [".flashmark-12-0a1b2c3d.tmp", "/dev/mmcblk0p2", "/dev/dm-0"])
def test_job_files_take_generated_names_and_kernel_device_nodes(name):
    assert options(prepare_job(SETTINGS, name).text)["filename"] == name


def test_prepare_writes_the_whole_area_once_and_is_not_time_based():
    opts = options(prepare_job(SETTINGS, "f").text)
    assert opts["size"] == str(128 * 2**20)
    assert "time_based" not in opts
    assert (opts["rw"], opts["end_fsync"]) == ("write", "1")


def test_profiles_have_the_named_tests_of_the_issue():
    assert PROFILES["quick"].test_names() == (
        "seq-write",
        "seq-read",
        "rand-read-4k",
        "rand-read-4k-q32",
        "rand-write-4k",
        "rand-write-4k-q32",
    )
    standard = PROFILES["standard"].test_names()
    assert {"mixed-4k-70r-q4", "seq-read-q8", "seq-write-q8"} <= set(standard)
    full = set(PROFILES["full"].test_names())
    for size in ("1k", "2k", "4k", "16k", "128k", "512k", "1M", "16M"):
        assert f"rand-read-{size}" in full and f"rand-write-{size}" in full
    assert {"seq-read-16M", "seq-write-16M", "seq-read-4k"} <= full
    for profile in PROFILES.values():
        names = profile.test_names()
        assert len(names) == len(set(names)), profile.name


def test_quick_profile_fits_in_90_seconds_on_a_10_mb_s_card():
    quick = PROFILES["quick"]
    prepare_s = quick.default_size_bytes / 10e6
    tests_s = len(quick.tests) * (quick.default_runtime_s + quick.default_ramp_s)
    # Leave room for fio's start-up and the fsync at the end of each write test.
    assert prepare_s + tests_s + 10 < 90
