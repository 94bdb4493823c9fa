"""Run one command while its device is watched: start it, forward its output, wait for it (up to
a time limit), and stop it and everything it started on a time-out or any exception.

It leads a process group of its own (the terminal's foreground group when flashmark holds
the terminal), stopped whole: SIGTERM, then SIGKILL after TERMINATE_GRACE_S. Against
flashmark's own death a small reaper (sh, own session) reads a pipe and stops the group at end
of file without "done": `setpriv --pdeathsig` would kill the command alone. flashmark is a
child subreaper meanwhile (prctl(2)), so a daemon that left the group is found and named.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psutil

from flashmark.errors import UsageError
from flashmark.system.signals import signals_held

# How long a command gets to end after SIGTERM before it is killed: enough for apt or dpkg to
# finish writing their state, short enough that a stuck command does not hold the run.
TERMINATE_GRACE_S = 5.0
_POLL_S = 0.05
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
# The reaper (module doc): the group on its first line, "done" on its second; EOF first means
# flashmark died. `kill -s 0` tells whether anything is left in the group.
_REAPER = """
trap '' INT TERM HUP
read -r group || exit 0
read -r state && exit 0
kill -s TERM -- "-$group" 2>/dev/null || exit 0
i=0
while [ "$i" -lt {ticks} ]; do
    kill -s 0 -- "-$group" 2>/dev/null || exit 0
    sleep {tick}
    i=$((i + 1))
done
kill -s KILL -- "-$group" 2>/dev/null
exit 0
"""


@dataclass(frozen=True)
class CommandOutcome:
    status: int  # the command's exit status (negative: the signal that ended it)
    timed_out: bool  # stopped by flashmark after the time limit
    # processes the command started that still run, "name[pid]", with why (module doc)
    left_running: tuple[str, ...] = ()

    @property
    def exit_status(self) -> int:
        """What a shell reports for it: the status, or 128 + the signal that ended it."""
        return 128 - self.status if self.status < 0 else self.status


def run_supervised(
    command: tuple[str, ...], *, timeout_s: float | None, output_to_stderr: bool
) -> CommandOutcome:
    """Run `command` to its end or `timeout_s`. With `output_to_stderr` its stdout goes to
    flashmark's stderr (stdout then carries only flashmark's JSON document)."""
    stdout_target = _stderr_fd() if output_to_stderr else None
    process: subprocess.Popen[bytes] | None = None
    reaper: _Reaper | None = None
    terminal = _Terminal()
    try:
        reaper = _Reaper()
        with _subreaper():
            try:
                # A signal between starting the command and taking charge of it would leave it
                # running without an owner: raised once `process` is set, inside this `try`.
                with signals_held():
                    try:
                        process = subprocess.Popen(
                            list(command), stdout=stdout_target, process_group=0
                        )
                    except OSError as error:
                        raise UsageError(
                            f"cannot run {command[0]!r}: {error.strerror or error}"
                        ) from None
                    reaper.watch(process.pid)
                    terminal.give(process.pid)
                    forwarder = (
                        _forward_to_stderr(process) if stdout_target == subprocess.PIPE else None
                    )
                status = process.wait(timeout=timeout_s)
                if forwarder is not None:
                    forwarder.join()
            except subprocess.TimeoutExpired:
                assert process is not None
                status = _stop_group(process)
                return CommandOutcome(status, True, _left_running(process.pid, reaper.pid))
            except BaseException:
                if process is not None:
                    _stop_group(process)
                raise
            finally:
                terminal.take_back()
                reaper.done()
            return CommandOutcome(status, False, _left_running(process.pid, reaper.pid))
    finally:
        if reaper is not None:
            reaper.close()


def _stop_group(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM to the command's group, SIGKILL to what is left after the grace time; the
    leader reaped last, so that its group id cannot name another group meanwhile."""
    group = process.pid
    _signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + TERMINATE_GRACE_S
    while time.monotonic() < deadline and _group_alive(group):
        time.sleep(_POLL_S)
    _signal_group(group, signal.SIGKILL)
    return process.wait()


def _signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _group_alive(group: int) -> bool:
    """Whether a process of the group still runs (a zombie leader, unreaped, does not)."""
    for process in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(process.pid) == group and process.status() != psutil.STATUS_ZOMBIE:
                return True
    return False


def _left_running(group: int, reaper: int) -> tuple[str, ...]:
    """What the command started that still runs: flashmark's children (adopted as subreaper)
    but the reaper, and whatever is still in the command's group."""
    _reap_adopted(group, reaper)
    found: dict[int, str] = {}
    me = os.getpid()
    for process in psutil.process_iter(["pid", "name", "ppid"]):
        with contextlib.suppress(psutil.Error, OSError):
            if process.pid in (me, reaper) or process.status() == psutil.STATUS_ZOMBIE:
                continue
            in_group = os.getpgid(process.pid) == group
            if in_group or process.info["ppid"] == me:
                why = "in its process group" if in_group else "it left its process group"
                found[process.pid] = f"{process.info['name']}[{process.pid}] ({why})"
    return tuple(found[pid] for pid in sorted(found))


def _reap_adopted(command: int, reaper: int) -> None:
    """Reap the adopted children that ended (zombies): never the command or the reaper,
    whose owners wait for them."""
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children():
            with contextlib.suppress(psutil.Error, ChildProcessError, OSError):
                if child.pid not in (command, reaper) and child.status() == psutil.STATUS_ZOMBIE:
                    os.waitpid(child.pid, os.WNOHANG)


@contextlib.contextmanager
def _subreaper() -> Iterator[None]:
    """flashmark as a child subreaper for the block (module doc); nothing where prctl fails."""
    prctl = _prctl()
    enabled = prctl is not None and prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    try:
        yield
    finally:
        if enabled and prctl is not None:
            prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _prctl() -> Callable[..., int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        function: Callable[..., int] = ctypes.CDLL(name, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


class _Reaper:
    """The watcher that stops the command's group if flashmark dies (module doc)."""

    def __init__(self) -> None:
        ticks = round(TERMINATE_GRACE_S / 0.1)
        self._process = subprocess.Popen(
            ["sh", "-c", _REAPER.format(ticks=ticks, tick="0.1")],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # no terminal signal reaches it
        )

    @property
    def pid(self) -> int:
        return self._process.pid

    def watch(self, group: int) -> None:
        self._send(f"{group}\n")

    def done(self) -> None:
        self._send("done\n")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        try:
            self._process.wait(timeout=TERMINATE_GRACE_S + 5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _send(self, line: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            assert self._process.stdin is not None
            self._process.stdin.write(line.encode())
            self._process.stdin.flush()


class _Terminal:
    """Hands the terminal's foreground to the command's group while it runs, when flashmark
    holds it (a shell's job control, module doc); nothing without a terminal."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self._given = False
        with contextlib.suppress(OSError, ValueError, AttributeError):
            fd = sys.stdin.fileno()
            if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
                self._fd = fd

    def give(self, group: int) -> None:
        if self._fd is None:
            return
        with _background_allowed(), contextlib.suppress(OSError):
            os.tcsetpgrp(self._fd, group)
            self._given = True
        # It may have tried the terminal before it was its own (stopped by SIGTTIN).
        _signal_group(group, signal.SIGCONT)

    def take_back(self) -> None:
        if self._fd is None or not self._given:
            return
        with _background_allowed(), contextlib.suppress(OSError):
            os.tcsetpgrp(self._fd, os.getpgrp())
        self._given = False


@contextlib.contextmanager
def _background_allowed() -> Iterator[None]:
    """SIGTTOU ignored: tcsetpgrp(3) from a background group would stop flashmark with it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGTTOU, previous)


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
