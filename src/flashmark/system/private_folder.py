"""A folder only flashmark can change, made inside a folder someone else may control, so that
no symlink swapped in can redirect a write (fio removes and recreates its file by name).

Made with mkdirat relative to the target's open descriptor, mode 0700, opened with O_NOFOLLOW
and checked with fstat to be the empty folder just made, and reached afterwards only as
/proc/self/fd/N (proc(5)); only its owner can change entries in it (path_resolution(7)). FAT and
exFAT show the mount's owner and mode but hold no links. Removal goes through the descriptor
without following links. README, "Safety".
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import TargetError, printable
from flashmark.system.signals import signals_held

PRIVATE_MODE = 0o700
_MAX_LINKS = 40  # links followed in one path lookup before ELOOP (path_resolution(7))


class FolderReplaced(TargetError):
    """A folder flashmark opened or made is not the one it checked: someone renamed or
    replaced it meanwhile. Nothing was written through it."""


@dataclass(frozen=True)
class PrivateFolder:
    """A private folder, open; `shown` names it for people (messages), `path` for the kernel."""

    fd: int
    name: str  # its name in the target folder
    shown: str  # TARGET-FOLDER/NAME as the target folder was given
    identity: tuple[int, int]  # (st_dev, st_ino)

    @property
    def path(self) -> Path:
        """A path through the descriptor: the folder itself, whatever its name is now."""
        return Path(f"/proc/self/fd/{self.fd}")


class ForeignLink(TargetError):
    """The target's path goes through a symlink another user owns."""


def refuse_foreign_links(given: str) -> None:
    """Refuse a path that passes through a symlink owned by a user other than root and this
    process's effective user: that user can point it anywhere at any moment, so what flashmark
    checked and what it then opens could be two places of that user's choosing. (The kernel's
    fs.protected_symlinks makes the same rule for sticky world-writable folders only,
    proc_sys_fs(5).) Links are followed as the kernel follows them, component by component."""
    trusted = {0, os.geteuid()}
    parts = list(Path(os.path.join(os.getcwd(), os.path.expanduser(given))).parts[1:])
    current = "/"
    followed = 0
    while parts and followed <= _MAX_LINKS:
        part = parts.pop(0)
        if part in (".", ""):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        try:
            status = os.lstat(candidate)
        except OSError:
            return  # missing or unreadable: the caller's own stat says so
        if not stat.S_ISLNK(status.st_mode):
            current = candidate
            continue
        if status.st_uid not in trusted:
            raise ForeignLink(
                f"{printable(given)}: refusing to follow {printable(candidate)}, a symlink "
                f"owned by another user (uid {status.st_uid}), who can point it anywhere at any "
                "moment: give the path it leads to, if that is where you mean"
            )
        followed += 1
        link = Path(os.readlink(candidate))
        if link.is_absolute():
            current = "/"
        parts[:0] = [p for p in link.parts if p != "/"]


def open_checked_folder(path: str, identity: tuple[int, int] | None = None) -> int:
    """The folder at `path`, opened once (O_DIRECTORY); when `identity` is given, refused with
    FolderReplaced unless it is that folder (its path renamed or replaced since it was
    checked). Raises OSError as open(2) does."""
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    if identity is not None:
        status = os.fstat(descriptor)
        if (status.st_dev, status.st_ino) != identity:
            os.close(descriptor)
            raise FolderReplaced(
                f"{printable(path)} changed after it was checked (renamed or replaced); "
                "nothing was written: run again"
            )
    return descriptor


def make_private_folder(parent_fd: int, parent_shown: str, name: str) -> PrivateFolder:
    """Make NAME in the folder open as `parent_fd`, open it and check it is the one just made
    (module doc). Raises OSError from mkdir or open (EEXIST: the name is taken), or
    FolderReplaced; what it made is then left to its name (`flashmark clean`)."""
    shown = f"{parent_shown.rstrip('/')}/{name}"
    os.mkdir(name, PRIVATE_MODE, dir_fd=parent_fd)
    try:
        descriptor = os.open(
            name,
            os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
            dir_fd=parent_fd,
        )
    except OSError as error:
        # Gone, or a link or a file in its place: renamed away by someone else.
        if error.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            raise _replaced(shown) from None
        raise
    try:
        _check_made(descriptor, os.fstat(parent_fd), shown)
        status = os.fstat(descriptor)
    except BaseException:
        os.close(descriptor)
        raise
    return PrivateFolder(descriptor, name, shown, (status.st_dev, status.st_ino))


def _check_made(descriptor: int, parent: os.stat_result, shown: str) -> None:
    status = os.fstat(descriptor)
    if not stat.S_ISDIR(status.st_mode) or status.st_dev != parent.st_dev or os.listdir(descriptor):
        raise _replaced(shown)
    if status.st_uid == os.geteuid() and stat.S_IMODE(status.st_mode) != PRIVATE_MODE:
        with contextlib.suppress(OSError):
            os.fchmod(descriptor, PRIVATE_MODE)  # a umask took bits away
        status = os.fstat(descriptor)
    if status.st_uid == os.geteuid() and stat.S_IMODE(status.st_mode) == PRIVATE_MODE:
        return
    if not _holds_links(descriptor):
        # FAT and exFAT (most cards as sold) have no owners or modes: every entry shows the
        # mount's uid= and mode, whoever made it. Nor can they hold a symlink, a hard link or
        # a FIFO, so there is nothing anyone could redirect a write to.
        return
    raise FolderReplaced(
        f"{printable(shown)}, the private folder flashmark just made, was replaced: it is "
        f"owned by uid {status.st_uid} with mode {stat.S_IMODE(status.st_mode):04o}, not by "
        f"uid {os.geteuid()} with mode 0700 (another user swapped it, or this filesystem maps "
        "owners, as NFS maps root's: run as that user); nothing was written"
    )


def _holds_links(descriptor: int) -> bool:
    """True unless this filesystem refuses symlinks (FAT, exFAT: EPERM); tried in the folder
    just made, and removed at once."""
    probe = ".flashmark-link-probe"
    try:
        os.symlink("flashmark", probe, dir_fd=descriptor)
    except OSError as error:
        return error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS)
    os.unlink(probe, dir_fd=descriptor)
    return True


def _replaced(shown: str) -> FolderReplaced:
    return FolderReplaced(
        f"{printable(shown)}, the private folder flashmark just made, was replaced before it "
        "could be opened (another user is changing this folder); nothing was written"
    )


def remove_private_folder(parent_fd: int, folder: PrivateFolder) -> OSError | None:
    """Empty `folder` through its descriptor, remove its name when that still leads to it, and
    close it (module doc). Returns the error that kept something from being removed, or None
    (a name renamed away by someone else is theirs now, and not looked for)."""
    failure: OSError | None = None
    try:
        for name, is_dir in _entries(folder.fd):
            try:
                if is_dir:
                    shutil.rmtree(name, dir_fd=folder.fd)
                else:
                    os.unlink(name, dir_fd=folder.fd)
            except FileNotFoundError:
                continue
        status = os.stat(folder.name, dir_fd=parent_fd, follow_symlinks=False)
        if (status.st_dev, status.st_ino) == folder.identity:
            os.rmdir(folder.name, dir_fd=parent_fd)
    except FileNotFoundError:
        pass  # renamed away or removed: nothing of it is left under its name
    except OSError as error:
        failure = error
    finally:
        os.close(folder.fd)
    return failure


def _entries(descriptor: int) -> list[tuple[str, bool]]:
    """The names in the folder open as `descriptor` (and whether each is a folder), listed
    through a descriptor opened now: btrfs lists, through a descriptor, only the entries
    that existed when it was opened (even after rewinddir; seen on Linux 6.18), so the test
    file made after the private folder was opened would stay. "." relative to the descriptor
    is the same folder whatever its name is now: no path is looked up."""
    listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=descriptor)
    try:
        with os.scandir(listing) as entries:
            return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    finally:
        os.close(listing)


@contextlib.contextmanager
def private_folder(parent_fd: int, parent_shown: str, name: str) -> Iterator[PrivateFolder]:
    """`make_private_folder`, removed on the way out (errors of the removal are ignored: the
    name lets `flashmark clean` find it later). Made and removed with signals held, so a
    signal cannot leave it half made or half removed."""
    with signals_held():
        folder = make_private_folder(parent_fd, parent_shown, name)
    try:
        yield folder
    finally:
        with signals_held():
            remove_private_folder(parent_fd, folder)
