"""The power-cut tests' throwaway sshd (tests/powercut/sshd.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.powercut.sshd import Sshd, make_sshd


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[Sshd]:
    """A running throwaway sshd (skipped where OpenSSH's server is not installed)."""
    server = make_sshd(tmp_path / "sshd")
    with server.running():
        yield server
