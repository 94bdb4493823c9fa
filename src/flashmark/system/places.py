"""Where flashmark keeps its own files: the XDG base directories, and the home they default to.

XDG Base Directory Specification: $XDG_DATA_HOME defaults to ~/.local/share (the history),
$XDG_STATE_HOME to ~/.local/state (recovery files, capacity backups). The home is $HOME, else
the user's passwd entry (Python's expanduser). A process with neither (a service started
with an empty environment under a uid without an entry) has no default place: `home` raises
EnvironmentProblem with the variables that fix it, instead of Python's RuntimeError.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from flashmark.errors import EnvironmentProblem


def home(
    environ: Mapping[str, str] | None = None, *, needed_for: str = "", instead: str = ""
) -> Path:
    """The user's home folder; EnvironmentProblem, naming what it was needed for and the
    variables that can stand in for it, when there is none to find."""
    env = os.environ if environ is None else environ
    if env.get("HOME"):
        return Path(env["HOME"])
    try:
        return Path.home()
    except RuntimeError:  # no HOME and no passwd entry for this uid
        pass
    what = f" to keep {needed_for} in" if needed_for else ""
    alternatives = f", or {instead}" if instead else ""
    raise EnvironmentProblem(
        f"no home folder{what}: HOME is not set and user {os.getuid()} has no passwd entry; "
        f"set HOME{alternatives}"
    )


def data_home(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"])
    where = home(env, needed_for="the history", instead="FLASHMARK_DB or XDG_DATA_HOME")
    return where / ".local" / "share"


def state_home(environ: Mapping[str, str] | None = None, *, needed_for: str = "") -> Path:
    env = os.environ if environ is None else environ
    if env.get("XDG_STATE_HOME"):
        return Path(env["XDG_STATE_HOME"])
    where = home(env, needed_for=needed_for or "flashmark's state", instead="XDG_STATE_HOME")
    return where / ".local" / "state"
