"""A signal inside a held section (starting fio, creating the test file) is raised as the
section ends, once what was started has an owner that will clean it up."""

import os
import signal

import pytest

from flashmark.errors import ExitStatus, Interrupted
from flashmark.system.signals import signals_held, signals_raise


def test_a_signal_inside_a_held_section_is_raised_when_it_ends():
    steps = []
    with pytest.raises(Interrupted) as caught, signals_raise():
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            steps.append("after the signal")  # the section runs to its end
            with signals_held():  # nested: still held until the outermost section ends
                pass
            steps.append("after the nested section")
        steps.append("never")
    assert steps == ["after the signal", "after the nested section"]
    assert caught.value.exit_status == ExitStatus.TERMINATED


def test_without_a_signal_a_held_section_runs_through_and_restores_the_handlers():
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    steps = []
    with signals_raise():
        with signals_held():
            steps.append("inside")
        steps.append("after")  # nothing was held back, so nothing is raised here
    assert steps == ["inside", "after"]
    after = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    assert after == before
