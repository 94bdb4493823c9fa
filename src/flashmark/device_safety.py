"""May flashmark write to this block device? The checks behind `--destructive`.

A device is refused when it, one of its partitions, or anything stacked on them (device-mapper,
LUKS, md, found through sysfs `holders/`) is mounted or used as swap, and in particular when it
holds the root filesystem. Sysfs layout used (Documentation/ABI/stable/sysfs-block):
/sys/dev/block/MAJ:MIN links to the device's folder; a partition's folder has a `partition`
file and sits inside its disk's folder; `holders/` lists the devices built on top; `size` is in
512-byte sectors whatever the logical block size.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from flashmark.mounts import Mount, read_mounts, swap_sources
from flashmark.sysroot import SystemRoots

SECTOR_BYTES = 512  # unit of sysfs `size`, fixed by the kernel (include/linux/types.h sector_t)


@dataclass(frozen=True)
class BlockDevice:
    name: str  # kernel name, e.g. "mmcblk0p2"
    majmin: str
    sysfs_dir: Path  # the device's folder under the sysfs root
    is_partition: bool
    size_bytes: int | None


def block_device_for_majmin(majmin: str, roots: SystemRoots) -> BlockDevice | None:
    link = roots.sys_path(f"dev/block/{majmin}")
    if not link.exists():
        return None
    folder = link.resolve()
    size = (
        roots.read_sys(str(folder.relative_to(roots.sysfs) / "size"))
        if folder.is_relative_to(roots.sysfs)
        else None
    )
    return BlockDevice(
        name=folder.name,
        majmin=majmin,
        sysfs_dir=folder,
        is_partition=(folder / "partition").exists(),
        size_bytes=int(size) * SECTOR_BYTES if size and size.isdigit() else None,
    )


def block_device_for_node(node: str, roots: SystemRoots) -> BlockDevice | None:
    """The sysfs view of a device node such as /dev/sda1 (stat gives its major:minor)."""
    status = os.stat(node)
    return block_device_for_majmin(f"{os.major(status.st_rdev)}:{os.minor(status.st_rdev)}", roots)


def _stacked_names(device: BlockDevice) -> set[str]:
    """The device, its partitions, and every holder above them, by kernel name."""
    names: set[str] = set()
    pending = [device.sysfs_dir]
    pending += [child for child in device.sysfs_dir.iterdir() if (child / "partition").exists()]
    while pending:
        folder = pending.pop()
        if folder.name in names:
            continue
        names.add(folder.name)
        holders = folder / "holders"
        if holders.is_dir():
            pending += [holder.resolve() for holder in holders.iterdir()]
    return names


def _name_of_source(source: str, roots: SystemRoots) -> str | None:
    """Kernel name of a /dev path from mountinfo or /proc/swaps (e.g. /dev/mapper/x -> dm-0)."""
    if not source.startswith("/dev/"):
        return None
    if roots.is_live and os.path.exists(source):
        return Path(os.path.realpath(source)).name
    return Path(source).name


def refusal_reasons(device: BlockDevice, roots: SystemRoots) -> tuple[str, ...]:
    """Why writing to `device` would destroy data in use; empty when it looks free."""
    stacked = _stacked_names(device)
    majmins = {_read_majmin(roots, name) for name in stacked} - {None}
    reasons: list[str] = []
    for mount in read_mounts(roots):
        if mount.majmin in majmins or _name_of_source(mount.source, roots) in stacked:
            reasons.append(_mounted_reason(mount))
    for swap in swap_sources(roots):
        if _name_of_source(swap, roots) in stacked:
            reasons.append(f"{swap} is used as swap")
    if (holders := device.sysfs_dir / "holders").is_dir() and any(holders.iterdir()):
        users = ", ".join(sorted(path.name for path in holders.iterdir()))
        reasons.append(f"it is in use by {users} (device-mapper, LUKS or md)")
    return tuple(dict.fromkeys(reasons))


def _mounted_reason(mount: Mount) -> str:
    if mount.mount_point == "/":
        return f"it holds the root filesystem ({mount.source} on /)"
    return f"{mount.source} is mounted on {mount.mount_point}"


def _read_majmin(roots: SystemRoots, name: str) -> str | None:
    return roots.read_sys(f"class/block/{name}/dev")
