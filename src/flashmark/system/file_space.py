"""A test file's room, reserved without writing it, and a filesystem's pending writes put on its
device now rather than during a measurement.

- `allocate(fd, size)`: fallocate(2) with mode 0, as fio's `fallocate=native` lays out a file:
  the filesystem reserves the blocks and sets the file's size. On ext4, XFS, Btrfs and F2FS the
  blocks are marked uninitialized, "requiring no IO to the data blocks" (util-linux
  fallocate(1), DESCRIPTION), and reading them returns zeros without asking the device
  (fallocate(2): the range is "initialized to zero"). That is what a write test
  needs (nothing written before it) and not what a read test needs, which is why runs that read
  write the area first (flashmark.bench.plan). FAT has no unwritten extents: its fallocate is an
  expanding truncate that fills the new part with zeros through the page cache (Linux
  fs/fat/file.c, fat_fallocate), so there the device is written; `sync_filesystem` makes that
  happen before the tests, not during them. Where a filesystem has no fallocate (EOPNOTSUPP),
  the file is extended with ftruncate(2), as fio does then. Not os.posix_fallocate: where the
  filesystem lacks fallocate, glibc emulates it by writing into every block (posix_fallocate(3),
  NOTES).
- `sync_filesystem(fd)`: syncfs(2) on the filesystem holding `fd` (only that one, unlike
  sync(2)), or sync(2) where the C library lacks syncfs.
- `fsync_folder(folder)`: fsync(2) of a folder, so that a name just made in it survives a
  crash too (syncing the file does not sync its directory entry).

Python's os module has neither fallocate nor syncfs; both are called in the C library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

_NOT_SUPPORTED = {errno.EOPNOTSUPP, errno.ENOSYS}


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def libc_function(name: str) -> Any:
    """The C library's function `name` (ctypes), None where the library or it is missing."""
    return getattr(_LIBC, name, None)


def _fallocate() -> Callable[..., Any] | None:
    """fallocate with 64-bit offsets: glibc's fallocate64 (its fallocate takes a 32-bit off_t
    on 32-bit systems, Raspberry Pi OS among them); musl's fallocate, whose off_t is 64-bit."""
    for name in ("fallocate64", "fallocate"):
        function = getattr(_LIBC, name, None)
        if function is not None:
            function.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
            function.restype = ctypes.c_int
            return function  # type: ignore[no-any-return]
    return None


_FALLOCATE = _fallocate()


def allocate(fd: int, size_bytes: int) -> None:
    """Make the file open as `fd` (for writing) `size_bytes` long, its blocks reserved where
    the filesystem can reserve them without writing (module doc). Raises OSError (ENOSPC: no
    room; EIO: the device failed)."""
    while _FALLOCATE is not None:
        if _FALLOCATE(fd, 0, 0, size_bytes) == 0:
            return
        code = ctypes.get_errno()
        if code in _NOT_SUPPORTED:
            break
        if code != errno.EINTR:  # a signal: fallocate(2) is simply called again
            raise OSError(code, os.strerror(code))
    os.ftruncate(fd, size_bytes)


def sync_filesystem(fd: int) -> None:
    """Put everything the filesystem holding `fd` still has for its device on the device, and
    wait for it. Raises OSError (EIO: the device failed)."""
    function = getattr(_LIBC, "syncfs", None)
    if function is None:
        os.sync()
        return
    if function(ctypes.c_int(fd)) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def fsync_folder(folder: Path) -> None:
    """Make the names in `folder` durable (module doc). Raises OSError."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
