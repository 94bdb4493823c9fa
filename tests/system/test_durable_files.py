"""A durable file is written whole or not at all: a new private file, or one renamed over the
old with its mode; one that cannot be written leaves nothing behind, and the old file as it was.
(Exports test the usual mode and the folders where no file can be made.)"""

from __future__ import annotations

import errno
import os
import resource
import signal
from pathlib import Path

import pytest

from flashmark.system.durable_files import NotCreated, replace_file, write_new


def test_a_new_file_is_private_and_a_replaced_one_has_the_mode_asked_whatever_the_umask(
    tmp_path: Path,
) -> None:
    new = write_new(tmp_path, "run-", ".json", b"{}\n")
    assert new.name.startswith("run-") and new.suffix == ".json" and new.read_bytes() == b"{}\n"
    assert new.stat().st_mode & 0o777 == 0o600
    old = tmp_path / "flashmark-health.timer"
    old.write_bytes(b"old")
    before = os.umask(0o077)
    try:
        replace_file(old, b"[Unit]\n", 0o644)
    finally:
        os.umask(before)
    assert old.read_bytes() == b"[Unit]\n" and old.stat().st_mode & 0o777 == 0o644
    assert sorted(tmp_path.iterdir()) == sorted([new, old])  # no temporary file left


@pytest.mark.parametrize("how", ["new", "replaced"])
def test_a_file_that_cannot_be_written_leaves_nothing_behind(tmp_path: Path, how: str) -> None:
    old = tmp_path / "out.md"
    old.write_bytes(b"old")
    # Writes past 4 KiB fail with EFBIG, as on a full filesystem (RLIMIT_FSIZE, this process).
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, limits[1]))
    try:
        with pytest.raises(OSError) as failed:
            if how == "new":
                write_new(tmp_path, "run-", ".json", bytes(1 << 20))
            else:
                replace_file(old, bytes(1 << 20))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)
    assert failed.value.errno == errno.EFBIG and not isinstance(failed.value, NotCreated)
    assert list(tmp_path.iterdir()) == [old] and old.read_bytes() == b"old"
