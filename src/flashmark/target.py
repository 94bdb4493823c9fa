"""From the TARGET argument to something safe to measure, and the test file's life cycle.

- A folder, or a file inside one (the file itself is never touched): a uniquely named test file
  is created in the folder and always removed (see `created_test_file`).
- A block device: read tests only, unless the run is destructive; a destructive run is refused
  when anything in the device's stack, above or below it, is in use (device_safety.py).
Every refusal is a typed error naming the cause and the option that changes it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from flashmark.device_safety import block_device_for_majmin, block_device_for_node, check_writable
from flashmark.errors import (
    DirectIONotSupported,
    NotEnoughSpace,
    ReadOnlyTarget,
    TargetError,
    TargetNotFound,
    TargetPermissionDenied,
    UsageError,
)
from flashmark.leftovers import test_file_name
from flashmark.model import Target, TargetKind
from flashmark.mounts import mount_of, read_mounts
from flashmark.sysroot import SystemRoots
from flashmark.units import MiB, format_size

TEST_FILE_PREFIX = ".flashmark-"  # the whole name: leftovers.test_file_name()
# Left free beyond the test area, so the filesystem's metadata and the journal have room.
FREE_SPACE_MARGIN_BYTES = 64 * MiB
# Filesystems known to take O_DIRECT opens but serve them from memory: their numbers would be
# RAM speed, not a device's.
_MEMORY_FILESYSTEMS = {"tmpfs", "ramfs"}


def resolve_target(given: str, *, size_bytes: int, destructive: bool, roots: SystemRoots) -> Target:
    path = Path(given).expanduser()
    try:
        status = path.stat()
    except FileNotFoundError:
        raise TargetNotFound(f"{given}: no such folder, file or device") from None
    except PermissionError:
        raise TargetPermissionDenied(f"{given}: permission denied") from None
    if stat.S_ISBLK(status.st_mode):
        return _device_target(
            given, path, size_bytes=size_bytes, destructive=destructive, roots=roots
        )
    if destructive:
        raise UsageError(
            "--destructive is for block devices only; a folder is measured with a "
            "test file that is removed afterwards"
        )
    if stat.S_ISDIR(status.st_mode):
        folder = path.resolve()
    elif stat.S_ISREG(status.st_mode):
        folder = path.resolve().parent
    else:
        raise TargetError(f"{given}: not a folder, a file or a block device")
    return _folder_target(given, folder, status.st_dev, size_bytes=size_bytes, roots=roots)


def _folder_target(
    given: str, folder: Path, st_dev: int, *, size_bytes: int, roots: SystemRoots
) -> Target:
    mount = mount_of(str(folder), read_mounts(roots))
    device = block_device_for_majmin(f"{os.major(st_dev)}:{os.minor(st_dev)}", roots)
    if mount is not None and mount.read_only:
        raise ReadOnlyTarget(
            f"{folder} is on a read-only filesystem ({mount.fstype} on "
            f"{mount.mount_point}): remount it read-write or pick another folder"
        )
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    if free < size_bytes + FREE_SPACE_MARGIN_BYTES:
        raise NotEnoughSpace(
            f"{folder} has {format_size(free)} free; the test area needs {format_size(size_bytes)} "
            f"plus {format_size(FREE_SPACE_MARGIN_BYTES)} to spare: choose a smaller --size"
        )
    return Target(
        given=given,
        kind=TargetKind.FILE,
        path=str(folder / test_file_name()),
        folder=str(folder),
        block_device=f"/dev/{device.name}" if device is not None else None,
        filesystem=mount.fstype if mount is not None else None,
        mount_point=mount.mount_point if mount is not None else None,
        mount_options=mount.all_options if mount is not None else None,
        capacity_bytes=free,
    )


def _device_target(
    given: str, path: Path, *, size_bytes: int, destructive: bool, roots: SystemRoots
) -> Target:
    node = str(path.resolve())
    try:
        with open(node, "rb"):
            pass
    except PermissionError:
        raise TargetPermissionDenied(
            f"{node}: permission denied: reading a device needs root (sudo) or the disk group"
        ) from None
    except OSError as error:
        raise TargetError(f"{node}: cannot open the device: {error.strerror}") from None
    device = block_device_for_node(node, roots)
    capacity = device.size_bytes if device is not None else None
    if capacity is not None and size_bytes > capacity:
        raise NotEnoughSpace(
            f"{node} holds {format_size(capacity)}, less than the test area "
            f"{format_size(size_bytes)}: choose a smaller --size"
        )
    if destructive:
        # Refused here, before the confirmation prompt; measure() holds the claim for the run.
        check_writable(node, roots)
    return Target(
        given=given,
        kind=TargetKind.DEVICE,
        path=node,
        folder=None,
        block_device=node,
        filesystem=None,
        mount_point=None,
        mount_options=None,
        capacity_bytes=capacity,
    )


@contextlib.contextmanager
def created_test_file(target: Target, *, direct: bool) -> Iterator[Path]:
    """Create the target's test file, check it takes direct I/O, and always remove it."""
    path = Path(target.path)
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as error:
        raise _creation_error(path, error) from None
    os.close(descriptor)
    try:
        if direct:
            _check_direct_io(path, target)
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _creation_error(path: Path, error: OSError) -> Exception:
    folder = path.parent
    if error.errno == errno.EROFS:
        return ReadOnlyTarget(f"{folder} is on a read-only filesystem: pick another folder")
    if error.errno in (errno.EACCES, errno.EPERM):
        return TargetPermissionDenied(
            f"cannot create a test file in {folder}: permission denied "
            "(pick a folder you can write, or run with sudo)"
        )
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return NotEnoughSpace(f"{folder} is full: free some space or choose a smaller --size")
    return TargetError(f"cannot create a test file in {folder}: {error.strerror}")


def _check_direct_io(path: Path, target: Target) -> None:
    fs = target.filesystem or "this filesystem"
    if target.filesystem in _MEMORY_FILESYSTEMS:
        raise DirectIONotSupported(
            f"{target.folder} is on {fs}, which lives in RAM: its speed is not a device's. "
            "Pick a folder on the device to measure, or add --buffered to measure it anyway"
        )
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_DIRECT)
    except OSError as error:
        if error.errno == errno.EINVAL:
            raise DirectIONotSupported(
                f"{fs} at {target.mount_point or target.folder} does not support direct I/O "
                "(O_DIRECT), so flashmark cannot bypass the page cache there. Add --buffered to "
                "measure with the page cache (results are labelled buffered)"
            ) from None
        raise
    os.close(descriptor)
