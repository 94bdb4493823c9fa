"""May a command fill a filesystem's free space without being told so? Not the system's own.

`fill_refusal(fs, roots)` says why filling `fs` needs the user's explicit consent, or None:
- it is the filesystem of /, /var or /home (the system runs from it: logs, databases,
  packages; the same st_dev, or the same device, as btrfs subvolumes each have an st_dev), or
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

from flashmark.errors import TargetError
from flashmark.system.device_stack import MemberKind, Role, device_stack, name_in_dev
from flashmark.system.disk_space import Filesystem, filesystem_of, sparse_images
from flashmark.system.sysroot import SystemRoots

SYSTEM_FOLDERS = ("/", "/var", "/home")
_VIRTUAL_PREFIXES = ("loop", "dm-", "md", "zram", "nbd")  # built on others, not disks
_CARRIERS = (Role.TARGET, Role.BELOW, Role.PARENT)


def fill_refusal(fs: Filesystem, roots: SystemRoots) -> str | None:
    """Why filling `fs` needs explicit consent (module doc), in words that follow the
    filesystem's label, or None."""
    system = _system_filesystems(roots)
    same = _same_filesystem(fs, system)
    if same is not None:
        return f"it is the filesystem of {same}, which the system runs from"
    images = sparse_images(fs.device, roots)
    for image in images:
        same = _same_filesystem(image.host, system)
        if same is not None:
            return (
                f"its sparse image {image.path} grows on the filesystem of {same}, which the "
                "system runs from"
            )
    disks = _disks_of(fs.device, roots)
    for image in images:
        disks |= _disks_of(image.host.device, roots)
    system_disks: dict[str, str] = {}
    for folder, system_fs in system:
        for disk in _disks_of(system_fs.device, roots):
            system_disks.setdefault(disk, folder)
    for disk in sorted(disks):
        if disk in system_disks:
            return f"it is on /dev/{disk}, the disk that holds {system_disks[disk]}"
    for disk in sorted(disks):
        if not _removable(disk, roots):
            return f"it is on /dev/{disk}, a non-removable disk"
    return None


def _system_filesystems(roots: SystemRoots) -> list[tuple[str, Filesystem]]:
    """The filesystems of SYSTEM_FOLDERS, each with the folder it holds."""
    found = []
    for folder in SYSTEM_FOLDERS:
        try:
            found.append((folder, filesystem_of(folder, roots)))
        except OSError:
            continue
    return found


def _same_filesystem(fs: Filesystem, system: list[tuple[str, Filesystem]]) -> str | None:
    """The system folder `fs` holds, or whose device it shares (btrfs subvolumes have an
    st_dev each), or None."""
    for folder, system_fs in system:
        if fs.st_dev == system_fs.st_dev or (fs.device and fs.device == system_fs.device):
            return folder
    return None


def _disks_of(device: str | None, roots: SystemRoots) -> set[str]:
    """The whole disks (kernel names) a device's writes land on (module doc)."""
    if device is None:
        return set()
    try:
        stack = device_stack(name_in_dev(device), roots)
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
