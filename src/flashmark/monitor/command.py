"""Run one command while its device is watched: start it, forward its output where asked, wait
for it (up to a time limit), and stop and reap it on a time-out or on any exception, a signal
included. The caller holds the DiskMonitor; this module only supervises the process.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from dataclasses import dataclass

from flashmark.errors import UsageError
from flashmark.system.signals import signals_held

# How long a command gets to end after SIGTERM before it is killed: enough for apt or dpkg to
# finish writing their state, short enough that a stuck command does not hold the run.
TERMINATE_GRACE_S = 5.0


@dataclass(frozen=True)
class CommandOutcome:
    status: int  # the command's exit status (negative: the signal that ended it)
    timed_out: bool  # stopped by flashmark after the time limit


def run_supervised(
    command: tuple[str, ...], *, timeout_s: float | None, output_to_stderr: bool
) -> CommandOutcome:
    """Run `command` to its end or `timeout_s`. With `output_to_stderr` its stdout goes to
    flashmark's stderr (stdout then carries only flashmark's JSON document)."""
    stdout_target = _stderr_fd() if output_to_stderr else None
    process: subprocess.Popen[bytes] | None = None
    try:
        # A signal between starting the command and taking charge of it would leave it running
        # without an owner (seen: a `sleep` left by an INT 0.3 s into `flashmark monitor`): it
        # is raised once `process` is set, inside this `try`, which stops it.
        with signals_held():
            try:
                process = subprocess.Popen(list(command), stdout=stdout_target)
            except OSError as error:
                raise UsageError(f"cannot run {command[0]!r}: {error.strerror or error}") from None
            forwarder = _forward_to_stderr(process) if stdout_target == subprocess.PIPE else None
        status = process.wait(timeout=timeout_s)
        if forwarder is not None:
            forwarder.join()
    except subprocess.TimeoutExpired:
        assert process is not None
        return CommandOutcome(_stop(process), timed_out=True)
    except BaseException:
        if process is not None:
            _stop(process)
        raise
    return CommandOutcome(status, timed_out=False)


def _stderr_fd() -> int:
    """stderr's file descriptor, or PIPE when stderr is not a file (embedded, tests)."""
    try:
        return sys.stderr.fileno()
    except (OSError, ValueError):
        return subprocess.PIPE


def _forward_to_stderr(process: subprocess.Popen[bytes]) -> threading.Thread:
    def copy() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stderr.write(line.decode(errors="replace"))

    thread = threading.Thread(target=copy, name="flashmark-command-output", daemon=True)
    thread.start()
    return thread


def _stop(process: subprocess.Popen[bytes]) -> int:
    """Terminate, then kill after a grace period; always reap."""
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        return process.wait(timeout=TERMINATE_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
