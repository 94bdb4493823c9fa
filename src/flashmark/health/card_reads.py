"""What `flashmark health` asks an eMMC or SD card itself, as root, beyond what the kernel
shows: an eMMC's EXT_CSD now (the kernel's sysfs copy is from card start), an SD card's vendor
health through CMD56 where its CID names a vendor with a known layout (docs/health.md), and
only when asked interactively (`vendor_health`): a timer's unattended reading sends no CMD56,
which a card that does not expect it may answer by stalling the host or leaving the bus.

A card behind a USB reader is never asked: one the reader shows as a SCSI disk is a "usb"
device, and one a USB card reader's own driver (rtsx_usb_sdmmc, vub300) shows as /dev/mmcblkN
sits under a usbN bus in sysfs; what the reader does with a raw command is not known.
Whatever was not read says so, and how to read it, in the result's `skipped`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from flashmark.probe.ext_csd import read_ext_csd
from flashmark.probe.mmc_ioctl import MmcCommandFailed, MmcIoctl
from flashmark.probe.model import Device, Health
from flashmark.probe.sd_vendor_health import read_vendor_health, vendor_command

_SD_SILENT = "SD cards report no wear through the kernel"
_USB_BUS = re.compile(r"usb\d+")  # a USB bus's root hub in a sysfs device path


@dataclass(frozen=True)
class CardReads:
    health: Health  # the device's health, with what the card answered now in it
    skipped: tuple[str, ...]  # what was not asked or not answered, and why


def read_card_health(
    device: Device, health: Health, mmc: MmcIoctl, target: str, vendor_health: bool = True
) -> CardReads:
    """What the card answers now; `vendor_health` False: no CMD56 is sent (module doc)."""
    if device.kind not in ("emmc", "sd"):
        return CardReads(health, ())
    if behind_usb(device):
        return CardReads(
            health, ("a card behind a USB reader is never asked for its health (CMD8, CMD56)",)
        )
    if device.kind == "emmc":
        return _emmc(device, health, mmc, target)
    return _sd(device, health, mmc, target, vendor_health)


def behind_usb(device: Device) -> bool:
    """Whether the device's sysfs path runs through a USB bus."""
    return any(_USB_BUS.fullmatch(part) for part in device.sysfs_path.split("/"))


def _emmc(device: Device, health: Health, mmc: MmcIoctl, target: str) -> CardReads:
    at_start = "the wear shown is the kernel's copy from card start"
    if not mmc.privileged:
        return CardReads(
            health, (f"EXT_CSD live needs root ({at_start}): sudo flashmark health {target}",)
        )
    try:
        live = read_ext_csd(device.name, mmc)
    except (MmcCommandFailed, ValueError, IndexError) as error:
        return CardReads(health, (f"EXT_CSD not read live ({error}); {at_start}",))
    return CardReads(
        replace(
            health,
            life_time_a=live.life_time_a,
            life_time_b=live.life_time_b,
            pre_eol=live.pre_eol,
            sources=live.sources,
            wear_read=live.wear_read,
        ),
        (),
    )


def _sd(
    device: Device, health: Health, mmc: MmcIoctl, target: str, vendor_health: bool
) -> CardReads:
    cid = device.card.cid if device.card is not None else None
    if cid is None:
        return CardReads(health, (f"{_SD_SILENT}, and without a CID no vendor is asked",))
    entry = vendor_command(cid)
    if entry is None:
        maker = f"MID 0x{cid.manufacturer_id:02x}, OEM '{cid.oem_id_text}'"
        return CardReads(
            health,
            (f"{_SD_SILENT}; no vendor health command is known for this card's maker ({maker})",),
        )
    if not entry.asks(cid):
        lines = ", ".join(entry.products)
        return CardReads(
            health,
            (
                f"{_SD_SILENT}; {entry.vendor}'s health command is sent only to the product "
                f"lines reported to answer it ({lines}), not to this '{cid.product_name}'",
            ),
        )
    if not vendor_health:
        return CardReads(
            health,
            (
                f"{_SD_SILENT}; --record does not ask vendor health (CMD56): "
                f"sudo flashmark health {target} does",
            ),
        )
    if not mmc.privileged:
        return CardReads(
            health,
            (
                f"{_SD_SILENT}; {entry.vendor}'s health command (CMD56) needs root: "
                f"sudo flashmark health {target}",
            ),
        )
    try:
        vendor = read_vendor_health(device.name, entry, mmc)
    except MmcCommandFailed as error:
        return CardReads(
            health,
            (f"{_SD_SILENT}; the card did not answer its vendor's health command ({error})",),
        )
    return CardReads(
        replace(
            health,
            vendor=vendor,
            wear_read="cmd56",
            sources=(*health.sources, f"{vendor.vendor} health, {vendor.command}"),
        ),
        (),
    )
