"""Fixtures of the monitor's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flashmark.system.diskstats import device_for_path
from flashmark.system.sysroot import SystemRoots

DISKSTATS = Path(__file__).resolve().parents[1] / "data" / "diskstats"


def install(procfs: Path, recording: str) -> None:
    """Replace procfs/diskstats atomically, as the kernel's file changes between reads."""
    temporary = procfs / "diskstats.new"
    temporary.write_text((DISKSTATS / recording).read_text())
    os.replace(temporary, procfs / "diskstats")


@pytest.fixture
def procfs(tmp_path: Path) -> Path:
    """A procfs root holding a recorded diskstats (a 4.19 kernel's 18 fields)."""
    root = tmp_path / "proc"
    root.mkdir()
    install(root, "kernel-4.19-18-fields.t0")
    return root


@pytest.fixture
def live_device(tmp_path: Path) -> str:
    """The block device that holds the test's temporary folder (skipped on tmpfs/overlay)."""
    name = device_for_path(tmp_path, SystemRoots())
    if name is None:
        pytest.skip(f"{tmp_path} is not on a block device (tmpfs/overlay): nothing to monitor")
    return name
