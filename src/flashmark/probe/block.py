"""Generic block-device facts from sysfs, and which kind of device it is.

Attributes and their units: Documentation/ABI/stable/sysfs-block in the Linux tree
(`size` counts 512-byte sectors whatever the device's sector size; `queue/read_ahead_kb`;
`queue/scheduler` marks the active one in brackets; `queue/rotational`).
"""

from __future__ import annotations

from flashmark.probe.model import Device, Unreadable
from flashmark.system.sysroot import SECTOR_BYTES, SystemRoots


def device_path(roots: SystemRoots, name: str) -> str:
    """The device's real sysfs directory relative to the root, e.g. devices/.../block/vda."""
    real = roots.sys_path(f"class/block/{name}").resolve()
    try:
        return str(real.relative_to(roots.sysfs.resolve()))
    except ValueError:
        return f"class/block/{name}"


def classify(roots: SystemRoots, name: str, path: str) -> str:
    """sd, emmc, ufs, nvme, usb, sata, virtio, loop, md, dm, zram, scsi, or 'unknown'."""
    if name.startswith("mmcblk"):
        card_type = roots.read_sys(f"class/block/{name}/device/type")
        return "emmc" if card_type == "MMC" else "sd"
    if name.startswith("nvme"):
        return "nvme"
    for prefix, kind in (("loop", "loop"), ("md", "md"), ("dm-", "dm"), ("zram", "zram")):
        if name.startswith(prefix):
            return kind
    parts = path.split("/")
    if any(part.startswith("virtio") for part in parts):
        return "virtio"
    if any(part.startswith("usb") for part in parts):
        return "usb"
    host = next((part for part in parts if part.startswith("host") and part[4:].isdigit()), None)
    if host is not None:
        # SCSI host template names: "ufshcd" (drivers/ufs/core/ufshcd.c), "ahci"/"ata_piix"
        # and other libata drivers for SATA, "usb-storage"/"uas" for USB.
        proc_name = (roots.read_sys(f"class/scsi_host/{host}/proc_name") or "").lower()
        if "ufs" in proc_name:
            return "ufs"
        if proc_name in ("usb-storage", "uas"):
            return "usb"
        if proc_name:
            return "sata" if any(part.startswith("ata") for part in parts) else "scsi"
    if any("ufs" in part for part in parts):
        return "ufs"
    if any(part.startswith("ata") for part in parts):
        return "sata"
    return "unknown"


def read_block(roots: SystemRoots, name: str) -> Device:
    base = f"class/block/{name}"
    path = device_path(roots, name)
    unreadable: list[Unreadable] = []

    def number(attribute: str) -> int | None:
        text = roots.read_sys(f"{base}/{attribute}")
        if text is None:
            return None
        try:
            return int(text)
        except ValueError:
            unreadable.append(Unreadable(attribute, text, "not an integer"))
            return None

    def flag(attribute: str) -> bool | None:
        value = number(attribute)
        return None if value is None else value != 0

    sectors = number("size")
    scheduler_text = roots.read_sys(f"{base}/queue/scheduler")
    return Device(
        name=name,
        sysfs_path=path,
        kind=classify(roots, name, path),
        # read_sys strips the padding SCSI pads these with: an empty one is no value
        vendor=roots.read_sys(f"{base}/device/vendor") or None,
        model=roots.read_sys(f"{base}/device/model") or None,
        serial=roots.read_sys(f"{base}/device/serial") or roots.read_sys(f"{base}/serial") or None,
        firmware=roots.read_sys(f"{base}/device/firmware_rev")
        or roots.read_sys(f"{base}/device/rev")
        or None,
        capacity_bytes=sectors * SECTOR_BYTES if sectors is not None else None,
        logical_sector_bytes=number("queue/logical_block_size"),
        physical_sector_bytes=number("queue/physical_block_size"),
        rotational=flag("queue/rotational"),
        removable=flag("removable"),
        scheduler=active_scheduler(scheduler_text) if scheduler_text is not None else None,
        read_ahead_kb=number("queue/read_ahead_kb"),
        write_cache=roots.read_sys(f"{base}/queue/write_cache"),
        unreadable=tuple(unreadable),
    )


def active_scheduler(text: str) -> str:
    """'none [mq-deadline] kyber bfq' -> 'mq-deadline'; a single name stands for itself."""
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text.strip()

