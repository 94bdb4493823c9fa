"""The user's power commands: run, bounded, and failing with the line a user can act on."""

from __future__ import annotations

import time

import psutil
import pytest

from flashmark.errors import ExitStatus
from flashmark.powercut.commands import PowerCommandFailed, run_power_command


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
    began = time.monotonic()
    with pytest.raises(PowerCommandFailed, match=r"did not finish within 0\.5 s and was killed"):
        run_power_command("sleep 300 & sleep 301; wait", what="on", timeout_s=0.5)
    assert time.monotonic() - began < 5
    left = [
        p
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] in (["sleep", "300"], ["sleep", "301"])
    ]
    assert not left
