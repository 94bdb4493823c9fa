"""What a surface scan reads and writes: a block device (flashmark.system.block_device), or
files filling a folder's free space.

Both take whole-sector requests at sector-aligned offsets into page-aligned buffers and use
O_DIRECT, so every byte goes to the device and back (docs/methodology.md); neither
retries anything itself: an error is the scan's to map (scan.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from flashmark.errors import DirectIONotSupported, NotEnoughSpace, TargetError, add_outcome
from flashmark.system.block_device import BlockDevice, open_direct, transfer
from flashmark.system.disk_space import SpacePlan, plan_space
from flashmark.system.leftovers import private_folder_name, test_file_name
from flashmark.system.private_folder import (
    FolderReplaced,
    PrivateFolder,
    make_private_folder,
    open_checked_folder,
    remove_private_folder,
)
from flashmark.system.signals import signals_held
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import held
from flashmark.system.watchdog import DeviceHung
from flashmark.units import format_size

# f3write writes files of 1 GB each (f3 README, "f3write"); one file per GiB here too, so a
# file system's limits on file size never matter and each file is small enough to lose.
FOLDER_FILE_BYTES = 1 << 30
# Room kept per file for its own metadata (extent blocks) beyond its data, so that the files'
# growth never takes the filesystem below its reserve (flashmark.system.disk_space).
FOLDER_FILE_OVERHEAD_BYTES = 1 << 20
# Requests in a folder stay multiples of 4 KiB: O_DIRECT there must be aligned to the logical
# block of the device under the filesystem, 4096 on 4Kn disks (open(2), "O_DIRECT").
FOLDER_SECTOR = 4096


class Medium(Protocol):
    size_bytes: int
    sector_bytes: int  # the smallest request: the resolution of the error map

    def read(self, buffer: memoryview, offset: int) -> None:
        """Fill `buffer` from `offset`; OSError as the kernel reports it."""

    def write(self, buffer: memoryview, offset: int) -> None: ...

    def sync(self) -> None:
        """Make what was written durable (the device's own cache flushed)."""


@dataclass
class FolderMedium:
    """The surface as files of FOLDER_FILE_BYTES (the last one shorter), one after another, in
    a private folder of the scanned folder (flashmark.system.private_folder): created and opened
    relative to its descriptor, so no other user can redirect them.

    Their folder's name is owner-stamped (flashmark.system.leftovers): `flashmark clean` removes it
    after a SIGKILL; every other exit removes it here. The I/O process (worker.py) serves a
    device the same way: as one file of its size."""

    folder: Path
    size_bytes: int
    sector_bytes: int
    file_bytes: int
    fds: list[int]

    def _transfer(self, buffer: memoryview, offset: int, *, write: bool) -> None:
        """A request made in each file it spans, its part there."""
        done = 0
        while done < len(buffer):
            index, within = divmod(offset + done, self.file_bytes)
            size = min(len(buffer) - done, self.file_bytes - within)
            transfer(self.fds[index], buffer[done : done + size], within, write=write)
            done += size

    def read(self, buffer: memoryview, offset: int) -> None:
        self._transfer(buffer, offset, write=False)

    def write(self, buffer: memoryview, offset: int) -> None:
        """A full filesystem fails with ENOSPC or EDQUOT: the I/O process's caller says that
        as `folder_full` (worker.py)."""
        self._transfer(buffer, offset, write=True)

    def sync(self) -> None:
        for fd in self.fds:
            os.fsync(fd)


def folder_full(folder: Path) -> str:
    """The message when a folder scan's writes find the filesystem full."""
    return (
        f"{folder} filled up during the scan (something else wrote there meanwhile): run it "
        "again, or give a smaller --size"
    )


def folder_surface_space(
    folder: Path, size_limit: int | None, block_bytes: int, roots: SystemRoots
) -> tuple[SpacePlan, bool]:
    """What a folder scan writes, and where (flashmark.system.disk_space): the free space less
    the reserve, less the files' own metadata (or the limit given), whole blocks; and whether
    that is all the room there is (no limit, or a limit beyond it). NotEnoughSpace when that is
    not even one block."""
    space = plan_space(folder, 0, roots)
    room = space.filesystem.room_bytes
    for image in space.images:  # a sparse image can grow only as far as its host's room
        if image.holes_bytes > image.host.room_bytes:
            room = min(room, image.host.room_bytes)
    room -= -(-room // FOLDER_FILE_BYTES) * FOLDER_FILE_OVERHEAD_BYTES
    usable = room if size_limit is None else min(room, size_limit)
    usable -= usable % block_bytes
    if usable < block_bytes:
        fs = space.filesystem
        raise NotEnoughSpace(
            f"{folder} has {format_size(fs.free_bytes)} free on {fs.label()}; a surface scan "
            f"leaves {format_size(fs.reserve_bytes)} free there and needs at least one block "
            "more: free some space"
        )
    fills = size_limit is None or size_limit >= room - room % block_bytes
    return dataclasses.replace(space, write_bytes=usable), fills


@contextlib.contextmanager
def folder_files(
    folder: Path, size_bytes: int, block_bytes: int, identity: tuple[int, int] | None = None
) -> Iterator[FolderMedium]:
    """Create the files (empty, O_DIRECT) in a private folder of `folder` (the folder checked
    as `identity`, when given), and remove them and it whatever happens."""
    file_bytes = FOLDER_FILE_BYTES - FOLDER_FILE_BYTES % block_bytes
    count = -(-size_bytes // file_bytes)
    try:
        folder_fd = open_checked_folder(str(folder), identity)
    except FolderReplaced:
        raise
    except OSError as error:
        raise TargetError(f"cannot open {folder}: {error.strerror}") from None
    try:
        with (
            held(folder_fd, str(folder)),  # one flashmark per device (flashmark.system.target_lock)
            _files_in(folder, folder_fd, count) as fds,
        ):
            yield FolderMedium(folder, size_bytes, FOLDER_SECTOR, file_bytes, fds)
    finally:
        os.close(folder_fd)


@contextlib.contextmanager
def _files_in(folder: Path, folder_fd: int, count: int) -> Iterator[list[int]]:
    """`count` empty files, opened with O_DIRECT, in a new private folder of `folder`; their
    descriptors. Closed and removed with their folder on the way out."""
    fds: list[int] = []
    with signals_held():  # made and armed for removal together
        try:
            private = make_private_folder(folder_fd, str(folder), private_folder_name())
        except OSError as error:
            raise TargetError(f"cannot create a folder in {folder}: {error.strerror}") from None
    try:
        for _ in range(count):
            name = test_file_name()
            flags = os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(name, flags, 0o600, dir_fd=private.fd)
            except OSError as error:
                raise TargetError(f"cannot create a file in {folder}: {error.strerror}") from None
            fds.append(fd)
            try:
                flags = fcntl.fcntl(fd, fcntl.F_GETFL)
                fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_DIRECT)
            except OSError:
                raise DirectIONotSupported(
                    f"{folder} does not support direct I/O (O_DIRECT), so a surface scan "
                    "there would measure the page cache: pick a folder on a disk filesystem"
                ) from None
        yield fds
    except BaseException as error:
        cause = getattr(error, "cause", error)  # a scan stopped by it (ScanStopped)
        if not isinstance(cause, DeviceHung):
            _remove_files(folder_fd, private, fds)
            raise
        # Removing files on a filesystem whose device stopped answering waits in
        # uninterruptible I/O (its journal), and flashmark could not exit: they are left to
        # `flashmark clean`, which finds them by their folder's owner-stamped name.
        with signals_held():
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            os.close(private.fd)
        add_outcome(
            cause,
            f"the scan's files were left, as the device does not answer: {private.shown}; "
            f"`flashmark clean {folder}` removes them once the device answers again",
        )
        raise
    _remove_files(folder_fd, private, fds)


def _remove_files(folder_fd: int, private: PrivateFolder, fds: list[int]) -> None:
    with signals_held():
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        remove_private_folder(folder_fd, private)


@contextlib.contextmanager
def open_block_device(node: str, *, write: bool) -> Iterator[BlockDevice]:
    """The device opened for the scan and locked: one flashmark per device
    (flashmark.system.target_lock). For a write, the caller holds
    flashmark.system.device_safety.claim_for_writing around this."""
    with (
        open_direct(node, write=write, needs_root="a surface scan of a device") as device,
        held(device.fd, node),
    ):
        yield device
