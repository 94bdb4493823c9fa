"""Fixtures of the monitor's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from flashmark.system.diskstats import device_for_path
from flashmark.system.sysroot import SystemRoots


@pytest.fixture
def live_device(tmp_path: Path) -> str:
    """The block device that holds the test's temporary folder (skipped on tmpfs/overlay)."""
    name = device_for_path(tmp_path, SystemRoots())
    if name is None:
        pytest.skip(f"{tmp_path} is not on a block device (tmpfs/overlay): nothing to monitor")
    return name
