"""Which device is it? An identity that survives a power cycle, and finding it again.

A device may come back under another name, and another take its old one, so the test
recognises its device by what it says about itself, strongest first: CID, world-wide name,
USB vendor, product, serial and LUN, serial, udev's by-id name, a loop device's backing file
(Documentation/ABI/stable/sysfs-block, sysfs-bus-mmc, loop(4)); a partition by its disk's
identity and number.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flashmark.system.device_stack import device_node
from flashmark.system.sysroot import SystemRoots

BY_ID = Path("/dev/disk/by-id")
SECTOR_BYTES = 512  # the unit of sysfs `size` (sysfs-block ABI)


@dataclass(frozen=True)
class DeviceIdentity:
    source: str  # "cid", "wwid", "usb", "serial", "by-id", "loop"
    value: str
    partition: int | None = None  # the partition number on that disk; None: the whole disk

    def __str__(self) -> str:
        text = f"{self.source}:{self.value}"
        return text if self.partition is None else f"{text} partition {self.partition}"


@dataclass(frozen=True)
class FoundDevice:
    name: str  # kernel name
    node: str  # /dev path
    size_bytes: int


def identify(name: str, roots: SystemRoots, by_id: Path = BY_ID) -> DeviceIdentity | None:
    """The identity of block device `name` (kernel name), None when it has none."""
    disk, partition = _disk_of(name, roots)
    found = _disk_identity(disk, roots, by_id)
    if found is None:
        return None
    source, value = found
    return DeviceIdentity(source, value, partition)


def find_device(
    identity: DeviceIdentity, roots: SystemRoots, by_id: Path = BY_ID
) -> FoundDevice | None:
    """The device with this identity now, whatever its name; None when there is none."""
    folder = roots.sys_path("class/block")
    if not folder.is_dir():
        return None
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if roots.sys_path(f"class/block/{name}/partition").exists():
            continue
        if _disk_identity(name, roots, by_id) != (identity.source, identity.value):
            continue
        if identity.partition is not None:
            found_name = _partition_of(name, identity.partition, roots)
            if found_name is None:
                return None
            name = found_name
        return _found(name, roots)
    return None


def wait_for_device(
    identity: DeviceIdentity,
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
        found = find_device(identity, roots, by_id)
        if found is not None and found.size_bytes > 0:
            return found, clock() - began
        if clock() - began >= timeout_s:
            return None
        sleep(poll_s)


def size_of(name: str, roots: SystemRoots) -> int:
    text = roots.read_sys(f"class/block/{name}/size")
    return int(text) * SECTOR_BYTES if text and text.isdigit() else 0


def _found(name: str, roots: SystemRoots) -> FoundDevice | None:
    majmin = roots.read_sys(f"class/block/{name}/dev")
    node = device_node(name, majmin) if roots.is_live else "/dev/" + name.replace("!", "/")
    if node is None:
        return None
    return FoundDevice(name, node, size_of(name, roots))


def _disk_of(name: str, roots: SystemRoots) -> tuple[str, int | None]:
    number = roots.read_sys(f"class/block/{name}/partition")
    if number is None or not number.isdigit():
        return name, None
    disk = roots.sys_path(f"class/block/{name}").resolve().parent.name
    return disk, int(number)


def _partition_of(disk: str, number: int, roots: SystemRoots) -> str | None:
    folder = roots.sys_path(f"class/block/{disk}").resolve()
    for entry in sorted(folder.iterdir()) if folder.is_dir() else ():
        if (entry / "partition").exists() and roots.read_sys(
            f"class/block/{entry.name}/partition"
        ) == str(number):
            return entry.name
    return None


def _disk_identity(disk: str, roots: SystemRoots, by_id: Path) -> tuple[str, str] | None:
    base = f"class/block/{disk}"
    for source, attribute in (("cid", "device/cid"), ("wwid", "wwid"), ("wwid", "device/wwid")):
        value = roots.read_sys(f"{base}/{attribute}")
        if value:
            return source, value
    usb = _usb_identity(disk, roots)
    if usb is not None:
        return "usb", usb
    serial = roots.read_sys(f"{base}/device/serial") or roots.read_sys(f"{base}/serial")
    if serial:
        model = roots.read_sys(f"{base}/device/model") or ""
        return "serial", f"{model.strip()}:{serial}" if model.strip() else serial
    link = _by_id_name(disk, by_id) if roots.is_live else None
    if link is not None:
        return "by-id", link
    backing = roots.read_sys(f"{base}/loop/backing_file")
    if backing:
        return "loop", backing
    return None


def _usb_identity(disk: str, roots: SystemRoots) -> str | None:
    """vendor:product:serial of the USB device above the disk, with the disk's LUN."""
    device = roots.sys_path(f"class/block/{disk}/device")
    if not device.exists():
        return None
    resolved = device.resolve()
    lun = resolved.name.rsplit(":", 1)[-1] if resolved.name.count(":") == 3 else "0"
    for folder in resolved.parents:
        if (folder / "idVendor").exists():
            serial = _read(folder / "serial")
            if not serial:
                return None
            return f"{_read(folder / 'idVendor')}:{_read(folder / 'idProduct')}:{serial}:lun{lun}"
        if folder == roots.sysfs or folder.name == "devices":
            break
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


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return ""
