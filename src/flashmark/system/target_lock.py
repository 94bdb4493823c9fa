"""One flashmark at a time per folder or device, so that no run measures another's I/O.

A measuring command holds an exclusive flock(2) on the folder's descriptor or the device node
from before its first write until its last; the kernel drops it when the holder ends, even by
SIGKILL. A second run refuses at once, naming the holder's pid from /proc/locks (proc(5)). A lock
this process already holds is held once; a filesystem without flock is measured unlocked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from flashmark.errors import TargetError, printable

_PROC_LOCKS = Path("/proc/locks")
# errno values of a filesystem that has no flock to offer (nfs(5) emulates it with byte-range
# locks, which need a descriptor open for writing: EBADF on a folder).
_NO_FLOCK = {errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP, errno.EBADF}


class TargetBusy(TargetError):
    """Another flashmark (or another program) holds the folder or device."""


_held: dict[tuple[int, int], int] = {}  # (st_dev, st_ino) -> how many holds in this process
_held_lock = threading.Lock()


@contextlib.contextmanager
def held(descriptor: int, shown: str) -> Iterator[None]:
    """Hold an exclusive flock on the open file `descriptor` (a folder or a device node) for
    the block; TargetBusy at once when another process holds it. The descriptor stays the
    caller's: closing it releases the lock."""
    status = os.fstat(descriptor)
    key = (status.st_dev, status.st_ino)
    with _held_lock:
        if key in _held:
            _held[key] += 1
            locked = False
        else:
            locked = _lock(descriptor, status, shown)
            if locked:
                _held[key] = 1
    try:
        yield
    finally:
        with _held_lock:
            if key in _held:
                _held[key] -= 1
                if not _held[key]:
                    del _held[key]
                    if locked:
                        with contextlib.suppress(OSError):
                            fcntl.flock(descriptor, fcntl.LOCK_UN)


@contextlib.contextmanager
def held_path(path: str, shown: str | None = None) -> Iterator[None]:
    """`held` on `path` (a device node or a folder), opened read-only for the block."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        with held(descriptor, shown or path):
            yield
    finally:
        os.close(descriptor)


def refuse_if_busy(path: str, shown: str | None = None) -> None:
    """TargetBusy now when another process holds `path`: said before anything else about the
    target (a held folder's free space is the other run's test file). The hold that counts is
    taken later, from before the first write (`held`)."""
    with held_path(path, shown):
        pass


def _lock(descriptor: int, status: os.stat_result, shown: str) -> bool:
    """True when locked; False when this filesystem has no flock."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = holder_pid(status)
        who = f"another flashmark (pid {holder})" if holder else "another program"
        raise TargetBusy(
            f"{printable(shown)} is being measured by {who}: two runs would each measure the "
            "other's I/O; wait until it ends, or stop it"
        ) from None
    except OSError as error:
        if error.errno in _NO_FLOCK:
            return False
        raise
    return True


def holder_pid(status: os.stat_result, locks: Path = _PROC_LOCKS) -> int | None:
    """The pid holding a FLOCK lock on the file of `status`, from /proc/locks, e.g.
    "1: FLOCK  ADVISORY  WRITE 1234 08:02:131074 0 EOF" (device numbers in hex, proc(5));
    None when it cannot be told (another pid namespace shows 0, a hidden /proc)."""
    wanted = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    try:
        text = locks.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":  # "->" marks a waiter, not a holder
            continue
        if fields[5] == wanted and fields[4].isdigit() and int(fields[4]) > 0:
            return int(fields[4])
    return None
