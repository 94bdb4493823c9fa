"""Synthetic leftovers named as flashmark names them (flashmark/system/leftovers.py)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from flashmark.system.leftovers import Owner, ProcessTable

TOKEN = "0123abcd"


@dataclass(frozen=True)
class Machine:
    """This machine's boot id (8 hex digits) and this process's pid namespace."""

    boot_id: str
    pid_namespace: int

    def owner(self, pid: int, start_ticks: int) -> Owner:
        return Owner(pid, start_ticks, self.boot_id, self.pid_namespace)


def start_ticks(pid: int) -> int:
    ticks = ProcessTable().start_ticks(pid)
    assert ticks is not None
    return ticks


def stamped_test_file(folder: Path, owner: Owner, size: int = 0, token: str = TOKEN) -> Path:
    path = folder / f".flashmark-{owner.stamp()}-{token}.tmp"
    path.write_bytes(b"\xa5" * size)
    return path


def stamped_work_folder(folder: Path, purpose: str, owner: Owner, token: str = TOKEN) -> Path:
    path = folder / f"flashmark-{purpose}-{owner.stamp()}-{token}"
    path.mkdir()
    (path / "seq-write.fio").write_text("[seq-write]\n")
    (path / "logs").mkdir()
    (path / "logs" / "bw.log").write_text("0, 1, 0, 4096\n")
    return path


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """A folder whose entries cannot be removed meanwhile: read-only for a user, immutable
    (chattr +i, chattr(1)) for root, whom permissions do not stop. Unlocked afterwards."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed (apt-get install e2fsprogs)")
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"this filesystem has no immutable flag: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
