"""The devices a target's I/O goes through on its way down to the disks: what a run on it shares
with every other run on the same card.

A folder or file starts at its filesystem's device (st_dev; btrfs and others show an anonymous
0:N, and mountinfo's source names the device), a device node at itself. From there the stack
walker (device_stack.py) goes down: what a device is built on (dm and md slaves, a loop's
backing device) and the disk of a partition. A loop device backed by a file goes on from that
file's filesystem, so an image file on a card reaches the card. A filesystem without a block
device (tmpfs, FUSE, NFS) ends its way, named by its anonymous device number.

Everything is read from the live /sys and /proc, which every user may read, so that a root run
and a user's run find the same devices (a user who cannot stat a loop's backing file still
finds its filesystem by its path in mountinfo).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from flashmark.errors import TargetError
from flashmark.system.device_stack import (
    FileIdentity,
    MemberKind,
    Role,
    device_stack,
    majmin_of,
    name_of_majmin,
    source_device_name,
)
from flashmark.system.mounts import Mount, mount_of, read_mounts
from flashmark.system.sysroot import SystemRoots

_LIVE = SystemRoots()
_MAX_STEPS = 64  # loop-on-file-on-loop chains are never this deep; a bound against cycles


@dataclass(frozen=True)
class Underlying:
    """One device (or device-less filesystem) a target's I/O goes through."""

    majmin: str  # "179:0": the same number for every user while it is attached
    label: str  # for messages: "device mmcblk0", "filesystem tmpfs at /tmp"


def devices_under(status: os.stat_result) -> tuple[Underlying, ...]:
    """Every device under the file of `status` (a folder, a file, a device node), nearest
    first: the target's own device, ..., the disks."""
    start = status.st_rdev if stat.S_ISBLK(status.st_mode) else status.st_dev
    return _Walk().run(majmin_of(start))


class _Walk:
    def __init__(self) -> None:
        self.found: dict[str, Underlying] = {}
        self._mounts: tuple[Mount, ...] | None = None

    @property
    def mounts(self) -> tuple[Mount, ...]:
        if self._mounts is None:
            self._mounts = read_mounts(_LIVE)
        return self._mounts

    def run(self, first: str) -> tuple[Underlying, ...]:
        pending = [first]
        for _ in range(_MAX_STEPS):
            if not pending:
                break
            majmin = pending.pop(0)
            if majmin not in self.found:
                pending += self._step(majmin)
        return tuple(self.found.values())

    def _step(self, majmin: str) -> list[str]:
        """Record `majmin` and the devices below it; the filesystems of loop backing files
        still to walk."""
        name = name_of_majmin(majmin, _LIVE)
        if name is None:
            mount = next((m for m in self.mounts if m.majmin == majmin), None)
            self.found[majmin] = Underlying(majmin, _filesystem_label(majmin, mount))
            source = _source_device(mount)
            return [] if source is None else [source]
        try:
            stack = device_stack(name, _LIVE)
        except TargetError:  # gone meanwhile
            self.found[majmin] = Underlying(majmin, f"device {name}")
            return []
        files: list[str] = []
        for member in stack.members:
            if member.role is Role.ABOVE:
                continue  # built on the target: its runs find the target on their way down
            if member.kind is MemberKind.DEVICE and member.majmin:
                label = f"device {member.name}"
                self.found.setdefault(member.majmin, Underlying(member.majmin, label))
            elif member.kind is MemberKind.FILE:
                below = self._filesystem_of(member.name, member.file_identity)
                if below is not None:
                    files.append(below)
        return files

    def _filesystem_of(self, path: str, identity: FileIdentity | None) -> str | None:
        if identity is not None:
            return majmin_of(identity.st_dev)
        mount = mount_of(os.path.normpath(path), self.mounts)
        return None if mount is None else mount.majmin


def _source_device(mount: Mount | None) -> str | None:
    """The major:minor of the device mountinfo names as the source of a filesystem without a
    device number of its own (btrfs: /dev/sdb1), when it is a block device."""
    name = None if mount is None else source_device_name(mount.source, _LIVE)
    return None if name is None else _LIVE.read_sys(f"class/block/{name}/dev")


def _filesystem_label(majmin: str, mount: Mount | None) -> str:
    if mount is None:
        return f"filesystem {majmin}"
    return f"filesystem {mount.fstype} at {mount.mount_point}"
