"""Which physical device a block device is, whatever path or number it has today.

A path and a device number name whatever is plugged in now, so a device that must be
recognised again (a capacity backup's) is named by what it says about itself in sysfs
(Documentation/ABI/stable/sysfs-block), the first of: an SD or eMMC card's CID register, the
world-wide name, the USB device's vendor, product and serial, a disk's model and serial, a loop
device's backing file and offset, a partition's disk and start. None when the device says
nothing that identifies it: callers then fall back to its device number and size, and say so.
"""

from __future__ import annotations

import os
from pathlib import Path

from flashmark.system.sysroot import SystemRoots, read_text


def device_identity(name: str, roots: SystemRoots) -> str | None:
    """The identity of the block device with kernel name `name` ("sdb", "mmcblk0p1")."""
    folder = _folder(name, roots)
    if folder is None:
        return None
    if (folder / "partition").exists():
        disk = device_identity(folder.parent.name, roots)
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
    return None


def identity_of_node(node: str, roots: SystemRoots) -> str | None:
    """The identity of a device node such as /dev/sdb (None if it is not a block device)."""
    try:
        rdev = os.stat(node).st_rdev
    except OSError:
        return None
    link = roots.sys_path(f"dev/block/{os.major(rdev)}:{os.minor(rdev)}")
    return device_identity(link.resolve().name, roots) if link.exists() else None


def find_by_identity(identity: str, roots: SystemRoots) -> str | None:
    """The kernel name of the block device with this identity now, if one is attached."""
    listing = roots.sys_path("class/block")
    try:
        names = sorted(entry.name for entry in listing.iterdir())
    except OSError:
        return None
    return next((name for name in names if device_identity(name, roots) == identity), None)


def _folder(name: str, roots: SystemRoots) -> Path | None:
    link = roots.sys_path(f"class/block/{name}")
    return link.resolve() if link.exists() else None


def _loop_identity(folder: Path) -> str | None:
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
    resolves into the USB device's folder: .../usbN/N-1/N-1:1.0/hostM/.../M:0:0:0)."""
    device = folder / "device"
    if not device.exists():
        return None
    place = device.resolve()
    for _ in range(8):
        serial = read_text(place / "serial")
        vendor = read_text(place / "idVendor")
        if serial and vendor:
            return f"usb:{vendor}:{read_text(place / 'idProduct') or ''}:{serial}"
        if place.parent == place:
            break
        place = place.parent
    return None
