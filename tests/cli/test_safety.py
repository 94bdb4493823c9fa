"""Safety behaviour with real fio: cleanup on signals and crashes, refusals, read-only runs."""

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import started
from tests.emulation.runs import flashmark_json
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

CARD = DeviceCaps("card", read_iops=2000, write_iops=800, read_bps=50_000_000, write_bps=20_000_000)


def start_run(*args, device=None):
    return started("run", *args, "--no-save", wrap=device.command if device else None)


def wait_for_fio_test(process, folder, timeout=60):
    """Wait until a timed test (not the preparation) is running; return fio's pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = subprocess.run(
            ["pgrep", "-P", str(process.pid), "fio"], capture_output=True, text=True
        ).stdout.split()
        test_files = list(Path(folder).glob(".flashmark-*"))
        if children and test_files and _running_test(children[0]):
            return int(children[0])
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    raise AssertionError("fio never started a timed test")


def _running_test(pid):
    try:
        if _zombie(pid):  # the preparation's fio, exited and not yet reaped: no command line
            return False
        return "prepare.fio" not in Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return False


def fio_processes_using(workdir_marker):
    out = subprocess.run(["pgrep", "-af", "fio"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if workdir_marker in line]


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
        fio_pid = wait_for_fio_test(process, tmp_path)
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
        fio_pid = wait_for_fio_test(process, tmp_path)
        os.kill(fio_pid, signal.SIGKILL)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode != 0
    assert "killed by SIGKILL" in stderr or "fio failed" in stderr, stderr
    assert "Traceback" not in stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.root
@pytest.mark.fio
def test_destructive_runs_refuse_a_mounted_device():
    with EmulatedDevice(CARD, size_bytes=128 * 2**20) as device:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "flashmark",
                "run",
                device.device,
                "--destructive",
                "--yes",
                "--no-save",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == ExitStatus.TARGET
    assert "refusing to write" in done.stderr and "is mounted on" in done.stderr


@pytest.mark.root
@pytest.mark.fio
def test_destructive_runs_need_a_typed_confirmation_without_yes():
    with EmulatedDevice(CARD, size_bytes=128 * 2**20, filesystem=False) as device:
        before = _digest(device.device)
        done = subprocess.run(
            [sys.executable, "-m", "flashmark", "run", device.device, "--destructive", "--no-save"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert _digest(device.device) == before
    assert done.returncode == ExitStatus.TARGET
    assert "--yes" in done.stderr


@pytest.mark.root
@pytest.mark.fio
def test_a_device_without_destructive_gets_read_tests_only_and_is_not_changed():
    with EmulatedDevice(CARD, size_bytes=128 * 2**20, filesystem=False) as device:
        with open(device.device, "r+b") as handle:  # recognisable content to compare
            handle.write(os.urandom(16 * 2**20))
        before = _digest(device.device)
        # What ran and that nothing was written is tested, not a figure: 1 s, no ramp
        document = flashmark_json(device, device.device, "--size", "16M", "--runtime", "1",
                                  "--ramp", "0", timeout=120)  # fmt: skip
        assert _digest(device.device) == before
    assert [t["name"] for t in document["tests"]] == [
        "seq-read",
        "rand-read-4k",
        "rand-read-4k-q32",
    ]
    assert document["tests_skipped"] == ["seq-write", "rand-write-4k", "rand-write-4k-q32"]
    assert document["grades"]["A1"]["pass"] is None
    assert "--readonly" in document["fio"]["command"]


@pytest.mark.root
@pytest.mark.fio
def test_a_destructive_run_on_a_free_device_measures_writes():
    with EmulatedDevice(CARD, size_bytes=128 * 2**20, filesystem=False) as device:
        document = flashmark_json(
            # 3 s windows: rates are clipped to the window exactly (fio/window.py), so a
            # longer test would prove nothing more here than that writes reached the device
            device, device.device, "--destructive", "--yes", "--size", "16M", "--runtime", "3",
            "--profile", "a1", timeout=180,
        )  # fmt: skip
    rand_write = next(t for t in document["tests"] if t["name"] == "rand-write-4k")
    assert rand_write["write"]["iops"] == pytest.approx(CARD.write_iops, rel=0.03)


@pytest.mark.root
@pytest.mark.fio
def test_a_device_vanishing_mid_run_exits_with_the_device_status():
    with EmulatedDevice(CARD, size_bytes=128 * 2**20) as device:
        backing = subprocess.run(
            ["losetup", "--noheadings", "--output", "BACK-FILE", device.device],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        run = start_run(str(device.mount_point), "--size", "16M", "--runtime", "30", device=device)
        with run as process:
            wait_for_fio_test(process, device.mount_point)

            def vanish():
                os.truncate(backing, 0)
                subprocess.run(["losetup", "--set-capacity", device.device], check=True)

            threading.Thread(target=vanish).start()
            _, stderr = process.communicate(timeout=120)
    assert process.returncode == ExitStatus.DEVICE, stderr
    assert "device failed or disappeared" in stderr


@pytest.mark.root
def test_a_read_only_filesystem_is_refused_before_anything_runs():
    with EmulatedDevice(CARD, size_bytes=128 * 2**20) as device:
        subprocess.run(["mount", "-o", "remount,ro", str(device.mount_point)], check=True)
        done = subprocess.run(
            [sys.executable, "-m", "flashmark", "run", str(device.mount_point), "--no-save"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        subprocess.run(["mount", "-o", "remount,rw", str(device.mount_point)], check=True)
    assert done.returncode == ExitStatus.TARGET
    assert "read-only" in done.stderr


def _digest(path, length=16 * 2**20):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(length)).hexdigest()


@pytest.mark.root
@pytest.mark.fio
@pytest.mark.parametrize("kind", ["folder", "device"])
def test_a_second_run_on_the_same_target_refuses_while_the_first_holds_it(tmp_path, kind):
    with EmulatedDevice(CARD, size_bytes=128 * 2**20, filesystem=kind == "folder") as device:
        target = str(device.mount_point) if kind == "folder" else device.device
        with start_run(
            target, "--size", "4M", "--runtime", "2", "--ramp", "0", device=device
        ) as first:
            if kind == "folder":
                wait_for_fio_test(first, target)
            else:
                deadline = time.monotonic() + 60
                while subprocess.run(["pgrep", "-P", str(first.pid), "fio"]).returncode != 0:
                    assert time.monotonic() < deadline and first.poll() is None
                    time.sleep(0.1)
            second = subprocess.run(
                [sys.executable, "-m", "flashmark", "run", target, "--size", "4M", "--no-save"],
                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
            )  # fmt: skip
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
