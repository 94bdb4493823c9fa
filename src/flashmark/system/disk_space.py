"""How much a command may write to a filesystem, said before it writes and watched while it does.

Every command that takes space (a folder's `surface`, `run`'s test file and workloads,
`workload`, the power-cut test's filesystem mode) leaves at least `reserve_bytes` free on the
filesystem it writes: a full filesystem loses logs and breaks databases and package installs.

    plan = plan_space(folder, write_bytes, roots)   # what it writes where
    plan.check("choose a smaller --size")           # NotEnoughSpace when it would eat the reserve
    plan.line()                                     # the "space" line said before writing
    watch = SpaceWatch(plan); watch.check(left)     # DiskFilling when someone else fills it

A loop device's image file that is sparse grows on its own (host) filesystem as the loop is
written, so such a host is part of the plan too, with the image's holes as the most it can
take; a fully allocated image takes nothing more from its host. Only hosts that are block-device
filesystems count: a FUSE or network file says nothing true about its room.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import NotEnoughSpace, TargetError, TargetNotFound
from flashmark.system.device_stack import (
    MemberKind,
    Role,
    device_stack,
    majmin_of,
    name_in_dev,
    name_of_majmin,
    node_of,
    source_device_name,
)
from flashmark.system.mounts import mount_of, read_mounts
from flashmark.system.sysroot import SystemRoots
from flashmark.units import GiB, format_size

# The reserve: a share of the filesystem, at least a floor. The floor is what a system needs
# for a day of logs, a package upgrade and a database's journal; the share keeps the ext4-like
# headroom on large disks. A filesystem too small to spare the floor (an old card, an emulated
# one) keeps a quarter of itself instead, so that it can still be measured.
RESERVE_SHARE = 0.05
RESERVE_FLOOR_BYTES = 1 * GiB
SMALL_FILESYSTEM_SHARE = 0.25
# How the plan is said before a command writes (`SpacePlan.line`).
SPACE_LABEL = "space    "


def reserve_bytes(size_bytes: int) -> int:
    """What a command leaves free on a filesystem of `size_bytes`: max(5%, 1 GiB), or a
    quarter of it when that is less than 1 GiB (module constants)."""
    floor = min(RESERVE_FLOOR_BYTES, int(size_bytes * SMALL_FILESYSTEM_SHARE))
    return max(int(size_bytes * RESERVE_SHARE), floor)


class DiskFilling(NotEnoughSpace):
    """The free space fell below the reserve while a command was writing: something else is
    filling the filesystem."""


@dataclass(frozen=True)
class Filesystem:
    """A filesystem as a command finds it: where, what, on which device, how big, how free."""

    folder: str  # a folder on it (statvfs is asked here)
    st_dev: int
    mount_point: str | None
    fstype: str | None
    device: str | None  # /dev/NAME of its block device; None without one (FUSE, NFS, tmpfs)
    size_bytes: int
    free_bytes: int  # for an unprivileged writer (f_bavail)

    @property
    def reserve_bytes(self) -> int:
        return reserve_bytes(self.size_bytes)

    @property
    def room_bytes(self) -> int:
        """What may be written before the reserve."""
        return max(0, self.free_bytes - self.reserve_bytes)

    def label(self) -> str:
        """'/dev/vda (ext4 on /)'."""
        what = f"{self.fstype or 'filesystem'} on {self.mount_point or self.folder}"
        return f"{self.device} ({what})" if self.device else what

    def now(self) -> Filesystem:
        """The same filesystem, its free space read again: at its mount point when that is
        still this filesystem, since nobody can rename a mount point (rename(2): EBUSY), while
        the folder may be moved away or swapped for a link by whoever owns its parent."""
        size, free = _sizes(self._steady_path())
        return Filesystem(
            self.folder, self.st_dev, self.mount_point, self.fstype, self.device, size, free
        )

    def _steady_path(self) -> str:
        if self.mount_point is not None:
            with contextlib.suppress(OSError):
                if os.stat(self.mount_point).st_dev == self.st_dev:
                    return self.mount_point
        return self.folder


def filesystem_of(folder: str | Path, roots: SystemRoots) -> Filesystem:
    """The filesystem holding `folder` (an existing folder). OSError when it cannot be read."""
    folder = str(folder)
    st_dev = os.stat(folder).st_dev
    majmin = majmin_of(st_dev)
    mount = mount_of(os.path.realpath(folder), read_mounts(roots), majmin)
    name = name_of_majmin(majmin, roots) if os.major(st_dev) else None
    if name is None and mount is not None:
        name = source_device_name(mount.source, roots)
    size, free = _sizes(folder)
    return Filesystem(
        folder=folder,
        st_dev=st_dev,
        mount_point=mount.mount_point if mount is not None else None,
        fstype=mount.fstype if mount is not None else None,
        device=node_of(name) if name else None,
        size_bytes=size,
        free_bytes=free,
    )


def _sizes(folder: str) -> tuple[int, int]:
    stats = os.statvfs(folder)
    return stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize


@dataclass(frozen=True)
class SparseImage:
    """A loop device's backing file with holes: writing the loop fills them on `host`."""

    path: str
    holes_bytes: int  # what it can still grow by (its size less its allocated blocks)
    host: Filesystem

    def now(self) -> SparseImage:
        return SparseImage(self.path, _holes(self.path), self.host.now())


def sparse_images(device: str | None, roots: SystemRoots) -> tuple[SparseImage, ...]:
    """The sparse image files below `device` (/dev/NAME) whose hosts are block-device
    filesystems (module doc)."""
    if device is None:
        return ()
    try:
        stack = device_stack(name_in_dev(device), roots)
    except (TargetError, OSError):  # a stack that cannot be read has no image to count
        return ()
    found = []
    for member in stack.members:
        if member.kind is not MemberKind.FILE or member.role is not Role.BELOW:
            continue
        try:
            status = os.stat(member.name)
            identity = member.file_identity
            if identity is not None and (status.st_dev, status.st_ino) != (
                identity.st_dev,
                identity.st_ino,
            ):
                continue  # the path names another file now: the loop's own is unreachable
            holes = _holes(member.name)
            host = filesystem_of(os.path.dirname(member.name) or "/", roots)
        except OSError:
            continue
        if holes > 0 and host.device is not None:
            found.append(SparseImage(member.name, holes, host))
    return tuple(found)


def _holes(path: str) -> int:
    status = os.stat(path)
    return max(0, status.st_size - status.st_blocks * 512)  # st_blocks: 512-byte units (stat(2))


@dataclass(frozen=True)
class SpacePlan:
    """What a command writes where (module doc): at most `write_bytes` to `filesystem`, and
    into the holes of the sparse images below it. `new_filesystem`: the filesystem is made by
    the command on `filesystem.device` (its figures are the device's)."""

    filesystem: Filesystem
    write_bytes: int
    images: tuple[SparseImage, ...] = ()
    new_filesystem: bool = False

    def line(self) -> str:
        """The line said before writing: 'space    writes up to 78 GiB to /dev/vda (ext4 on
        /), leaving at least 12.6 GiB free'."""
        fs = self.filesystem
        left = format_size(max(0, fs.free_bytes - self.write_bytes))
        if self.new_filesystem:  # its free space is the device's less what mkfs takes
            where = f"{fs.device} (a new {fs.fstype} made on its {format_size(fs.size_bytes)})"
            leaving = f"leaving at least {left} of it to the filesystem and free space"
        else:
            where, leaving = fs.label(), f"leaving at least {left} free"
        text = f"{SPACE_LABEL}writes up to {format_size(self.write_bytes)} to {where}, {leaving}"
        for image in self.images:
            grows = min(self.write_bytes, image.holes_bytes)
            text += (
                f"; its image {image.path} can grow by {format_size(grows)} on "
                f"{image.host.label()}, leaving at least "
                f"{format_size(max(0, image.host.free_bytes - grows))} free"
            )
        return text

    def check(self, remedy: str) -> None:
        """NotEnoughSpace, in one line with `remedy`, when the writes would leave less than
        the reserve on the filesystem or an image's host."""
        for fs, needed in self._needs():
            if fs.free_bytes - needed < fs.reserve_bytes:
                raise NotEnoughSpace(
                    f"{fs.label()} has {format_size(fs.free_bytes)} free; writing "
                    f"{format_size(needed)} there would leave less than the "
                    f"{format_size(fs.reserve_bytes)} flashmark always leaves free: {remedy}"
                )

    def _needs(self) -> list[tuple[Filesystem, int]]:
        needs = [(self.filesystem, 0 if self.new_filesystem else self.write_bytes)]
        needs += [(i.host, min(self.write_bytes, i.holes_bytes)) for i in self.images]
        return needs


def plan_space(folder: str | Path, write_bytes: int, roots: SystemRoots) -> SpacePlan:
    """Writing at most `write_bytes` into `folder`'s filesystem (module doc); TargetNotFound
    when the folder is gone (moved or removed since the command looked at it)."""
    try:
        fs = filesystem_of(folder, roots)
    except FileNotFoundError:
        raise TargetNotFound.moved(folder) from None
    return SpacePlan(fs, write_bytes, sparse_images(fs.device, roots))


def plan_new_filesystem(
    device: str, fstype: str, size_bytes: int, write_bytes: int, roots: SystemRoots
) -> SpacePlan:
    """Writing at most `write_bytes` into a filesystem the command makes on `device` (all of
    its `size_bytes`): the reserve is the device's, its sparse images' hosts as above."""
    fs = Filesystem(device, 0, None, fstype, device, size_bytes, size_bytes)
    return SpacePlan(fs, write_bytes, sparse_images(device, roots), new_filesystem=True)


class SpaceWatch:
    """The plan's filesystems read again while the command writes: `check(left_bytes)` raises
    DiskFilling when, with `left_bytes` still to write, one of them would end below its
    reserve, so the command stops before the filesystem is full, not after."""

    def __init__(self, plan: SpacePlan, folder: str | Path | None = None) -> None:
        fs = plan.filesystem
        if folder is not None:  # a made filesystem, now mounted: watch it where it is
            fs = Filesystem(str(folder), fs.st_dev, str(folder), fs.fstype, fs.device, 0, 0)
        self._filesystem = fs
        self._images = plan.images
        self._write_bytes = plan.write_bytes

    def check(self, left_bytes: int = 0) -> None:
        fs = self._filesystem.now()
        if fs.free_bytes - left_bytes < fs.reserve_bytes:
            raise DiskFilling(self._message(fs))
        for image in self._images:
            now = image.now()
            grows = min(self._write_bytes, now.holes_bytes)
            if now.host.free_bytes - grows < now.host.reserve_bytes:
                raise DiskFilling(self._message(now.host))

    @staticmethod
    def _message(fs: Filesystem) -> str:
        return (
            f"{fs.label()} is filling up ({format_size(fs.free_bytes)} free, something else "
            f"is writing there): stopped to leave {format_size(fs.reserve_bytes)} free"
        )
