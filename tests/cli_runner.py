"""flashmark's command line in-process, through click's CliRunner: how unit tests run a command.

Starting Python for each command cost most of the unit tier's time. In-process, a command runs
exactly as `flashmark ARGS` does from the group down (option checks, error lines, exit
statuses); only entry.py's process-level part is skipped (signal handlers set before imports,
os._exit). Tests where signals, the process's exit or real fio are the point start a process.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from click.testing import CliRunner

from flashmark.cli import main


@dataclass(frozen=True)
class Done:
    """What a command left: the fields of subprocess.CompletedProcess that tests read."""

    returncode: int
    stdout: str
    stderr: str


def flashmark(
    *args: str | Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    input: str | None = None,
) -> Done:
    """Run `flashmark ARGS` in this process with `env` added to the environment and `cwd` as
    the working folder. The history is the test's own (conftest's private_history sets
    FLASHMARK_DB), never the user's."""
    overrides = dict(env or {})
    with _inside(cwd), _fresh_tempdir():
        result = CliRunner().invoke(
            main, [str(arg) for arg in args], env=overrides, input=input, prog_name="flashmark"
        )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # flashmark maps every error to a line: this is a test's bug
    return Done(result.exit_code, result.stdout, result.stderr)


def flashmark_script(
    *args: str | Path, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`flashmark ARGS` as a script runs it: a process of its own, no terminal to type a
    confirmation at (stdin is /dev/null), with `env` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "flashmark", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


@contextlib.contextmanager
def started(
    *args: str | Path, wrap: Callable[[list[str]], list[str]] | None = None, **popen: Any
) -> Iterator[subprocess.Popen[str]]:
    """`flashmark ARGS` as a process of its own while the block runs (text pipes for its output,
    stdin /dev/null; `popen` overrides them), `wrap` giving the argv its context (a device's
    cgroup); killed on the way out if it still runs, whatever the test found."""
    argv = [sys.executable, "-m", "flashmark", *map(str, args)]
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "stdin": subprocess.DEVNULL}
    process = subprocess.Popen(wrap(argv) if wrap else argv, text=True, **(options | popen))
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def fio_jobs_of(pid: int) -> list[psutil.Process]:
    """fio processes under flashmark `pid` that run a job (not `fio --version`)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    found = []
    for child in children:
        try:
            if (
                child.name() == "fio"
                and "--version" not in child.cmdline()
                and child.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(child)
        except psutil.Error:
            continue
    return found


def wait_for_fio(process: subprocess.Popen[str], timed: bool = False, timeout: float = 60) -> int:
    """The pid of the first fio that `process` (a started flashmark) has run a job file, a timed
    test's when `timed` (not the preparation's); waits for it. `fio --version`, which flashmark
    runs before it claims its target, never counts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for fio in fio_jobs_of(process.pid):
            with contextlib.suppress(psutil.Error):  # it may have exited meanwhile
                jobs = [part for part in fio.cmdline() if part.endswith(".fio")]
                if fio.ppid() == process.pid and jobs and not (
                    timed and jobs[0].endswith("/prepare.fio")
                ):
                    return fio.pid
        time.sleep(0.1)
    raise AssertionError(f"fio never started {'a timed test' if timed else 'a job'}")


@contextlib.contextmanager
def _inside(folder: Path | None) -> Iterator[None]:
    if folder is None:
        yield
        return
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _fresh_tempdir() -> Iterator[None]:
    """tempfile caches the temporary folder at first use; a command given TMPDIR must see it."""
    tempfile.tempdir = None
    try:
        yield
    finally:
        tempfile.tempdir = None
