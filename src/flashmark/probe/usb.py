"""USB storage: negotiated speed against what the device's USB version allows, uas or not.

sysfs attributes of a USB device (Documentation/ABI/stable/sysfs-bus-usb,
Documentation/ABI/testing/sysfs-bus-usb): `speed` in Mb/s ("1.5", "12", "480", "5000",
"10000", "20000"), `version` = bcdUSB (" 3.20"), `idVendor`, `idProduct`, `manufacturer`,
`product`. The storage interface's `driver` link names "uas" (USB Attached SCSI, queued
commands) or "usb-storage" (Bulk-Only Transport, one command at a time).
"""

from __future__ import annotations

import re

from flashmark.probe.model import UsbLink
from flashmark.system.sysroot import SystemRoots

_USB_DEVICE = re.compile(r"^\d+-[\d.]+$")  # "2-1", "1-1.4"
_USB_INTERFACE = re.compile(r"^\d+-[\d.]+:\d+\.\d+$")  # "2-1:1.0"


def best_speed_mbps(version: str | None) -> int | None:
    """The fastest rate a USB version guarantees the device can signal at.
    bcdUSB 1.x: 12 Mb/s (full speed); 2.x: 480 (high speed); 3.x: at least 5000
    (SuperSpeed). 3.1/3.2 devices may also do 10 or 20 Gb/s, which bcdUSB does not tell."""
    if not version:
        return None
    try:
        major = int(float(version.strip()))
    except ValueError:
        return None
    return {1: 12, 2: 480}.get(major, 5000 if major >= 3 else None)


def usb_device_dir(device_path: str) -> str | None:
    """The sysfs folder of the USB device a block device (`device_path`, relative to the
    root) sits on, e.g. ".../usb2/2-1"; None when it is on none."""
    parts = device_path.split("/")
    usb_index = max((i for i, p in enumerate(parts) if _USB_DEVICE.match(p)), default=None)
    return None if usb_index is None else "/".join(parts[: usb_index + 1])


def read_usb_link(roots: SystemRoots, device_path: str) -> UsbLink | None:
    """`device_path` is the block device's sysfs path relative to the root."""
    usb = usb_device_dir(device_path)
    if usb is None:
        return None
    parts = device_path.split("/")
    interface = next(
        ("/".join(parts[: i + 1]) for i, p in enumerate(parts) if _USB_INTERFACE.match(p)),
        None,
    )
    driver = None
    if interface is not None:
        link = roots.sys_path(f"{interface}/driver")
        if link.exists():
            driver = link.resolve().name
    speed_text = roots.read_sys(f"{usb}/speed")
    version = roots.read_sys(f"{usb}/version") or None  # bcdUSB, its padding stripped
    return UsbLink(
        port=usb.rsplit("/", 1)[-1],
        vendor_id=roots.read_sys(f"{usb}/idVendor"),
        product_id=roots.read_sys(f"{usb}/idProduct"),
        manufacturer=roots.read_sys(f"{usb}/manufacturer"),
        product=roots.read_sys(f"{usb}/product"),
        speed_mbps=_speed(speed_text),
        usb_version=version,
        best_speed_mbps=best_speed_mbps(version),
        driver=driver,
    )


def _speed(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(float(text))
    except ValueError:
        return None
