"""A durable file is written whole or not at all: a new private file, or one renamed over the
old; one that cannot be written leaves nothing behind (and the old file as it was), and one that
cannot be created at all says so apart."""

from __future__ import annotations

import errno
import os
import resource
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from flashmark.system.durable_files import NotCreated, replace_file, write_new


@contextmanager
def files_at_most(size_bytes: int) -> Iterator[None]:
    """Writes past `size_bytes` fail with EFBIG (RLIMIT_FSIZE, SIGXFSZ ignored), as on a full
    filesystem, for this process only."""
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size_bytes, limits[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)


def test_a_new_file_is_private_and_whole(tmp_path: Path) -> None:
    path = write_new(tmp_path, "run-", ".json", b"{}\n")
    assert path.parent == tmp_path and path.name.startswith("run-") and path.suffix == ".json"
    assert path.read_bytes() == b"{}\n" and path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("mode", "umask", "expected"), [(None, 0o027, 0o640), (0o644, 0o077, 0o644)]
)
def test_a_replaced_file_is_whole_with_its_mode_and_no_temporary_left(
    tmp_path: Path, mode: int | None, umask: int, expected: int
) -> None:
    """The usual mode (0666 less the umask), or the one asked for whatever the umask."""
    path = tmp_path / "out.csv"
    path.write_bytes(b"old")
    before = os.umask(umask)
    try:
        replace_file(path, b"a,b\r\n", mode)
    finally:
        os.umask(before)
    assert path.read_bytes() == b"a,b\r\n" and list(tmp_path.iterdir()) == [path]
    assert path.stat().st_mode & 0o777 == expected


@pytest.mark.parametrize("how", ["new", "replaced"])
def test_a_file_that_cannot_be_written_leaves_nothing_behind(tmp_path: Path, how: str) -> None:
    old = tmp_path / "out.md"
    old.write_bytes(b"old")
    with files_at_most(4096), pytest.raises(OSError) as failed:
        if how == "new":
            write_new(tmp_path, "run-", ".json", bytes(1 << 20))
        else:
            replace_file(old, bytes(1 << 20))
    assert failed.value.errno == errno.EFBIG and not isinstance(failed.value, NotCreated)
    assert list(tmp_path.iterdir()) == [old] and old.read_bytes() == b"old"


@pytest.mark.parametrize("how", ["new", "replaced"])
def test_a_folder_where_no_file_can_be_made_is_told_apart(tmp_path: Path, how: str) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(NotCreated) as failed:
        if how == "new":
            write_new(missing, "run-", ".json", b"{}")
        else:
            replace_file(missing / "out.md", b"x")
    assert failed.value.errno == errno.ENOENT and failed.value.strerror
    assert list(tmp_path.iterdir()) == []
