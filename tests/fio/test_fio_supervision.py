"""Nothing keeps running: fio is stopped and reaped on every way a run can end.

fio 3.33 forks job processes into sessions of their own; killing its main process once left
4 of 17 job processes writing, and a SIGHUP left the test file held open by a running fio
although the message said it was removed. flashmark now runs fio's jobs as threads, in a
process group of its own, with a parent-death signal (fio/runner.py). Each run here has a
private TMPDIR, so its fio processes are recognised by their command line (the job file's
path) among any other fio on the machine.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from flashmark.errors import ExitStatus
from flashmark.fio import runner
from flashmark.fio.runner import parent_death_prefix
from tests.cli_runner import flashmark, started, wait_for_fio
from tests.direct_io import direct_io_folder


@pytest.fixture
def folder(tmp_path):
    with direct_io_folder(tmp_path) as base:
        target = base / "card"
        target.mkdir()
        yield target
        # A SIGKILLed run leaves its private folder, with the test file in it.
        shutil.rmtree(target)


@pytest.fixture
def private_tmp(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp


def start(folder, private_tmp):
    """A 60 s run of `folder` whose fio processes name `private_tmp` (see our_fio)."""
    options = ("--size", "16M", "--runtime", "60", "--profile", "a1", "--no-save")
    env = {**os.environ, "TMPDIR": str(private_tmp), "FLASHMARK_DB": ""}
    return started("run", folder, *options, env=env)


def our_fio(private_tmp):
    """Every live fio process started for this run (its argv names the private TMPDIR)."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if any(str(private_tmp) in part for part in cmdline) and "--output-format=json" in cmdline:
            found.append(process)
    return found


def wait_for_timed_test(run):
    """fio's process once a timed test (not the preparation) runs, well inside it."""
    fio = psutil.Process(wait_for_fio(run, timed=True))
    time.sleep(1)
    return fio


def error_lines(stderr):
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith("flashmark: error")]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.fio
@pytest.mark.parametrize(
    ("stopped", "sig", "status", "said"),
    [
        ("fio", signal.SIGKILL, ExitStatus.FAILURE, r"fio was killed by SIGKILL during '[\w-]+'"),
        ("flashmark", signal.SIGHUP, ExitStatus.HANGUP, "stopped by SIGHUP"),
        ("flashmark", signal.SIGTERM, ExitStatus.TERMINATED, "stopped by SIGTERM"),
        ("flashmark", signal.SIGINT, ExitStatus.INTERRUPTED, "stopped by SIGINT"),
    ],
)
def test_a_signal_to_fio_or_flashmark_mid_test_ends_the_run_with_nothing_left(
    folder, private_tmp, stopped, sig, status, said
):
    """fio is stopped before the test file is removed, the work folder goes too; a killed fio
    is a failed one."""
    with start(folder, private_tmp) as run:
        fio = wait_for_timed_test(run)
        (fio if stopped == "fio" else run).send_signal(sig)
        _, stderr = run.communicate(timeout=60)
    assert run.returncode == status, stderr
    line = error_lines(stderr)
    assert re.fullmatch(f"flashmark: error: .*{said}; the test file was removed", line), line
    assert our_fio(private_tmp) == []
    assert list(folder.iterdir()) == []
    assert list(private_tmp.iterdir()) == []


@pytest.mark.fio
def test_fio_dies_with_a_sigkilled_flashmark(folder, private_tmp):
    with start(folder, private_tmp) as run:
        fio = wait_for_timed_test(run)
        run.kill()  # no cleanup code runs: only the kernel's parent-death signal can stop fio
        run.communicate(timeout=10)
    try:
        fio.wait(timeout=2)  # reaped by init, or at least dead
    except psutil.TimeoutExpired:
        pytest.fail(f"fio (pid {fio.pid}) still runs 2 s after flashmark was SIGKILLed")
    assert our_fio(private_tmp) == []
    for work in private_tmp.iterdir():  # what the killed run could not remove
        for path in sorted(work.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        work.rmdir()


def test_the_parent_death_signal_stops_a_child_that_writes_nothing():
    """A SIGKILLed flashmark also ends fio through its pipes (fio dies of SIGPIPE at its next
    status line); the parent-death signal does not wait for that. A silent `sleep` started
    the way fio is shows it: it dies with its parent."""
    prefix = parent_death_prefix()
    if not prefix:
        pytest.skip("setpriv with --pdeathsig (util-linux >= 2.33) is not installed")
    starter = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([*sys.argv[1:], 'sleep', '60'], start_new_session=True)\n"
        "print(child.pid, flush=True)\n"
        "child.wait()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", starter, *prefix], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = psutil.Process(int(parent.stdout.readline()))
    try:
        # setpriv sets the signal, then runs sleep: kill the parent only once that happened.
        deadline = time.monotonic() + 10
        while child.name() != "sleep" and time.monotonic() < deadline:
            time.sleep(0.01)
        parent.kill()
        parent.wait(timeout=10)
        child.wait(timeout=2)
    except psutil.TimeoutExpired:
        pytest.fail("the child outlived its SIGKILLed parent by 2 s")
    finally:
        if child.is_running():
            child.kill()


@pytest.mark.fio
def test_a_signal_while_fios_readers_start_stops_the_run_in_one_line(
    folder, private_tmp, monkeypatch
):
    """Ctrl-C as fio's output readers start (the fault tier met it on a busy host): the run
    stops with 130, never with 'cannot join thread before it is started'."""
    real_start = threading.Thread.start

    def start_after_a_signal(thread):
        if getattr(thread, "_target", None) is runner._follow_status:
            os.kill(os.getpid(), signal.SIGINT)  # flashmark's handler runs at once
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start_after_a_signal)
    done = flashmark(
        "run", str(folder), "--size", "4M", "--runtime", "1", "--profile", "a1", "--no-save",
        env={"TMPDIR": str(private_tmp)},
    )  # fmt: skip
    assert done.returncode == ExitStatus.INTERRUPTED, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert list(folder.iterdir()) == [] and list(private_tmp.iterdir()) == []
