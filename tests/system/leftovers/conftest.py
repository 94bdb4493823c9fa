"""Real processes to own synthetic leftovers: one that has ended, one that is still running."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.system.leftovers import ProcessTable
from tests.system.leftovers.stamped import Machine


@pytest.fixture
def machine() -> Machine:
    table = ProcessTable()
    boot, namespace = table.boot_id(), table.pid_namespace(os.getpid())
    assert boot is not None and namespace is not None
    return Machine(boot, namespace)


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not Path(f"/proc/{child.pid}").exists()  # not yet reused: milliseconds have passed
    return child.pid


@pytest.fixture
def live_process() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield child
    finally:
        child.kill()
        child.wait()
