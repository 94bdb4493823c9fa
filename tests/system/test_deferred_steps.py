"""The entry point's handler ends the process with one line; a run's handler stops the run
with the signal's own status, also from inside a finalizer; an ignored signal stays so."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from flashmark.errors import ExitStatus, Interrupted
from flashmark.system.signals import signals_raise


def test_sighup_stops_a_run_with_its_own_status():
    with pytest.raises(Interrupted) as stopped, signals_raise():
        os.kill(os.getpid(), signal.SIGHUP)
    assert stopped.value.exit_status == int(ExitStatus.HANGUP) == 129


# What each script below starts with: flashmark's entry point's handlers in place.
_ENTRY = """
import os, signal
from flashmark.entry import install_stop_handlers
from flashmark.system.signals import signals_raise
install_stop_handlers()
"""


def _python(code: str, *, ignore_hup: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _ENTRY + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=(lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)) if ignore_hup else None,
    )


def test_the_entry_handler_exits_with_one_line_and_comes_back_after_a_scope():
    done = _python(
        """
        with signals_raise():
            print("inside", flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        print("not reached")
        """
    )
    assert done.returncode == 143
    assert done.stdout == "inside\n"
    assert done.stderr == "flashmark: stopped by SIGTERM\n"


def test_nohup_keeps_sighup_ignored():
    done = _python(
        """
        with signals_raise():
            os.kill(os.getpid(), signal.SIGHUP)
        print("still running")
        """,
        ignore_hup=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "still running\n"


def test_a_signal_inside_a_finalizer_still_stops_the_run():
    # A handler that raises inside __del__ cannot stop anything there: Python would print
    # "Exception ignored" and carry on. The signal must come back and stop the run after it.
    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # give the handler bytecodes to run on, inside __del__
                pass

    steps = []
    with pytest.raises(Interrupted) as stopped, signals_raise():
        Finalized()  # dropped at once: __del__ runs here
        steps.append("after the finalizer")
        time.sleep(10)  # the signal comes back within milliseconds and stops this
        steps.append("not reached")
    assert stopped.value.exit_status == ExitStatus.INTERRUPTED
    assert "not reached" not in steps
