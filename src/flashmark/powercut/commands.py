"""Running the user's power commands: bounded, reaped, and failing with a clear line.

The commands are the user's own shell commands (a relay, a switchable USB hub, a smart plug:
docs/powercut.md), run by /bin/sh -c in a session of their own with LC_ALL=C. One that does
not finish in time is killed with its whole process group (a curl waiting on a dead plug, a
uhubctl stuck on a hub), one that exits non-zero fails with the end of what it printed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass

from flashmark.errors import EnvironmentProblem

_OUTPUT_TAIL = 400  # characters of the command's output a message quotes
# Credentials in a command line: a URL's user:password@, and password=/pass=/token=/key=
# parameters (Tasmota's web password travels as &password=...).
_SECRETS = (
    (re.compile(r"(://)[^/@\s:'\"]+:[^/@\s'\"]+@"), r"\1***@"),
    (re.compile(r"(?i)([?&\s](?:password|pass|passwd|token|key|apikey)=)[^&\s'\"]+"), r"\1***"),
)


class PowerCommandFailed(EnvironmentProblem):
    """An off or on command failed or did not finish in time."""


@dataclass(frozen=True)
class CommandRun:
    command: str
    seconds: float
    output: str


def run_power_command(command: str, *, what: str, timeout_s: float) -> CommandRun:
    """Run `command`; PowerCommandFailed when it fails or outlives `timeout_s`."""
    began = time.monotonic()
    try:
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, "LC_ALL": "C"},
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
    except OSError as error:
        raise PowerCommandFailed(f"the {what} command could not start: {error}") from None
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise PowerCommandFailed(
            f"the {what} command did not finish within {timeout_s:g} s and was killed: {command}"
        ) from None
    except BaseException:  # Ctrl-C while it runs: it must not outlive us
        _kill_group(process)
        raise
    text = output.decode(errors="replace").strip()
    if process.returncode != 0:
        tail = text[-_OUTPUT_TAIL:] or "no output"
        raise PowerCommandFailed(
            f"the {what} command failed (exit {process.returncode}): {shown(command)}: {tail}"
        )
    return CommandRun(command, time.monotonic() - began, text)


def shown(command: str) -> str:
    """The command as results and records keep it: passwords and tokens replaced by ***."""
    for pattern, replacement in _SECRETS:
        command = pattern.sub(replacement, command)
    return command


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # our own child's group, by its id
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.communicate(timeout=5)
