"""The process entry point of `flashmark` and `python -m flashmark`: signal handlers first.

Importing the command line takes a while, so before anything else is imported SIGINT, SIGTERM
and SIGHUP get a handler that prints one line and exits at once with 128 + the signal's number
(README "Exit codes"): nothing needs undoing yet. Commands that create something replace it
with flashmark.system.signals.signals_raise() while they must clean up. Only contextlib, os,
signal and sys are imported before install_stop_handlers(): each import before it widens the
window in which Python's own KeyboardInterrupt handler is in charge. A Ctrl-C that CPython's
start-up caught and dropped before this module ran is honoured too, where CPython left a trace
of it (interrupted_while_python_started).
"""

# No `from __future__ import annotations` here, unlike elsewhere: it is one more module to
# import before the handlers are set, and Python 3.11 evaluates these annotations anyway.
import os
import sys

try:
    import contextlib
    import signal
    from types import FrameType
except KeyboardInterrupt:  # Ctrl-C while these load (Python's handler): the same answer
    os.write(2, b"flashmark: stopped by SIGINT\n")
    os._exit(130)

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


def standard_streams() -> None:
    """Make stdin, stdout and stderr safe to use; stop at once when stdout is closed.
    A closed descriptor 0, 1 or 2 is opened on /dev/null, or the next file flashmark opens
    would get its number and stdout's text; a closed stdout then stops flashmark before it
    measures (exit 3). Text the locale cannot encode is printed escaped (backslashreplace)."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        opened = os.open(os.devnull, os.O_RDWR)
        if opened != fd:
            os.dup2(opened, fd)
            os.close(opened)
    if 2 in closed or sys.stderr is None:
        sys.stderr = open(2, "w", errors="backslashreplace", closefd=False)  # noqa: SIM115
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):
                reconfigure(errors="backslashreplace")
    if 1 in closed:
        with contextlib.suppress(OSError):
            os.write(
                2,
                b"flashmark: error: stdout is closed (started with >&- or similar): flashmark "
                b"prints its results there; give it a file, a pipe or /dev/null\n",
            )
        os._exit(3)


def interrupted_while_python_started() -> bool:
    """Whether a Ctrl-C reached Python's own handler while CPython checked if the script's
    path is an import path entry, before any code of flashmark's ran. CPython (Modules/main.c,
    pymain_get_importer) prints that KeyboardInterrupt after "Failed checking if argv[0] is an
    import path entry" and runs the script anyway; PyErr_Print keeps it in sys.last_value
    (sys.last_exc from Python 3.12), the only trace of that Ctrl-C."""
    for name in ("last_exc", "last_value"):
        if isinstance(getattr(sys, name, None), KeyboardInterrupt):
            return True
    return False


def main() -> None:
    """The console script `flashmark` (pyproject.toml) and `python -m flashmark`."""
    try:
        install_stop_handlers()
    except KeyboardInterrupt:  # a Ctrl-C that Python's handler took just before ours was set
        stop_at_once(signal.SIGINT, None)
    if interrupted_while_python_started():
        stop_at_once(signal.SIGINT, None)
    standard_streams()
    from flashmark.cli import main as command_line

    try:
        # prog_name: `python -m flashmark --help` would otherwise print "Usage: python -m ...".
        command_line(prog_name="flashmark")
        status = 0
    except SystemExit as done:  # how click ends every command, success included
        status = _exit_status(done.code)
    _exit(status)


def _exit_status(code: object) -> int:
    """What Python makes of SystemExit(code): None is 0, a number itself, text is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    with contextlib.suppress(OSError, ValueError):
        print(code, file=sys.stderr)
    return 1


def _exit(status: int) -> None:
    """Flush what was printed and end the process, skipping the interpreter's teardown.

    The teardown first puts the default action back on every signal (CPython's
    _PySignal_Fini) and then spends tens of milliseconds freeing modules: a Ctrl-C then would
    kill the process by the signal instead of giving its documented status. Nothing is lost by
    skipping it: flashmark's threads are daemons that were stopped, its files are closed by
    `with` blocks, and stdout and stderr are flushed here.
    """
    for stream in (sys.stdout, sys.stderr):
        # A reader that went away (`flashmark history | head -1`) is not an error of ours.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
