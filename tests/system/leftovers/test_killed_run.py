"""A real run killed with SIGKILL (fio killed too) beside a live run on the same card: `flashmark
clean` removes the killed run's test file and fio work folder, and the live run finishes as if
nothing had happened."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from flashmark.system.lock_files import LOCK_DIR_ENV
from tests.cli_runner import flashmark_script
from tests.direct_io import takes_direct_io

_REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def card(tmp_path: Path) -> Iterator[Path]:
    """A folder on a filesystem with direct I/O: pytest's own if it has it (not when /tmp is a
    tmpfs), else a folder in the repository, removed afterwards."""
    if takes_direct_io(tmp_path):
        yield tmp_path / "card"
        return
    if not takes_direct_io(_REPO):
        pytest.skip(f"neither {tmp_path} nor {_REPO} takes direct I/O (O_DIRECT)")
    made = Path(tempfile.mkdtemp(prefix=".test-card-", dir=_REPO))
    try:
        yield made / "card"
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(made)], check=True)


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """Runs the test starts; any still going at the end are killed with everything they
    started (fio and its job processes), then reaped."""
    runs: list[subprocess.Popen[str]] = []
    yield runs
    for run in runs:
        if run.poll() is None:
            kill_tree(run)
        run.communicate()


def kill_tree(run: subprocess.Popen[str]) -> None:
    """SIGKILL flashmark and, separately, every process under it: a SIGKILL reaches only the
    process it is sent to, and fio would otherwise go on writing."""
    try:
        below = psutil.Process(run.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        below = []
    run.send_signal(signal.SIGKILL)
    run.wait()
    for process in below:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(signal.SIGKILL)
    _gone, alive = psutil.wait_procs(below, timeout=10)
    assert not alive, alive


def start_run(card: Path, temp: Path, locks: Path | None = None) -> subprocess.Popen[str]:
    """The quick profile without a ramp: 6 tests of 2 s, so the live run, caught in its first
    timed test, is still running (10 s left) while the killed one is cleaned up. With `locks`,
    the run takes its device locks in that folder instead of the test's."""
    argv = [sys.executable, "-m", "flashmark", "run", str(card)]
    argv += ["--size", "4M", "--runtime", "2", "--ramp", "0", "--no-save"]
    env = {**os.environ, "TMPDIR": str(temp), "FLASHMARK_DB": ""}
    if locks is not None:
        env[LOCK_DIR_ENV] = str(locks)
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env,
    )  # fmt: skip


def owned(folder: Path, prefix: str, pid: int) -> list[Path]:
    return sorted(folder.glob(f"{prefix}{pid}-*"))


def wait_mid_test(run: subprocess.Popen[str], card: Path, temp: Path) -> tuple[Path, Path]:
    """Wait until fio runs a timed test (past the preparation); the run's test file and work
    folder."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        files = owned(card, ".flashmark-", run.pid)
        folders = owned(temp, "flashmark-fio-", run.pid)
        jobs = [job.name for job in folders[0].glob("*.fio")] if folders else []
        if files and fio_below(run) and any(name != "prepare.fio" for name in jobs):
            return files[0], folders[0]
        time.sleep(0.1)
    raise AssertionError("fio never started a timed test")


def fio_below(run: subprocess.Popen[str]) -> bool:
    for process in psutil.Process(run.pid).children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):  # a process may end while we look
            if process.name() == "fio":
                return True
    return False


def inode(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_dev, status.st_ino


@pytest.mark.fio
def test_clean_after_sigkill_removes_the_killed_runs_files_and_never_a_live_runs(
    card: Path, tmp_path: Path, started: list[subprocess.Popen[str]]
) -> None:
    temp = tmp_path / "temp"
    card.mkdir()
    temp.mkdir()
    (card / "notes.txt").write_text("the user's own")
    # One run per device (a second one refuses while the first holds it): the live run
    # measures a folder beside the killed one's, on the same card, with its locks in a folder
    # of its own, as a run the lock cannot see does (another container's /run/lock).
    beside = card / "beside"
    beside.mkdir()
    (tmp_path / "other-locks").mkdir()
    killed, live = start_run(card, temp), start_run(beside, temp, tmp_path / "other-locks")
    started += [killed, live]
    killed_file, killed_folder = wait_mid_test(killed, card, temp)
    live_file, live_folder = wait_mid_test(live, beside, temp)
    live_before = inode(live_file), inode(live_folder)

    kill_tree(killed)
    assert killed_file.exists() and killed_folder.exists()  # what a SIGKILL leaves

    lines = []
    for folder in (card, beside):
        done = flashmark_script("clean", folder, env={"TMPDIR": str(temp)}, timeout=60)
        assert done.returncode == 0, done.stderr
        lines += done.stdout.splitlines()
    for path in (killed_file, killed_folder):
        assert not path.exists()
        assert any(line.startswith("removed") and str(path) in line for line in lines), lines
    for path in (live_file, live_folder):
        assert any(line.startswith("left") and str(path) in line for line in lines), lines
    assert (inode(live_file), inode(live_folder)) == live_before

    out, err = live.communicate(timeout=180)
    assert live.returncode == 0, err
    assert "rand-write-4k-q32" in out
    assert sorted(p.name for p in beside.iterdir()) == []
    beside.rmdir()
    assert sorted(p.name for p in card.iterdir()) == ["notes.txt"]
    assert (card / "notes.txt").read_text() == "the user's own"
    assert list(temp.iterdir()) == []
