"""Safety behaviour with real fio: cleanup on signals and crashes, refusals, read-only runs."""

import hashlib
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import flashmark_script, started, wait_for_fio
from tests.emulation.runs import flashmark_json


def start_run(*args, device=None):
    return started("run", *args, "--no-save", wrap=device.command if device else None)


@pytest.mark.fio
@pytest.mark.parametrize(
    ("sig", "status"),
    [
        (signal.SIGTERM, ExitStatus.TERMINATED),
        (signal.SIGINT, ExitStatus.INTERRUPTED),
        (signal.SIGHUP, ExitStatus.HANGUP),
    ],
)
def test_a_signal_mid_test_stops_fio_and_removes_the_test_file(tmp_path, sig, status):
    with start_run(str(tmp_path), "--size", "16M", "--runtime", "60") as process:
        fio_pid = wait_for_fio(process, timed=True)
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == status, stderr
    assert f"stopped by {sig.name}" in stderr
    assert list(tmp_path.iterdir()) == []
    assert not Path(f"/proc/{fio_pid}").exists() or _zombie(fio_pid)


def _zombie(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


@pytest.mark.fio
def test_fio_dying_mid_test_is_reported_and_the_test_file_removed(tmp_path):
    with start_run(str(tmp_path), "--size", "16M", "--runtime", "60") as process:
        fio_pid = wait_for_fio(process, timed=True)
        os.kill(fio_pid, signal.SIGKILL)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode != 0
    assert "killed by SIGKILL" in stderr or "fio failed" in stderr, stderr
    assert "Traceback" not in stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.root
@pytest.mark.fio
def test_destructive_runs_refuse_a_mounted_device(mounted_card):
    done = flashmark_script("run", mounted_card.device, "--destructive", "--yes", "--no-save",
                            timeout=60)  # fmt: skip
    assert done.returncode == ExitStatus.TARGET
    assert "refusing to write" in done.stderr and "is mounted on" in done.stderr


@pytest.mark.root
@pytest.mark.fio
def test_destructive_runs_need_a_typed_confirmation_without_yes(raw_card):
    before = _digest(raw_card.device)
    done = flashmark_script("run", raw_card.device, "--destructive", "--no-save", timeout=60)
    assert _digest(raw_card.device) == before
    assert done.returncode == ExitStatus.TARGET
    assert "--yes" in done.stderr


@pytest.mark.root
@pytest.mark.fio
def test_a_device_without_destructive_gets_read_tests_only_and_is_not_changed(raw_card):
    with open(raw_card.device, "r+b") as handle:  # recognisable content to compare
        handle.write(os.urandom(16 * 2**20))
    before = _digest(raw_card.device)
    # What ran and that nothing was written is tested, not a figure: 1 s, no ramp
    document = flashmark_json(raw_card, raw_card.device, "--size", "16M", "--runtime", "1",
                              "--ramp", "0", timeout=120)  # fmt: skip
    assert _digest(raw_card.device) == before
    names = [test["name"] for test in document["tests"]]
    assert names == ["seq-read", "rand-read-4k", "rand-read-4k-q32"]
    assert document["tests_skipped"] == ["seq-write", "rand-write-4k", "rand-write-4k-q32"]
    assert document["grades"]["A1"]["pass"] is None
    assert "--readonly" in document["fio"]["command"]


@pytest.mark.root
@pytest.mark.fio
def test_a_destructive_run_on_a_free_device_measures_writes(raw_card):
    document = flashmark_json(
        # 3 s windows: rates are clipped to the window exactly (fio/window.py), so a
        # longer test would prove nothing more here than that writes reached the device
        raw_card, raw_card.device, "--destructive", "--yes", "--size", "16M", "--runtime", "3",
        "--profile", "a1", timeout=180,
    )  # fmt: skip
    rand_write = next(t for t in document["tests"] if t["name"] == "rand-write-4k")
    assert rand_write["write"]["iops"] == pytest.approx(raw_card.caps.write_iops, rel=0.03)


@pytest.mark.root
@pytest.mark.fio
def test_a_device_vanishing_mid_run_exits_with_the_device_status(mounted_card):
    losetup = ["losetup", "--noheadings", "--output", "BACK-FILE", mounted_card.device]
    backing = subprocess.run(losetup, capture_output=True, text=True, check=True).stdout.strip()
    folder = str(mounted_card.mount_point)
    with start_run(folder, "--size", "16M", "--runtime", "30", device=mounted_card) as process:
        wait_for_fio(process, timed=True)

        def vanish():
            os.truncate(backing, 0)
            subprocess.run(["losetup", "--set-capacity", mounted_card.device], check=True)

        threading.Thread(target=vanish).start()
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == ExitStatus.DEVICE, stderr
    assert "device failed or disappeared" in stderr


@pytest.mark.root
def test_a_read_only_filesystem_is_refused_before_anything_runs(mounted_card):
    folder = str(mounted_card.mount_point)
    subprocess.run(["mount", "-o", "remount,ro", folder], check=True)
    done = flashmark_script("run", folder, "--no-save", timeout=60)
    subprocess.run(["mount", "-o", "remount,rw", folder], check=True)
    assert done.returncode == ExitStatus.TARGET
    assert "read-only" in done.stderr


def _digest(path, length=16 * 2**20):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(length)).hexdigest()


@pytest.mark.root
@pytest.mark.fio
@pytest.mark.parametrize("kind", ["folder", "device"])
def test_a_second_run_on_the_same_target_refuses_while_the_first_holds_it(request, kind):
    device = request.getfixturevalue("mounted_card" if kind == "folder" else "raw_card")
    target = str(device.mount_point) if kind == "folder" else device.device
    with start_run(target, "--size", "4M", "--runtime", "2", "--ramp", "0", device=device) as first:
        wait_for_fio(first, timed=kind == "folder")
        second = flashmark_script("run", target, "--size", "4M", "--no-save", timeout=60)
        assert second.returncode == ExitStatus.TARGET, second.stderr
        last = second.stderr.strip().splitlines()[-1]
        assert (
            f"is being measured by another flashmark (pid {first.pid}, flashmark run {target} "
            in last
        )
        assert f"on the same device {Path(device.device).name}: " in last
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        assert "rand-write-4k-q32" in out or kind == "device"
    if kind == "folder":
        assert [p.name for p in Path(target).iterdir()] == ["lost+found"]
