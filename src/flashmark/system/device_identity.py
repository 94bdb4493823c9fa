"""Which physical device a block device is, whatever path or number it has today.

A path and a device number name whatever is plugged in now, so a device that must be
recognised again (a capacity backup's, a power-cut test's after each cut, when another device
may have taken its old name) is named by what it says about itself in sysfs
(Documentation/ABI/stable/sysfs-block, sysfs-bus-mmc, loop(4)), the first of: an SD or eMMC
card's CID register, the world-wide name, the USB device's vendor, product and serial (and the
disk's LUN when it is not the first), a disk's model and serial, a loop device's backing file
and offset, udev's /dev/disk/by-id name; a partition by its disk and start. None when the device
says nothing that identifies it: callers then fall back to its device number and size, and say
so.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flashmark.system.device_stack import (
    block_folder,
    device_node,
    majmin_of,
    name_of_majmin,
    node_of,
)
from flashmark.system.sysroot import SystemRoots, read_text

BY_ID = Path("/dev/disk/by-id")


@dataclass(frozen=True)
class FoundDevice:
    name: str  # kernel name
    node: str  # /dev path
    size_bytes: int


def device_identity(name: str, roots: SystemRoots, by_id: Path = BY_ID) -> str | None:
    """The identity of the block device with kernel name `name` ("sdb", "mmcblk0p1")."""
    folder = block_folder(name, roots)
    if folder is None:
        return None
    if (folder / "partition").exists():
        disk = device_identity(folder.parent.name, roots, by_id)
        start = read_text(folder / "start")
        return None if disk is None or start is None else f"{disk}/part@{start}"
    if (folder / "loop").is_dir():
        return _loop_identity(folder)
    cid = read_text(folder / "device" / "cid")
    if cid:
        return f"cid:{cid.lower()}"
    for wwid in (read_text(folder / "wwid"), read_text(folder / "device" / "wwid")):
        if wwid:
            return f"wwid:{' '.join(wwid.split())}"
    usb = _usb_identity(folder)
    if usb is not None:
        return usb
    serial = read_text(folder / "device" / "serial")
    if serial:
        model = " ".join((read_text(folder / "device" / "model") or "").split())
        return f"serial:{model}/{serial}"
    link = _by_id_name(name, by_id) if roots.is_live else None
    return None if link is None else f"by-id:{link}"


def identity_of_node(node: str, roots: SystemRoots) -> str | None:
    """The identity of a device node such as /dev/sdb (None if it is not a block device)."""
    try:
        rdev = os.stat(node).st_rdev
    except OSError:
        return None
    name = name_of_majmin(majmin_of(rdev), roots)
    return None if name is None else device_identity(name, roots)


def find_by_identity(identity: str, roots: SystemRoots, by_id: Path = BY_ID) -> str | None:
    """The kernel name of the block device with this identity now, if one is attached."""
    listing = roots.sys_path("class/block")
    try:
        names = sorted(entry.name for entry in listing.iterdir())
    except OSError:
        return None
    return next((name for name in names if device_identity(name, roots, by_id) == identity), None)


def wait_for_device(
    identity: str,
    roots: SystemRoots,
    *,
    timeout_s: float,
    by_id: Path = BY_ID,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    poll_s: float = 0.1,
) -> tuple[FoundDevice, float] | None:
    """Wait (at most `timeout_s`) for the device to be there with a size; (it, seconds waited)."""
    began = clock()
    while True:
        name = find_by_identity(identity, roots, by_id)
        found = None if name is None else _found(name, roots)
        if found is not None and found.size_bytes > 0:
            return found, clock() - began
        if clock() - began >= timeout_s:
            return None
        sleep(poll_s)


def size_of(name: str, roots: SystemRoots) -> int:
    """The block device's size in bytes; 0 when sysfs does not say."""
    return roots.size_bytes(name) or 0


def _found(name: str, roots: SystemRoots) -> FoundDevice | None:
    majmin = roots.read_sys(f"class/block/{name}/dev")
    node = device_node(name, majmin) if roots.is_live else node_of(name)
    if node is None:
        return None
    return FoundDevice(name, node, size_of(name, roots))


def _loop_identity(folder: Path) -> str | None:
    """The backing file by its device and inode (a path may be renamed or reused), with the
    offset the loop device maps it from."""
    backing = read_text(folder / "loop" / "backing_file")
    if not backing:
        return None
    try:
        status = os.stat(backing.removesuffix(" (deleted)"))
    except OSError:
        return None
    offset = read_text(folder / "loop" / "offset") or "0"
    return f"loop:{status.st_dev}:{status.st_ino}@{offset}"


def _usb_identity(folder: Path) -> str | None:
    """vendor:product:serial of the USB device the disk hangs under (its `device` link
    resolves into the USB device's folder: .../usbN/N-1/N-1:1.0/hostM/.../M:0:0:L), and
    `:lunL` when L is not 0: a card reader's slots share the USB serial."""
    device = folder / "device"
    if not device.exists():
        return None
    place = device.resolve()
    lun = place.name.rsplit(":", 1)[-1] if place.name.count(":") == 3 else "0"
    for _ in range(8):
        serial = read_text(place / "serial")
        vendor = read_text(place / "idVendor")
        if serial and vendor:
            usb = f"usb:{vendor}:{read_text(place / 'idProduct') or ''}:{serial}"
            return usb if lun == "0" else f"{usb}:lun{lun}"
        if place.parent == place:
            break
        place = place.parent
    return None


def _by_id_name(disk: str, by_id: Path) -> str | None:
    if not by_id.is_dir():
        return None
    names = []
    for link in by_id.iterdir():
        with contextlib.suppress(OSError):
            if os.path.basename(os.path.realpath(link)) == disk:
                names.append(link.name)
    # wwn- names repeat the wwid (already preferred); the others name maker, model, serial.
    names.sort(key=lambda name: (name.startswith("wwn-"), name))
    return names[0] if names else None
