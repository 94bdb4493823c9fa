"""`flashmark monitor -- COMMAND` as a process: a command killed by signal N exits 128 + N, as a
shell reports it; `--timeout` stops the command and everything in its process group and names
a daemon that left the group; a SIGKILL of flashmark itself still stops the command's group (the
reaper), and a terminal's Ctrl-C goes to the command as a shell's job control gives it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import psutil
import pytest


def monitor(device: str, *args: str, **options) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flashmark", "monitor", device, "--no-save", *args],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, **options,
    )  # fmt: skip


def unique_seconds() -> str:
    """A sleep duration no other test uses: it names this test's sleep processes."""
    return str(1000 + int(uuid.uuid4().hex[:8], 16) % 100000)


def running(seconds: str) -> list[psutil.Process]:
    """Processes whose command line holds `seconds` (this test's sleeps)."""
    return [
        process
        for process in psutil.process_iter(["cmdline"])
        if any(seconds in part for part in process.info["cmdline"] or [])
        and process.pid != os.getpid()
        and _alive(process)
    ]


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def kill(processes: list[psutil.Process]) -> None:
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            continue


def test_a_command_killed_by_a_signal_exits_128_plus_its_number(live_device: str) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGUSR1):
        done = monitor(live_device, "--", "sh", "-c", f"kill -s {sig.name[3:]} $$")
        assert done.returncode == 128 + sig, (sig, done.stderr)
        assert f"killed by {sig.name}" in done.stdout


def test_timeout_stops_the_whole_process_group_and_names_a_daemon(live_device: str) -> None:
    seconds = unique_seconds()
    # a daemon: a session of its own, its output closed (else the pipes stay open)
    script = f"sleep {seconds} & setsid sleep {seconds}.5 >/dev/null 2>&1 & sleep {seconds}.25"
    try:
        done = monitor(live_device, "--timeout", "1", "--", "sh", "-c", script)
        assert done.returncode == 1, done.stderr
        line = done.stderr.strip().splitlines()[-1]
        assert "stopped with everything in its process group" in line
        assert "left running: sleep[" in line and "it left its process group" in line
        left = [p.info["cmdline"] for p in running(seconds) if p.info["cmdline"][0] == "sleep"]
        assert left == [["sleep", f"{seconds}.5"]]  # the daemon, named, and nothing else
    finally:
        kill(running(seconds))


def test_sigkill_of_flashmark_still_stops_the_commands_group(live_device: str) -> None:
    seconds = unique_seconds()
    process = subprocess.Popen(
        [sys.executable, "-m", "flashmark", "monitor", live_device, "--no-save", "--",
         "sh", "-c", f"sleep {seconds} & sleep {seconds}.5"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while len([p for p in running(seconds) if p.info["cmdline"][0] == "sleep"]) < 2:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        process.kill()
        process.wait()
        deadline = time.monotonic() + 10  # the reaper: SIGTERM at once, SIGKILL after 5 s
        while left := running(seconds):
            assert time.monotonic() < deadline, [p.info["cmdline"] for p in left]
            time.sleep(0.05)
    finally:
        kill(running(seconds))
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a terminal")
def test_on_a_terminal_the_command_reads_it_and_gets_its_ctrl_c(live_device: str) -> None:
    seconds = unique_seconds()
    script = f"read line; echo got:$line; sleep {seconds}"
    reader = ["sh", "-c", script]
    inner = f"{sys.executable} -m flashmark monitor {live_device} --no-save -- sh -c '{script}'"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    shell = subprocess.Popen(
        ["script", "-qec", inner, "/dev/null"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    assert shell.stdin is not None
    deadline = time.monotonic() + 30
    while not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == reader]:
        assert time.monotonic() < deadline and shell.poll() is None
        time.sleep(0.05)
    time.sleep(0.5)  # flashmark hands it the terminal right after starting it
    shell.stdin.write(b"hello\n")
    shell.stdin.flush()
    time.sleep(1)
    shell.stdin.write(b"\x03")  # Ctrl-C on the terminal: to its foreground group
    shell.stdin.flush()
    output, _ = shell.communicate(timeout=60)
    text = output.decode(errors="replace")
    assert "got:hello" in text and "killed by SIGINT" in text, text
    assert shell.returncode == 130, text
