"""A step that must not stop half-way (saving, renaming into place) finishes, then the signal
acts; the entry point's handler ends the process with one line; an ignored signal stays so."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from flashmark.errors import ExitStatus, Interrupted
from flashmark.signals import signals_deferred, signals_raise


def test_a_signal_during_a_deferred_step_acts_after_the_step():
    steps = []
    with pytest.raises(Interrupted) as stopped, signals_raise():
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            steps.append("saved")  # still runs: the signal waits
        steps.append("after")  # never runs: the signal acted on leaving the block
    assert steps == ["saved"]
    assert stopped.value.exit_status == ExitStatus.TERMINATED


def test_a_failing_deferred_step_reports_its_own_error():
    with pytest.raises(OSError, match="disk full"), signals_raise(), signals_deferred():
        os.kill(os.getpid(), signal.SIGHUP)
        raise OSError("disk full")


def test_sighup_stops_a_run_with_its_own_status():
    with pytest.raises(Interrupted) as stopped, signals_raise():
        os.kill(os.getpid(), signal.SIGHUP)
    assert stopped.value.exit_status == int(ExitStatus.HANGUP) == 129


def _python(code: str, *, ignore_hup: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=(lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)) if ignore_hup else None,
    )


def test_the_entry_handler_exits_with_one_line_after_a_deferred_step():
    done = _python(
        """
        import os, signal
        from flashmark.entry import install_stop_handlers
        from flashmark.signals import signals_deferred
        install_stop_handlers()
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            print("saved", flush=True)
        print("not reached")
        """
    )
    assert done.returncode == 130
    assert done.stdout == "saved\n"
    assert done.stderr == "flashmark: stopped by SIGINT\n"


def test_nohup_keeps_sighup_ignored():
    done = _python(
        """
        import os, signal
        from flashmark.entry import install_stop_handlers
        from flashmark.signals import signals_raise
        install_stop_handlers()
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
