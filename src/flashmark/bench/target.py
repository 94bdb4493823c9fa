"""From the TARGET argument to something safe to measure, and the test file's life cycle.

- A folder, or a file inside one (the file itself is never touched): a uniquely named test file
  is created in the folder and always removed (see `created_test_file`).
- A block device: read tests only, unless the run is destructive; a destructive run is refused
  when anything in the device's stack, above or below it, is in use (device_safety.py).
Every refusal is a typed error naming the cause and the option that changes it.

Paths are data, never syntax: fio's job parser reinterprets '#', ';', '${..}', ':' and blanks
(bench/jobs.py), so fio never sees a path the user typed. A folder is opened once, checked to be
the folder resolve_target examined (st_dev, st_ino), and everything after goes through that
descriptor: a private folder is made in it (mode 0700, flashmark.system.private_folder), the test
file is created and allocated in that (through the descriptor: fio finds it laid out and never
lays it out itself), and fio runs inside the private folder, reached through its descriptor,
with a generated relative name (fio/runner.py). Another user who can write the target folder
can rename or replace the private folder's name, never what is inside it: fio's removing and
creating its file by name cannot be redirected. A device is given to fio by the kernel's own
name, /dev/NAME from sysfs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from flashmark.bench.model import Target, TargetKind
from flashmark.errors import (
    DeviceFailed,
    DirectIONotSupported,
    NotEnoughSpace,
    ReadOnlyTarget,
    TargetError,
    TargetPermissionDenied,
    UsageError,
    add_outcome,
    printable,
)
from flashmark.fio.job import is_fio_literal_device
from flashmark.system.block_device import open_failed
from flashmark.system.device_safety import check_writable
from flashmark.system.device_stack import majmin_of, name_of_majmin
from flashmark.system.disk_space import plan_space
from flashmark.system.file_space import allocate, sync_filesystem
from flashmark.system.leftovers import private_folder_name, test_file_name
from flashmark.system.mounts import MEMORY_FILESYSTEMS, mount_of, read_mounts, refuse_read_only
from flashmark.system.paths import stat_target
from flashmark.system.private_folder import (
    FolderReplaced,
    PrivateFolder,
    make_private_folder,
    open_checked_folder,
    remove_private_folder,
)
from flashmark.system.signals import signals_held
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import refuse_if_busy
from flashmark.system.watchdog import DeviceHung
from flashmark.units import format_size

# errno values of the test file's life cycle that mean the device or its filesystem failed:
# I/O errors, a device gone, a filesystem shut down (EIO) or turned read-only after errors
# (EROFS: ext4 errors=remount-ro), or found corrupt (EUCLEAN, ext4's EFSCORRUPTED).
_DEVICE_ERRNOS = {
    errno.EIO,
    errno.ENXIO,
    errno.ENODEV,
    errno.ENOMEDIUM,
    errno.EREMOTEIO,
    errno.EROFS,
    errno.EUCLEAN,
}


@dataclass(frozen=True)
class TestArea:
    """What fio is pointed at: `filename` for its job file, and the folder to run in."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    filename: str  # a generated name relative to the private folder, or a device's /dev/NAME
    folder_fd: int | None  # the private folder, open (kind FILE): fio's working directory


def resolve_target(given: str, *, size_bytes: int, destructive: bool, roots: SystemRoots) -> Target:
    path, status = stat_target(given, "folder, file or device")
    if stat.S_ISBLK(status.st_mode):
        return _device_target(
            given, status, size_bytes=size_bytes, destructive=destructive, roots=roots
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
    try:
        folder_status = folder.stat()
        refuse_if_busy(str(folder))
    except OSError as error:
        raise TargetError(f"{folder}: cannot read the folder: {error.strerror}") from None
    return _folder_target(given, folder, folder_status, size_bytes=size_bytes, roots=roots)


def _folder_target(
    given: str, folder: Path, status: os.stat_result, *, size_bytes: int, roots: SystemRoots
) -> Target:
    st_dev = status.st_dev
    mount = mount_of(str(folder), read_mounts(roots))
    device = name_of_majmin(majmin_of(st_dev), roots)
    refuse_read_only(folder, mount)
    # The test area, and the reserve left free beyond it (flashmark.system.disk_space).
    space = plan_space(folder, size_bytes, roots)
    space.check("choose a smaller --size")
    # fio reads this name in its job files: it must stay literal to fio's parser (letters,
    # digits, '.', '_', '-'); bench/jobs.py refuses anything else.
    name = test_file_name()
    private = private_folder_name()
    return Target(
        given=given,
        kind=TargetKind.FILE,
        path=str(folder / private / name),
        folder=str(folder),
        block_device=f"/dev/{device}" if device is not None else None,
        filesystem=mount.fstype if mount is not None else None,
        mount_point=mount.mount_point if mount is not None else None,
        mount_options=mount.all_options if mount is not None else None,
        capacity_bytes=space.filesystem.free_bytes,
        test_file=name,
        folder_identity=(status.st_dev, status.st_ino),
        private_folder=private,
    )


def _device_target(
    given: str, status: os.stat_result, *, size_bytes: int, destructive: bool, roots: SystemRoots
) -> Target:
    node, device = _kernel_node(given, status, roots)
    try:
        refuse_if_busy(node)
    except OSError as error:
        permission = "reading a device needs root (sudo) or the disk group"
        raise open_failed(node, error, permission) from None
    capacity = roots.size_bytes(device)
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


def _kernel_node(given: str, status: os.stat_result, roots: SystemRoots) -> tuple[str, str]:
    """The device's node by the kernel's own name (/dev/NAME, NAME from sysfs for its
    major:minor), checked to be that same device, and NAME: fio is given this node, never
    `given`, which may be any path to a device node (a symlink, a node made elsewhere, a name
    fio would parse)."""
    majmin = majmin_of(status.st_rdev)
    device = name_of_majmin(majmin, roots)
    if device is None:
        raise TargetError(
            f"{printable(given)}: the kernel lists no block device {majmin} "
            f"({roots.sysfs}/dev/block/{majmin} is missing)"
        )
    node = f"/dev/{device}"
    if not is_fio_literal_device(node):
        raise TargetError(
            f"{printable(given)}: the kernel names this device {device!r}, a name flashmark "
            "does not hand to fio (only letters, digits, '.', '_' and '-')"
        )
    try:
        node_status = os.stat(node)
    except OSError as error:
        raise TargetError(
            f"{printable(given)}: {node}, the kernel's name for device {majmin}, cannot be "
            f"read: {error.strerror}"
        ) from None
    if not stat.S_ISBLK(node_status.st_mode) or node_status.st_rdev != status.st_rdev:
        raise TargetError(
            f"{printable(given)}: {node} is not device {majmin}, which the kernel calls "
            f"{device}; is /dev out of date?"
        )
    return node, device


@contextlib.contextmanager
def created_test_file(
    target: Target,
    *,
    direct: bool,
    left_behind: list[str] | None = None,
    allocate_bytes: int | None = None,
) -> Iterator[TestArea]:
    """Open the checked folder, make the private folder in it and the test file in that, check
    it takes direct I/O, allocate it (`allocate_bytes`, see `_allocate`), and always try to
    remove both. Yields what fio gets: the generated name and the private folder's descriptor
    (closed on exit).

    Whatever ends the block, the error on its way out carries what became of the test file
    ("removed", or "could not be removed: PATH"): the caller stops fio before that. When the
    block succeeds and removal fails, the message goes to `left_behind` (the measured result is
    still good), or is raised when there is no such list.
    """
    if (
        target.folder is None
        or target.test_file is None
        or target.folder_identity is None
        or target.private_folder is None
    ):
        raise TargetError(f"{target.given}: not a folder target")
    if direct and target.filesystem in MEMORY_FILESYSTEMS:
        raise DirectIONotSupported(
            f"{target.folder} is on {target.filesystem}, which lives in RAM: its speed is not a "
            "device's. Pick a folder on the device to measure, or add --buffered to measure it "
            "anyway"
        )
    folder_fd: int | None = None
    try:
        with signals_held():  # a signal in between would leak the descriptor
            folder_fd = _open_checked_folder(target)
        name = target.test_file
        private: PrivateFolder | None = None
        created = False
        try:
            # The folder, the file and the promise to remove them come together: a signal in
            # between would leave them behind, so it is raised once the removal below is armed.
            with signals_held():
                try:
                    private = make_private_folder(folder_fd, target.folder, target.private_folder)
                    descriptor = os.open(
                        name,
                        os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                        0o600,
                        dir_fd=private.fd,
                    )
                except OSError as error:
                    raise _creation_error(target, error) from None
                created = True
                os.close(descriptor)
            if direct:
                _check_direct_io(name, private.fd, target)
            if allocate_bytes is not None:
                _allocate(name, private.fd, target, allocate_bytes)
            yield TestArea(filename=name, folder_fd=private.fd)
        except BaseException as error:
            if private is not None and isinstance(error, DeviceHung):
                # Removing anything on a filesystem whose device stopped answering waits in
                # uninterruptible I/O (its journal), and flashmark could not exit: left to
                # `flashmark clean`, which finds it by its owner-stamped name.
                os.close(private.fd)
                add_outcome(error, _left_on_hung_device(target))
            elif private is not None:
                removal = _remove(target, folder_fd, private)
                if created:
                    add_outcome(error, removal.message)
            raise
        assert private is not None  # made before the yield
        removal = _remove(target, folder_fd, private)
        if removal.error is not None:
            if left_behind is None:
                raise removal.error
            left_behind.append(removal.message)
    finally:
        if folder_fd is not None:
            os.close(folder_fd)


def _open_checked_folder(target: Target) -> int:
    """The folder, opened once; refused when it is no longer the folder that was checked (its
    path was renamed or replaced since resolve_target looked at it)."""
    assert target.folder is not None
    try:
        return open_checked_folder(target.folder, target.folder_identity)
    except FolderReplaced:
        raise
    except OSError as error:
        what = f"cannot open the folder {printable(target.folder)}"
        raise _lifecycle_error(what, error) from None


@dataclass(frozen=True)
class _Removal:
    message: str
    error: Exception | None  # None when the test file is gone


def _remove(target: Target, folder_fd: int, private: PrivateFolder) -> _Removal:
    """Remove the test file and its private folder through their descriptors; say what really
    happened. The private folder's descriptor is closed either way."""
    shown = printable(target.path)
    error = remove_private_folder(folder_fd, private)
    if error is not None:
        message = (
            f"the test file could not be removed: {shown} ({error.strerror}); "
            "delete it once the filesystem works again"
        )
        return _Removal(message, _lifecycle_error(message, error, include_cause=False))
    return _Removal("the test file was removed", None)


def _left_on_hung_device(target: Target) -> str:
    folder = printable(target.folder or "")
    return (
        f"the test file was left, as the device does not answer: {printable(target.path)}; "
        f"`flashmark clean {folder}` removes it once the device answers again"
    )


def _lifecycle_error(what: str, error: OSError, *, include_cause: bool = True) -> Exception:
    """An OSError of the test file's life cycle as flashmark's error: a failed device or
    filesystem is DeviceFailed (exit 5), anything else a TargetError."""
    cause = f": {error.strerror}" if include_cause else ""
    if error.errno in _DEVICE_ERRNOS:
        return DeviceFailed(f"the device failed or disappeared: {what}{cause}")
    return TargetError(f"{what}{cause}")


def _creation_error(target: Target, error: OSError) -> Exception:
    folder = printable(target.folder or "")
    if error.errno == errno.EROFS:
        return ReadOnlyTarget(f"{folder} is on a read-only filesystem: pick another folder")
    if error.errno in (errno.EACCES, errno.EPERM):
        return TargetPermissionDenied(
            f"cannot create a test file in {folder}: permission denied "
            "(pick a folder you can write, or run with sudo)"
        )
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return NotEnoughSpace(f"{folder} is full: free some space or choose a smaller --size")
    return _lifecycle_error(f"cannot create a test file in {folder}", error)


def _allocate(name: str, folder_fd: int, target: Target, size_bytes: int) -> None:
    """Make the test file `size_bytes` long through the private folder's descriptor, without
    writing it where the filesystem can (fallocate, flashmark.system.file_space), then put the
    filesystem's pending writes on the device. fio then finds the file laid out, so it never
    removes and creates it again by name, and a write test that comes first (sustained-write)
    starts with nothing written before it; what the filesystem still held for the device
    (metadata, the user's own writes, FAT's zeros) is written now, not during a test."""
    try:
        descriptor = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder_fd)
    except OSError as error:
        what = f"cannot open the test file {printable(target.path)}"
        raise _lifecycle_error(what, error) from None
    try:
        allocate(descriptor, size_bytes)
        sync_filesystem(descriptor)
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise NotEnoughSpace(
                f"{printable(target.folder or '')} has no room for a {format_size(size_bytes)} "
                "test file: free some space or choose a smaller --size"
            ) from None
        what = f"cannot allocate the test file {printable(target.path)}"
        raise _lifecycle_error(what, error) from None
    finally:
        os.close(descriptor)


def _check_direct_io(name: str, folder_fd: int, target: Target) -> None:
    fs = target.filesystem or "this filesystem"
    try:
        descriptor = os.open(
            name, os.O_RDWR | os.O_DIRECT | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder_fd
        )
    except OSError as error:
        if error.errno == errno.EINVAL:
            raise DirectIONotSupported(
                f"{fs} at {printable(target.mount_point or target.folder or '')} does not "
                "support direct I/O (O_DIRECT), so flashmark cannot bypass the page cache there. "
                "Add --buffered to measure with the page cache (results are labelled buffered)"
            ) from None
        what = f"cannot open the test file {printable(target.path)}"
        raise _lifecycle_error(what, error) from None
    os.close(descriptor)
