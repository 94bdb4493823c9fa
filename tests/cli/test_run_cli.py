"""The whole CLI on replayed fio outputs, in-process: no fio, no root (FLASHMARK_FIO_REPLAY)."""

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import flashmark

# The quick profile's tests, in the order they run and are reported.
QUICK_TESTS = ["seq-write", "seq-read", "rand-read-4k", "rand-read-4k-q32", "rand-write-4k",
               "rand-write-4k-q32"]  # fmt: skip


@pytest.fixture
def replay_env(recordings):
    return {"FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive")}


def test_run_json_prints_the_documented_schema_and_saves_it(folder, replay_env):
    done = flashmark("run", str(folder), "--json", env=replay_env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "flashmark.result/1"
    assert document["id"] == 1
    assert [test["name"] for test in document["tests"]] == QUICK_TESTS
    rand_read = document["tests"][2]
    assert rand_read["read"]["iops"] == pytest.approx(1500, rel=0.03)
    assert rand_read["write"] is None
    assert set(rand_read["read"]["lat_ns"]) >= {"mean", "p50", "p90", "p99", "p99.9", "p99.99"}
    assert rand_read["job"].startswith("; flashmark")
    for name in ("A1", "A2", "C10", "U1", "U3", "V30"):
        grade = document["grades"][name]
        assert grade["pass"] == all(check["pass"] for check in grade["checks"])
    a2 = document["grades"]["A2"]
    assert a2["pass"] is False and a2["checks"][0]["threshold"] == 4000
    assert list(folder.iterdir()) == []  # the test file is gone
    # progress went to stderr, one line per step
    assert "[7/7] rand-write-4k-q32" in done.stderr

    listed = json.loads(flashmark("history", "--json", env=replay_env).stdout)
    assert [entry["id"] for entry in listed] == [1]
    shown = json.loads(flashmark("show", "1", "--json", env=replay_env).stdout)
    assert shown == document
    table = flashmark("show", "1", env=replay_env)
    assert "rand-read-4k-q32" in table.stdout and "A1" in table.stdout


def test_terminal_output_is_a_table_with_grades(tmp_path, replay_env, private_history):
    done = flashmark("run", str(tmp_path), "--no-save", env=replay_env)
    assert done.returncode == 0, done.stderr
    assert "seq-write" in done.stdout and "Grades" in done.stdout and "MB = 10^6" in done.stdout
    assert not private_history.exists()


def test_the_history_names_the_measured_folder_absolutely(folder, replay_env):
    done = flashmark("run", ".", "--json", env=replay_env, cwd=folder)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["target"]["given"] == "."  # the document keeps what was typed
    listed = json.loads(flashmark("history", "--json", env=replay_env).stdout)
    assert [entry["target"] for entry in listed] == [str(folder.resolve())]


def test_show_fio_prints_rerunnable_job_files_and_runs_nothing(folder, replay_env, private_history):
    done = flashmark("run", str(folder), "--show-fio", env=replay_env)
    assert done.returncode == 0, done.stderr
    # on stdout, so that `--show-fio > jobs.fio` keeps them
    assert "# ---- prepare.fio" in done.stdout
    assert "[rand-write-4k-q32]" in done.stdout and "iodepth=32" in done.stdout
    # the per-I/O logs go to the folder fio runs in: a run's work folder is gone by then
    assert "write_iops_log=seq-write\n" in done.stdout and "=/" not in done.stdout
    assert "[1/7]" not in done.stderr and "verdict:" not in done.stdout  # no step ran
    assert list(folder.iterdir()) == []
    assert not private_history.exists()  # nothing to save, nothing opened


def test_the_ramp_asked_for_is_run_recorded_and_kept_in_the_history(folder, replay_env, recordings):
    # --runtime 3 fixes every test's length: the recording of fixed 8 s tests answers it.
    replay_env = {**replay_env, "FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card")}
    shown = flashmark("run", str(folder), "--ramp", "7", "--show-fio", env=replay_env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("ramp_time=7\n") == 6  # each timed test of the quick profile
    done = flashmark("run", str(folder), "--ramp", "0", "--runtime", "3", "--json", env=replay_env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["settings"]["ramp_s"], document["settings"]["runtime_s"]) == (0, 3)
    assert all("ramp_time=0\n" in test["job"] for test in document["tests"])
    assert "6 tests x 3 s" in done.stderr  # what is about to run: no warm-up
    saved = json.loads(flashmark("show", str(document["id"]), "--json", env=replay_env).stdout)
    assert saved["settings"]["ramp_s"] == 0
    table = flashmark("show", str(document["id"]), env=replay_env).stdout
    assert "3 s per test after 0 s ramp" in table


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["run", "/no/such/place"], ExitStatus.TARGET, "no such folder, file or device"),
        (["run", "--size", "1M", "--profile", "full"], ExitStatus.USAGE, "too small"),
        (["run", "--destructive"], ExitStatus.USAGE, "block devices only"),
        (["run", "--size", "1000T"], ExitStatus.TARGET, "choose a smaller --size"),
        (["show", "42"], ExitStatus.USAGE, "no run 42"),
        (["run", "--profile", "nope"], ExitStatus.USAGE, "nope"),
    ],
)
def test_bad_input_gets_one_line_and_an_exit_status(tmp_path, replay_env, args, status, message):
    done = flashmark(*args, env=replay_env, cwd=tmp_path)
    assert done.returncode == status
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_debug_shows_the_traceback(replay_env):
    done = flashmark("--debug", "run", "/no/such/place", env=replay_env)
    assert done.returncode == ExitStatus.TARGET
    assert "Traceback" in done.stderr


def test_missing_fio_says_how_to_install_it(tmp_path):
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    done = flashmark("run", str(tmp_path), "--no-save", env={"PATH": str(empty_path)})
    assert done.returncode == ExitStatus.ENVIRONMENT
    assert "apt-get install fio" in done.stderr
    assert list(p.name for p in tmp_path.iterdir()) == ["bin"]


def test_too_old_fio_is_refused(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "fio").write_text("#!/bin/sh\necho fio-2.2.10\n")
    (fake / "fio").chmod(0o755)
    done = flashmark("run", str(tmp_path), "--no-save", env={"PATH": f"{fake}:/usr/bin:/bin"})
    assert done.returncode == ExitStatus.ENVIRONMENT
    assert "too old" in done.stderr and "3.11" in done.stderr


def test_a_signal_while_fios_work_folder_is_removed_still_removes_all_of_it(
    tmp_path, folder, recordings, monkeypatch
):
    # SIGTERM as the run ends, while its fio work folder is being removed: the removal
    # finishes, then the command stops with its status.
    work_parent = tmp_path / "tmp"
    work_parent.mkdir()
    real_rmtree = shutil.rmtree

    def rmtree_after_a_signal(path, *args, **kwargs):
        if Path(path).name.startswith("flashmark-fio-"):
            os.kill(os.getpid(), signal.SIGTERM)  # flashmark's handler runs at once
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree_after_a_signal)
    replay = str(recordings / "quick-a1-card-adaptive")
    env = {"FLASHMARK_FIO_REPLAY": replay, "TMPDIR": str(work_parent)}
    done = flashmark("run", str(folder), "--no-save", env=env)
    assert done.returncode == ExitStatus.TERMINATED, done.stderr
    assert list(work_parent.iterdir()) == [] and list(folder.iterdir()) == []


@pytest.fixture
def device_gone(tmp_path, recordings):
    """A replay of quick-a1-card whose fourth test (rand-write-4k) loses the device."""
    broken = tmp_path / "replay"
    shutil.copytree(recordings / "quick-a1-card", broken)
    for path in broken.glob("rand-write-4k.*"):
        path.unlink()
    for path in (recordings / "folder-device-gone").glob("rand-write-4k*"):
        shutil.copy(path, broken / path.name)
    return broken


def test_a_device_failure_mid_run_exits_5_and_removes_the_test_file(folder, device_gone):
    env = {"FLASHMARK_FIO_REPLAY": str(device_gone)}
    done = flashmark("run", str(folder), "--no-save", "--runtime", "8", env=env)
    assert done.returncode == ExitStatus.DEVICE, done.stderr
    assert "device failed or disappeared" in done.stderr
    assert list(folder.iterdir()) == []


def test_the_tests_measured_before_a_device_failure_are_saved_marked_partial(folder, device_gone):
    env = {"FLASHMARK_FIO_REPLAY": str(device_gone)}
    done = flashmark("run", str(folder), "--runtime", "8", "--json", env=env)
    assert done.returncode == ExitStatus.DEVICE, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "device failed or disappeared" in line
    assert "the 4 test(s) measured before it are saved as result 1, marked partial" in line
    assert "the test file was removed" in line
    document = json.loads(done.stdout)
    assert [test["name"] for test in document["tests"]] == QUICK_TESTS[:4]
    partial = document["partial"]  # failed after 4 of 6 tests
    assert partial["failed_step"] == "rand-write-4k"
    assert partial["not_run"] == ["rand-write-4k-q32"]
    assert partial["exit_status"] == ExitStatus.DEVICE
    assert "device failed or disappeared" in partial["error"]
    saved = json.loads(flashmark("show", "1", "--json", env=env).stdout)
    assert saved == document
    assert list(folder.iterdir()) == []


def test_ram_filesystems_are_refused_unless_buffered(replay_env):
    shm = "/dev/shm"
    if not os.path.ismount(shm):
        pytest.skip("no tmpfs at /dev/shm on this machine")
    done = flashmark("run", shm, "--no-save", "--size", "8M", env=replay_env)
    assert done.returncode == ExitStatus.TARGET
    assert "--buffered" in done.stderr
    buffered = flashmark("run", shm, "--no-save", "--size", "8M", "--buffered", "--json",
                         env=replay_env)  # fmt: skip
    assert buffered.returncode == 0, buffered.stderr
    document = json.loads(buffered.stdout)
    assert document["settings"]["direct"] is False
    assert any("buffered" in warning for warning in document["warnings"])
    assert not [p for p in os.listdir(shm) if p.startswith(".flashmark-")]


def test_profiles_lists_every_profile():
    done = flashmark("profiles", "--json")
    names = [profile["name"] for profile in json.loads(done.stdout)]
    assert names == ["quick", "standard", "full", "a1", "sustained"]


def test_run_carries_the_probe_and_claimed_vs_measured_findings(folder, replay_env):
    # The recorded Pi 5 tree (tests/data/probe/rpi5_a2) under the replayed A1-class card: the
    # card claims C10 U3 V30 A2; the run measures it exactly at the A1 line (1500/500 IOPS,
    # 10 MB/s) and, writes being durable, the end_fsync's 23.5 ms (the emulated card flushing
    # its backing file) puts the sustained write at 9.97 MB/s and the depth-32 writes at 491.
    probe_tree = os.path.join(os.path.dirname(__file__), "..", "data", "probe", "rpi5_a2")
    env = {
        **replay_env,
        "FLASHMARK_SYSFS_ROOT": os.path.join(probe_tree, "sys"),
        "FLASHMARK_PROCFS_ROOT": os.path.join(probe_tree, "proc"),
        "FLASHMARK_DEBUGFS_ROOT": os.path.join(probe_tree, "debug"),
    }
    done = flashmark("run", str(folder), "--json", env=env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["probe"]["schema"] == "flashmark.probe/1"
    card = document["probe"]["devices"][0]["card"]
    assert card["claimed"] == {
        "speed_class": "C10", "uhs_grade": "U3", "video_class": "V30", "app_class": "A2"
    }  # fmt: skip
    findings = document["findings"]
    assert "claims A2; measured 1498/500 IOPS: does not meet A2" in findings[-1]
    assert "claims U3; measured 10.0 MB/s: does not meet U3" in findings
    assert 'device: mmcblk0 (sd): Kingston "SD64G"' in done.stderr
    shown = json.loads(flashmark("show", "1", "--json", env=env).stdout)
    assert shown["probe"] == document["probe"] and shown["findings"] == findings
    table = flashmark("show", "1", env=env).stdout
    assert "finding: claims A2" in table and 'device   mmcblk0 (sd): Kingston "SD64G"' in table
