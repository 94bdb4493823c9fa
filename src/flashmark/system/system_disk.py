"""May a command fill a filesystem's free space without being told so? Not the system's own.

`fill_refusal(fs, roots)` says why filling `fs` needs the user's explicit consent, or None:
- it is the filesystem of /, /var or /home (the system runs from it: logs, databases,
  packages), or
- it sits on the same disk as one of those, or
- it sits on a non-removable disk (sysfs `removable` of the whole disk is 0), except SD cards
  on mmc hosts, which some kernels report as non-removable (their card `type` is "SD").

The disks under a filesystem are found through its device stack (flashmark.system.device_stack:
partitions, dm, md). A loop device over a file is a disk of its own when its image is fully
allocated (filling the loop only fills the image, whose blocks its host already gave); when the
image is sparse, filling the loop grows it on its host filesystem, so the host is judged as well
(flashmark.system.disk_space.sparse_images).
"""

from __future__ import annotations

import os

from flashmark.errors import TargetError
from flashmark.system.device_stack import MemberKind, Role, device_stack, name_of_majmin
from flashmark.system.disk_space import Filesystem, sparse_images
from flashmark.system.sysroot import SystemRoots

SYSTEM_FOLDERS = ("/", "/var", "/home")
_VIRTUAL_PREFIXES = ("loop", "dm-", "md", "zram", "nbd")  # built on others, not disks
_CARRIERS = (Role.TARGET, Role.BELOW, Role.PARENT)


def fill_refusal(fs: Filesystem, roots: SystemRoots) -> str | None:
    """Why filling `fs` needs explicit consent (module doc), in words that follow the
    filesystem's label, or None."""
    system = _system_filesystems()
    if fs.st_dev in system:
        return f"it is the filesystem of {system[fs.st_dev]}, which the system runs from"
    images = sparse_images(fs.device, roots)
    for image in images:
        if image.host.st_dev in system:
            return (
                f"its sparse image {image.path} grows on the filesystem of "
                f"{system[image.host.st_dev]}, which the system runs from"
            )
    disks = _disks_of(fs.device, roots)
    for image in images:
        disks |= _disks_of(image.host.device, roots)
    system_disks: dict[str, str] = {}
    for st_dev, folder in system.items():
        for disk in _disks_of(_device_of(st_dev, roots), roots):
            system_disks.setdefault(disk, folder)
    for disk in sorted(disks):
        if disk in system_disks:
            return f"it is on /dev/{disk}, the disk that holds {system_disks[disk]}"
    for disk in sorted(disks):
        if not _removable(disk, roots):
            return f"it is on /dev/{disk}, a non-removable disk"
    return None


def _system_filesystems() -> dict[int, str]:
    """st_dev -> the system folder it holds (the first one named, / before /var)."""
    found: dict[int, str] = {}
    for folder in SYSTEM_FOLDERS:
        try:
            found.setdefault(os.stat(folder).st_dev, folder)
        except OSError:
            continue
    return found


def _device_of(st_dev: int, roots: SystemRoots) -> str | None:
    if not os.major(st_dev):
        return None
    name = name_of_majmin(f"{os.major(st_dev)}:{os.minor(st_dev)}", roots)
    return f"/dev/{name}" if name else None


def _disks_of(device: str | None, roots: SystemRoots) -> set[str]:
    """The whole disks (kernel names) a device's writes land on (module doc)."""
    if device is None:
        return set()
    try:
        stack = device_stack(device.removeprefix("/dev/").replace("/", "!"), roots)
    except (TargetError, OSError):
        return set()
    return {
        member.name
        for member in stack.members
        if member.kind is MemberKind.DEVICE
        and member.role in _CARRIERS
        and member.whole is None  # a partition's disk is its PARENT member
        and not member.name.startswith(_VIRTUAL_PREFIXES)
    }


def _removable(disk: str, roots: SystemRoots) -> bool:
    if roots.read_sys(f"class/block/{disk}/removable") == "1":
        return True
    # An SD card on an mmc host: removable 0 on some kernels (the host's slot decides).
    return disk.startswith("mmcblk") and roots.read_sys(f"class/block/{disk}/device/type") == "SD"
