"""The user's power commands: run, bounded, and failing with the line a user can act on."""

from __future__ import annotations

import os
import time

import psutil
import pytest

from flashmark.errors import ExitStatus
from flashmark.powercut.commands import PowerCommandFailed, run_power_command, shown


def test_a_command_that_works_is_timed():
    done = run_power_command("echo switched; sleep 0.1", what="off", timeout_s=5)
    assert done.output == "switched" and 0.1 <= done.seconds < 2


def test_a_command_that_fails_quotes_its_exit_status_and_output():
    with pytest.raises(PowerCommandFailed) as caught:
        run_power_command("echo 'hub 1-1 not found' >&2; exit 3", what="off", timeout_s=5)
    assert str(caught.value) == (
        "the off command failed (exit 3): echo 'hub 1-1 not found' >&2; exit 3: hub 1-1 not found"
    )
    assert caught.value.exit_status is ExitStatus.ENVIRONMENT


def test_a_command_that_hangs_is_killed_with_everything_it_started():
    # Durations no other process on the machine uses (another checkout's suite may run this
    # test at the same time), so that what is left is this command's own.
    first, second = (f"{300 + n}.{os.getpid()}{time.monotonic_ns() % 10**6}" for n in (0, 1))
    began = time.monotonic()
    with pytest.raises(PowerCommandFailed, match=r"did not finish within 0\.5 s and was killed"):
        run_power_command(f"sleep {first} & sleep {second}; wait", what="on", timeout_s=0.5)
    assert time.monotonic() - began < 5
    left = [
        p
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] in (["sleep", first], ["sleep", second])
    ]
    assert not left


def test_passwords_in_a_command_are_left_out_of_what_is_kept():
    tasmota = "curl -fsS 'http://plug/cm?user=admin&password=s3cret&cmnd=Power%20Off'"
    assert shown(tasmota) == "curl -fsS 'http://plug/cm?user=admin&password=***&cmnd=Power%20Off'"
    assert shown("curl http://admin:s3cret@plug/relay/0?turn=off") == (
        "curl http://***@plug/relay/0?turn=off"
    )
    assert shown("uhubctl -l 1-1 -p 2 -a off") == "uhubctl -l 1-1 -p 2 -a off"


def test_a_failing_command_s_message_does_not_show_its_password():
    with pytest.raises(PowerCommandFailed) as caught:
        run_power_command("exit 1 # ?password=s3cret", what="off", timeout_s=5)
    assert "s3cret" not in str(caught.value)
