"""Broken history databases, made for real: each fault is an SQLite file (or its absence) in the
state a user's history can be in, and every fixture undoes what it did (locks, immutable flags).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from flashmark.history.store import History


@dataclass(frozen=True)
class Fault:
    name: str
    message: str  # what the one-line error says
    readable: bool  # whether commands that only read the history still work


FAULTS = (
    Fault("garbage", "is not a usable SQLite database", readable=False),
    Fault("locked", "is locked by another program", readable=False),
    Fault("read-only-file", "cannot be written", readable=True),
    Fault("read-only-folder", "must be writable", readable=True),
    Fault("newer-schema", "written by a newer flashmark", readable=False),
    Fault("missing-folder", "does not exist", readable=True),
)


def fault_ids() -> list[str]:
    return [fault.name for fault in FAULTS]


def tree(root: Path) -> list[str]:
    """Every path under root, to compare before and after a command."""
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make path unwritable, also for root (CI runs as root, and root ignores file modes:
    the immutable flag stops it; filesystems without one (tmpfs) skip, saying so)."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("root ignores file modes and chattr (e2fsprogs) is missing")
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(
            f"root ignores file modes and `chattr +i` failed on {path}: {done.stderr.strip()}"
        )
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def make_history(path: Path) -> Path:
    """A real, migrated, empty history at path."""
    History(path).check_writable()
    return path


@contextmanager
def broken_history(fault: Fault, folder: Path) -> Iterator[Path]:
    """The path of a history database with `fault`, valid for the `with` block."""
    path = folder / "history.sqlite3"
    if fault.name == "garbage":
        path.write_bytes(b"these are not the droids you are looking for\n" * 200)
        yield path
    elif fault.name == "locked":
        make_history(path)
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")  # another writer, in the middle of its work
            yield path
        finally:
            holder.execute("ROLLBACK")
            holder.close()
    elif fault.name == "read-only-file":
        make_history(path)
        with read_only(path):
            yield path
    elif fault.name == "read-only-folder":
        sub = folder / "ro"
        sub.mkdir()
        make_history(sub / "history.sqlite3")
        with read_only(sub):
            yield sub / "history.sqlite3"
    elif fault.name == "newer-schema":
        make_history(path)
        with sqlite3.connect(path) as connection:
            connection.execute("INSERT INTO schema_migrations VALUES ('9999_future', 'x')")
        connection.close()
        yield path
    elif fault.name == "missing-folder":
        yield folder / "no" / "such" / "history.sqlite3"
    else:
        raise AssertionError(fault.name)
