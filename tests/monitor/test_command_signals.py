"""`flashmark monitor DEV -- COMMAND`: a signal as the command starts never leaves it running
(flashmark.monitor.command; the fault tier once found a `sleep` left by an INT 0.3 s in)."""

import os
import signal

import psutil
import pytest

from flashmark.errors import Interrupted
from flashmark.monitor.command import run_supervised
from flashmark.system.signals import signals_held, signals_raise


def children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if p.is_running()]


def test_a_signal_as_the_command_starts_stops_and_reaps_it():
    before = {p.pid for p in children()}
    # The command signals flashmark the moment it runs: wherever that lands (starting it,
    # taking charge of it, waiting for it), it is stopped and reaped.
    with pytest.raises(Interrupted), signals_raise():
        run_supervised(
            ("sh", "-c", "kill -TERM $PPID; exec sleep 30"), timeout_s=60, output_to_stderr=False
        )
    assert {p.pid for p in children()} - before == set()


def test_a_signal_pending_from_before_is_raised_once_the_command_has_an_owner():
    # A signal held by an enclosing section is not raised inside run_supervised's own held
    # start: the command runs to its end, and the signal comes when the outer section ends.
    before = {p.pid for p in children()}
    with pytest.raises(Interrupted), signals_raise(), signals_held():
        os.kill(os.getpid(), signal.SIGTERM)
        outcome = run_supervised(("true",), timeout_s=60, output_to_stderr=False)
        assert outcome.status == 0 and not outcome.timed_out
    assert {p.pid for p in children()} - before == set()
