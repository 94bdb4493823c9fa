"""The folder's own lock, as a flashmark from before device locks holds it: held by another
process, it refuses at once with its pid and command; one process may hold the same folder
twice; a killed holder frees it. The device locks are tested in test_device_lock.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from flashmark.system import lock_files
from flashmark.system.target_lock import TargetBusy, held, held_path, holder_pid, refuse_if_busy
from tests.cli_runner import flashmark
from tests.direct_io import takes_direct_io

_HOLD = (
    "import fcntl, os, sys, time\n"
    "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "time.sleep(120)\n"
)


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock on tmp_path/card, as a running flashmark did before it
    locked devices."""
    (tmp_path / "card").mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(tmp_path / "card")], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    yield process
    process.kill()
    process.wait()


def test_a_folder_another_process_holds_is_refused_naming_its_pid(tmp_path, holder):
    with pytest.raises(TargetBusy, match=rf"by another flashmark \(pid {holder.pid}, python -c "):
        refuse_if_busy(str(tmp_path / "card"))
    assert holder_pid(os.stat(tmp_path / "card")) == holder.pid


def test_a_killed_holder_frees_the_folder(tmp_path, holder):
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with held_path(str(tmp_path / "card")):
        assert holder_pid(os.stat(tmp_path / "card")) == os.getpid()
    assert holder_pid(os.stat(tmp_path / "card")) is None


def test_one_process_holds_the_same_folder_once(tmp_path):
    first = os.open(tmp_path, os.O_RDONLY)
    second = os.open(tmp_path, os.O_RDONLY)  # another open file: flock would refuse it
    try:
        with held(first, str(tmp_path)), held(second, str(tmp_path)):
            pass
        with held(second, str(tmp_path)):  # released by the outer hold's end
            pass
    finally:
        os.close(first)
        os.close(second)


def test_a_second_run_on_a_held_folder_refuses_with_one_line_and_writes_nothing(
    tmp_path, holder, recordings
):
    env = {"FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive")}
    commands = [
        ("run", tmp_path / "card", "--no-save"),
        ("workload", "pkg-install", tmp_path / "card", "--scale", "0.01", "--no-save"),
    ]
    if takes_direct_io(tmp_path):  # a surface scan refuses a RAM filesystem before that
        commands.append(("surface", tmp_path / "card", "--size", "4M", "--no-save"))
    for argv in commands:
        done = flashmark(*argv, env=env)
        assert done.returncode == ExitStatus.TARGET, done.stderr
        [line] = [line for line in done.stderr.splitlines() if "error" in line]
        assert f"another flashmark (pid {holder.pid}, python -c " in line
        assert done.stderr.strip().endswith(line)
        assert list((tmp_path / "card").iterdir()) == []


@pytest.mark.parametrize(
    ("run_lock_mode", "preferred", "chosen"),
    [
        (0o1777, None, "preferred"),  # Debian's /run/lock: any user may make the folder
        (0o755, None, "fallback"),  # a user could not make it: every user takes /tmp's
        (0o755, "folder", "preferred"),  # made already (by root, or a package)
        (0o1777, "symlink", "fallback"),  # never followed: every user agrees on /tmp's
    ],
)
def test_every_user_finds_the_same_lock_folder(
    tmp_path, monkeypatch, run_lock_mode, preferred, chosen
):
    run_lock = tmp_path / "run-lock"
    run_lock.mkdir()
    run_lock.chmod(run_lock_mode)
    paths = {"preferred": run_lock / "flashmark", "fallback": tmp_path / "tmp-flashmark-locks"}
    if preferred == "folder":
        paths["preferred"].mkdir()
    elif preferred == "symlink":
        paths["preferred"].symlink_to(tmp_path)
    monkeypatch.delenv(lock_files.LOCK_DIR_ENV)
    monkeypatch.setattr(lock_files, "_RUN_LOCK", run_lock)
    monkeypatch.setattr(lock_files, "_PREFERRED", paths["preferred"])
    monkeypatch.setattr(lock_files, "_FALLBACK", paths["fallback"])
    assert lock_files.lock_folder_path() == paths[chosen]
    monkeypatch.setenv(lock_files.LOCK_DIR_ENV, str(tmp_path / "given"))
    assert lock_files.lock_folder_path() == tmp_path / "given"


def test_a_lock_folder_flashmark_makes_is_sticky_and_writable_by_all(tmp_path, monkeypatch):
    monkeypatch.setenv(lock_files.LOCK_DIR_ENV, str(tmp_path / "locks"))
    old_umask = os.umask(0o077)  # a private umask takes nothing away from it
    try:
        with held_path(str(tmp_path)):
            pass
    finally:
        os.umask(old_umask)
    assert (tmp_path / "locks").stat().st_mode & 0o7777 == 0o1777
    lock_files_made = list((tmp_path / "locks").iterdir())
    assert {path.stat().st_mode & 0o7777 for path in lock_files_made} == {0o444}
    status = os.stat(tmp_path)  # its filesystem's device, and the disk of a partition
    assert f"{os.major(status.st_dev)}:{os.minor(status.st_dev)}.lock" in {
        path.name for path in lock_files_made
    }


def test_a_run_whose_lock_folder_cannot_be_used_stops_with_one_line_and_writes_nothing(
    tmp_path, recordings
):
    (tmp_path / "card").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "locks").symlink_to(tmp_path / "elsewhere")  # as another user could plant it
    done = flashmark(
        "run",
        tmp_path / "card",
        "--no-save",
        env={
            "FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive"),
            lock_files.LOCK_DIR_ENV: str(tmp_path / "locks"),
        },
    )
    assert done.returncode == ExitStatus.ENVIRONMENT, done.stderr
    [line] = [line for line in done.stderr.splitlines() if "error" in line]
    assert f"cannot use flashmark's lock {tmp_path / 'locks'} (a symbolic link)" in line
    assert f"set {lock_files.LOCK_DIR_ENV} to a folder every user" in line
    assert done.stderr.strip().endswith(line)
    assert list((tmp_path / "card").iterdir()) == []
    assert list((tmp_path / "elsewhere").iterdir()) == []
