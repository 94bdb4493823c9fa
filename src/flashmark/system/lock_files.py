"""flashmark's lock files: one folder every user's flashmark shares, and a file in it opened
so that no other user can turn it against the opener.

A lock must hold between a root run and a user's run, and a user cannot open the device node,
so the lock is a file in a shared folder, not the node. The folder is the first of:
$FLASHMARK_LOCK_DIR; /run/lock/flashmark when it is a folder, or when /run/lock is the
world-writable sticky folder of FHS 3.0 (5.9) that any user may make it in; else
/tmp/flashmark-locks. Each user decides from the same state of the same paths, so all find the
same folder. A missing folder is made sticky and world-writable (1777, like /tmp), so every user
may add lock files and none may remove another's.

Another local user may have made the folder, or a file in it, first. The opening is made safe
for root against that, and nothing more is trusted:
- the folder is opened once (O_DIRECTORY, O_NOFOLLOW) and each file relative to it, so no
  symlink in the path is followed;
- a file is opened read-only (flock(2) works on any descriptor) with O_NOFOLLOW (a symlink
  fails, it is never followed), O_NONBLOCK (a FIFO does not hang the open) and O_NOCTTY; it
  must then be a regular file with one link (a hard link to another file is refused);
- a missing file is made with O_CREAT|O_EXCL (never an existing file or a dangling link), mode
  0444 so every user can open it; an existing file is never opened with O_CREAT, which
  fs.protected_regular refuses in a sticky folder even to root;
- nothing is ever written to, truncated, chmod-ed (but the file or folder just made) or removed.
What another user can still do is what any user can do to a benchmark: hold a lock (the run
then names that user's pid and command, as for any holder), or make a file or folder no one
else can open (the run then stops with the folder and the cause, and never goes on unlocked).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from flashmark.errors import EnvironmentProblem, printable

LOCK_DIR_ENV = "FLASHMARK_LOCK_DIR"
_RUN_LOCK = Path("/run/lock")
_PREFERRED = _RUN_LOCK / "flashmark"
_FALLBACK = Path("/tmp/flashmark-locks")
_SHARED_MODE = 0o1777  # sticky and writable by all, as /tmp
_FILE_MODE = 0o444  # anyone may open it to flock it; no one needs to write it
_OPEN = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
_CREATE = _OPEN | os.O_CREAT | os.O_EXCL  # a new file, never an existing one or a link's target
_ATTEMPTS = 5  # another process making or removing the same name meanwhile


class LockUnusable(EnvironmentProblem):
    """flashmark's lock folder or a lock file in it cannot be used: no run goes on unlocked."""


def lock_folder_path() -> Path:
    """Where the lock files are (module doc)."""
    given = os.environ.get(LOCK_DIR_ENV)
    if given:
        return Path(given)
    try:
        if stat.S_ISDIR(os.lstat(_PREFERRED).st_mode):
            return _PREFERRED
    except FileNotFoundError:
        try:
            shared = os.lstat(_RUN_LOCK)
        except OSError:
            return _FALLBACK
        if stat.S_ISDIR(shared.st_mode) and shared.st_mode & 0o1002 == 0o1002:
            return _PREFERRED
    except OSError:
        pass
    return _FALLBACK


def open_lock_folder() -> tuple[int, Path]:
    """The lock folder opened (O_DIRECTORY, never through a symlink), made when missing, and
    its path; LockUnusable when it cannot be."""
    path = lock_folder_path()
    made = False
    try:
        os.mkdir(path, 0o700)  # opened up below, once it is known to be the folder just made
        made = True
    except FileExistsError:
        pass
    except OSError as error:
        raise _unusable(path, error) from None
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise _unusable(path, error) from None
    if made and os.fstat(descriptor).st_uid == os.geteuid():
        os.fchmod(descriptor, _SHARED_MODE)  # not os.chmod: the path may be another's by now
    return descriptor, path


def open_lock_file(folder: int, folder_path: Path, name: str) -> int:
    """The lock file `name` in the open lock folder, opened read-only (module doc), made when
    missing; LockUnusable when it cannot be opened safely."""
    shown = folder_path / name
    for _ in range(_ATTEMPTS):
        try:
            descriptor = os.open(name, _OPEN, dir_fd=folder)
        except FileNotFoundError:
            try:
                descriptor = os.open(name, _CREATE, _FILE_MODE, dir_fd=folder)
            except FileExistsError:
                continue  # made by another run meanwhile: open that one
            except OSError as error:
                raise _unusable(shown, error) from None
            os.fchmod(descriptor, _FILE_MODE)  # the umask may have taken "others" away
        except OSError as error:
            raise _unusable(shown, error) from None
        status = os.fstat(descriptor)
        if stat.S_ISREG(status.st_mode) and status.st_nlink == 1:
            return descriptor
        os.close(descriptor)
        what = "not a regular file" if not stat.S_ISREG(status.st_mode) else "a hard link"
        raise LockUnusable(
            f"{printable(str(shown))} is {what}, not a lock file flashmark made; {_FIX}"
        )
    raise LockUnusable(f"{printable(str(shown))} keeps changing while it is opened; {_FIX}")


def still_named(folder: int, name: str, descriptor: int) -> bool:
    """True when `name` in the folder is still the file open as `descriptor` (a lock on a
    file removed meanwhile excludes no one)."""
    try:
        named = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return False
    opened = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


_FIX = (
    f"remove it if no flashmark runs, or set {LOCK_DIR_ENV} to a folder every user of "
    "flashmark on this machine can write"
)


def _unusable(path: Path, error: OSError) -> LockUnusable:
    # O_NOFOLLOW on a symlink: ELOOP, or ENOTDIR with O_DIRECTORY (open(2))
    planted = error.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path)
    cause = "a symbolic link" if planted else error.strerror
    return LockUnusable(
        f"cannot use flashmark's lock {printable(str(path))} ({cause}): without it a second "
        f"run on the same device could measure this one's I/O; {_FIX}"
    )
