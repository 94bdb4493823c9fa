"""The process entry point of `flashmark` and `python -m flashmark`: signal handlers first.

Importing the command line takes a while (click, then the command that runs). A signal in that
time used to print a KeyboardInterrupt traceback (SIGINT) or end the process without a word
(SIGTERM, SIGHUP). So before anything else is imported, SIGINT, SIGTERM and SIGHUP get a
handler that prints one line and exits with 128 + the signal's number, the shell's convention
(README "Exit codes": 130, 143, 129).

Exiting at once (os._exit) is right here because nothing needs undoing yet: the commands that
create something (a test file, a work folder, a child process) replace this handler with
flashmark.signals.signals_raise() for as long as they must clean up, and writes that must not
stop half-way (saving to the history, renaming an export into place) hold a signal back with
flashmark.signals.signals_deferred(). Both put this handler back when they end.

Only contextlib, os and signal (Python's own start-up loads them) are imported before
install_stop_handlers(): every import before it widens the window in which Python's own
KeyboardInterrupt handler is in charge.
"""

from __future__ import annotations

import contextlib
import os
import signal
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def exit_status_for(signum: int) -> int:
    """128 + the signal's number: what a shell reports for a process killed by it."""
    return 128 + signum


def stop_at_once(signum: int, frame: FrameType | None) -> None:
    """Say which signal stopped flashmark, in one line, and exit with its status."""
    for sig in STOP_SIGNALS:  # a second signal must not cut the line or change the status
        signal.signal(sig, signal.SIG_IGN)
    # os.write, not print: the handler may run while the main thread is inside sys.stderr's
    # own write, and a buffered stream refuses a reentrant call.
    # OSError: stderr closed or a broken pipe; the exit status still says what happened.
    with contextlib.suppress(OSError):
        os.write(2, f"flashmark: stopped by {signal.Signals(signum).name}\n".encode())
    os._exit(exit_status_for(signum))


def install_stop_handlers() -> None:
    for sig in STOP_SIGNALS:
        # An ignored signal stays ignored: `nohup flashmark run` must survive its SIGHUP, and a
        # shell starts background jobs with SIGINT ignored.
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, stop_at_once)


def main() -> None:
    """The console script `flashmark` (pyproject.toml) and `python -m flashmark`."""
    install_stop_handlers()
    from flashmark.cli import main as command_line

    # prog_name: `python -m flashmark --help` would otherwise print "Usage: python -m ...".
    command_line(prog_name="flashmark")
