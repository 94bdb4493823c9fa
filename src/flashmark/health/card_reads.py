"""What `flashmark health` asks an eMMC or SD card itself, as root, beyond what the kernel
shows: an eMMC's EXT_CSD now (the kernel's sysfs copy is from card start), an SD card's vendor
health through CMD56 where its CID names a vendor with a known layout (docs/health.md).

A card behind a USB reader is a "usb" device: it is never asked. Whatever was not read says
so, and how to read it, in the result's `skipped`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from flashmark.probe.ext_csd import read_ext_csd
from flashmark.probe.mmc_ioctl import MmcCommandFailed, MmcIoctl
from flashmark.probe.model import Device, Health
from flashmark.probe.sd_vendor_health import read_vendor_health, vendor_command

_SD_SILENT = "SD cards report no wear through the kernel"


@dataclass(frozen=True)
class CardReads:
    health: Health  # the device's health, with what the card answered now in it
    skipped: tuple[str, ...]  # what was not asked or not answered, and why


def read_card_health(device: Device, health: Health, mmc: MmcIoctl, target: str) -> CardReads:
    if device.kind == "emmc":
        return _emmc(device, health, mmc, target)
    if device.kind == "sd":
        return _sd(device, health, mmc, target)
    return CardReads(health, ())


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


def _sd(device: Device, health: Health, mmc: MmcIoctl, target: str) -> CardReads:
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
