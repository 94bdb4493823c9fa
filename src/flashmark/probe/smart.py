"""SMART of a USB, SATA or SCSI drive, read through smartctl's JSON (smartmontools 7.0 on).

`smartctl --json=c -a [-d TYPE] /dev/sdX`. smartctl guesses a SATA or SCSI drive's type itself;
behind a USB bridge it is told: `-d sat` (SCSI/ATA Translation) for a USB-to-SATA bridge, and a
USB-to-NVMe bridge's own pass-through (`sntasmedia`, `sntjmicron`, `sntrealtek`, smartctl(8)
`-d`) by the bridge's USB id, as smartmontools' drivedb.h lists them.

The JSON's keys (src/ataprint.cpp, nvmeprint.cpp, scsiprint.cpp, smartctl.cpp of
smartmontools): `smart_status.passed`, `power_on_time.hours`, `temperature.current`,
`logical_block_size`, `ata_smart_attributes.table[]` (id, name, normalised `value`, `raw.value`),
`nvme_smart_health_information_log`, `endurance_used.current_percent` (SCSI), and
`smartctl.messages[]` and `smartctl.exit_status` (a bit field, smartctl(8) EXIT STATUS).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flashmark.probe.model import DATA_UNIT_BYTES, Device, Health
from flashmark.probe.nvme import smartctl_health_log
from flashmark.probe.tools import ToolFailed, ToolNotAvailable, ToolRunner
from flashmark.probe.usb import usb_device_dir
from flashmark.system.sysroot import SystemRoots

# The device kinds whose SMART smartctl reads as /dev/sdX.
SMART_KINDS = frozenset({"usb", "sata", "scsi"})
INSTALL_LINE = "sudo apt install smartmontools"

# USB-to-NVMe bridges by USB id (vendor:product) and the pass-through smartctl needs: the
# drivedb.h entries (smartmontools, drivedb/drivedb.h, "USB:" section) whose preset is a plain
# `-d snt*`.
_NVME_BRIDGES = {
    # Realtek RTL9210 (and Netac's id for it), RTL9220, Actions AM8180 (an RTL9210),
    # Transcend TS-CM10G, Lexar E300
    "0bda:9210": "sntrealtek",
    "0dd8:9210": "sntrealtek",
    "0bda:9220": "sntrealtek",
    "1de1:e101": "sntrealtek",
    "2174:7010": "sntrealtek",
    "21c4:b083": "sntrealtek",
    # JMicron JMS583 (152d:0583 below), Lexar ES3 and E6, KIOXIA EXCERIA PLUS
    "152d:0583": "sntjmicron",
    "152d:a583": "sntjmicron",
    "21c4:0003": "sntjmicron",
    "21c4:b06a": "sntjmicron",
    "30de:1000": "sntjmicron",
    # ASMedia ASM2362/ASM2364, ASM2464PD in USB 3 mode, and the enclosures drivedb names
    # with it: Buffalo SSD-PSTA/N, Samsung T7/T7 Shield/T9, Crucial X9 Pro/X10, SanDisk
    # Extreme (Pro) Portable, Asus ROG Strix Arion, Seagate FireCuda Gaming, WD Elements SE,
    # Corsair EX400U, OWC Express 1M2, Framework Expansion Card, TeamGroup C212
    "174c:2362": "sntasmedia",
    "174c:2364": "sntasmedia",
    "174c:2463": "sntasmedia",
    "0411:039d": "sntasmedia",
    "04e8:4001": "sntasmedia",
    "04e8:61fb": "sntasmedia",
    "04e8:61fd": "sntasmedia",
    "0634:5603": "sntasmedia",
    "0634:5607": "sntasmedia",
    "0781:55ae": "sntasmedia",
    "0781:55af": "sntasmedia",
    "0781:55bb": "sntasmedia",
    "0b05:1932": "sntasmedia",
    "0bc2:aa1a": "sntasmedia",
    "1058:266e": "sntasmedia",
    "1b1c:1a20": "sntasmedia",
    "1e91:de79": "sntasmedia",
    "32ac:0005": "sntasmedia",
    "13fe:6500": "sntasmedia",
}
# Bridges for a SATA or an NVMe drive alike, read as SAT: drivedb gives JMicron JMS581 as
# `sntjmicron/sat` (smartctl 7.5 on: NVMe, else SAT) and Realtek RTL9211 as two entries. When
# SAT passes nothing, the NVMe pass-through is named.
_DUAL_BRIDGES = {
    "152d:0581": "sntjmicron",
    "152d:a581": "sntjmicron",
    "152d:b581": "sntjmicron",
    "0bda:9211": "sntrealtek",
    "2eb9:9211": "sntrealtek",
}
# 152d:0583 is also the default id of JMicron USB-to-SATA adapters, told apart by bcdDevice
# (drivedb.h: 0414, 3202, 9128 are SAT). `-d sntjmicron` on one of those issues an ATA
# hardware reset (drivedb.h's caution), so an unread bcdDevice reads as SAT.
_SATA_BCD_DEVICES = {"152d:0583": frozenset({"0414", "3202", "9128"})}

# ATA attributes, by the names smartctl gives them from drivedb.h, whose normalised value is
# the percent of rated life left (100 new, falling with wear); the first one present counts.
_WEAR_ATTRIBUTES = (
    "SSD_Life_Left",
    "Percent_Lifetime_Remain",
    "Remaining_Lifetime_Perc",
    "Percent_Life_Remaining",
    "SSD_Remaining_Life_Perc",
    "Perc_Rated_Life_Remain",
    "PCT_Life_Remaining",
    "Lifetime_Remaining",
    "Remaining_Life",
    "Lifetime_Left",
    "Media_Wearout_Indicator",
    "Wear_Leveling_Count",
)
# ATA attributes counting the host's writes since the drive's first, by name, and their unit
# in bytes (None: logical blocks, of `logical_block_size`).
_WRITTEN_ATTRIBUTES: tuple[tuple[str, int | None], ...] = (
    ("Total_LBAs_Written", None),
    ("Host_Writes_32MiB", 32 << 20),
    ("Host_Writes_GiB", 1 << 30),
    ("Lifetime_Writes_GiB", 1 << 30),
    ("Total_Writes_GiB", 1 << 30),
)
# smartctl(8) EXIT STATUS, the bits that say why nothing was read.
_EXIT_BITS = (
    (1, "its command line did not parse"),
    (2, "the device did not open or returned no IDENTIFY data"),
    (4, "a SMART or other command to the drive failed"),
)


@dataclass(frozen=True)
class SmartReading:
    """What smartctl gave: the drive's health, or why there is none."""

    health: Health | None
    skipped: tuple[str, ...] = ()  # what was not read, and why
    needs_root: bool = False  # as root it could be read


def smartctl_type(device: Device, roots: SystemRoots) -> str | None:
    """The `-d` type for `device`; None for smartctl's own guess (a drive not on USB)."""
    usb = device.usb
    if device.kind != "usb" or usb is None:
        return None
    usb_id = f"{usb.vendor_id or ''}:{usb.product_id or ''}".lower()
    bridge = _NVME_BRIDGES.get(usb_id)
    if bridge is None:
        return "sat"
    if usb_id in _SATA_BCD_DEVICES:
        folder = usb_device_dir(device.sysfs_path)
        bcd = roots.read_sys(f"{folder}/bcdDevice") if folder is not None else None
        if bcd is None or bcd.strip().lower() in _SATA_BCD_DEVICES[usb_id]:
            return "sat"
    return bridge


def read_smart(device: Device, roots: SystemRoots, tools: ToolRunner) -> SmartReading | None:
    """Run smartctl on `device` and read its JSON; None for a kind of device it does not read
    (SMART_KINDS). Never raises for what the drive, the bridge or the tool cannot give: the
    reading says it."""
    if device.kind not in SMART_KINDS:
        return None
    device_type = smartctl_type(device, roots)
    type_args = ["-d", device_type] if device_type else []
    argv = ["smartctl", "--json=c", "-a", *type_args, f"/dev/{device.name}"]
    try:
        output = tools.run(argv, check=False).stdout
    except ToolNotAvailable as error:
        # Debian keeps smartctl in /usr/sbin, off a user's PATH: root may find it.
        return SmartReading(
            None,
            (f"SMART not read: {error}; it comes with smartmontools: {INSTALL_LINE}",),
            needs_root=os.geteuid() != 0,
        )
    except ToolFailed as error:
        return SmartReading(None, (f"SMART not read: {error}",))
    try:
        document = json.loads(output)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        return SmartReading(
            None, ("SMART not read: smartctl printed no JSON (it needs smartmontools 7.0 on)",)
        )
    messages = _messages(document)
    # The open (EACCES) or SCSI pass-through (EPERM, without CAP_SYS_RAWIO) refused to a user.
    refused = ("permission denied", "operation not permitted")
    if any(word in message.lower() for message in messages for word in refused):
        return SmartReading(None, needs_root=True)
    health = decode_smartctl(document, " ".join(["smartctl", *type_args]))
    if health is None:
        return SmartReading(None, (_passes_nothing(device, device_type, document, messages),))
    if health.percentage_used is None:
        listing = " ".join(["sudo", *argv[:1], "-a", *type_args, argv[-1]])
        return SmartReading(
            health, (f"SMART read, but no wear attribute flashmark knows (`{listing}` lists them)",)
        )
    return SmartReading(health)


def decode_smartctl(document: Mapping[str, Any], source: str) -> Health | None:
    """The Health in smartctl's JSON `document` (`source`: the command, as the Health names
    it); None when it holds no SMART at all (the bridge or the drive passed none)."""
    sources = [source]
    percentage_used: int | None = None
    units_written: int | None = None
    attributes = _attributes(document)
    wear = next((attributes[name] for name in _WEAR_ATTRIBUTES if name in attributes), None)
    if wear is not None and isinstance(wear.get("value"), int) and 0 <= wear["value"] <= 100:
        percentage_used = 100 - wear["value"]
        sources.append(f"attribute {wear.get('id')} {wear.get('name')}")
    block_bytes = _number(document.get("logical_block_size")) or 512
    for name, unit in _WRITTEN_ATTRIBUTES:
        raw = _number((attributes.get(name) or {}).get("raw", {}).get("value"))
        if raw is not None:
            units_written = raw * (unit or block_bytes) // DATA_UNIT_BYTES
            sources.append(f"attribute {attributes[name].get('id')} {name}")
            break
    endurance = _number((document.get("endurance_used") or {}).get("current_percent"))
    if percentage_used is None and endurance is not None:  # SCSI's endurance indicator
        percentage_used = endurance
    log = smartctl_health_log(document)
    status = document.get("smart_status") or {}
    passed = status.get("passed") if isinstance(status.get("passed"), bool) else None
    hours = _number((document.get("power_on_time") or {}).get("hours"))
    temperature = _number((document.get("temperature") or {}).get("current"))
    if not (log or attributes or passed is not None or percentage_used is not None):
        return None

    def from_log(key: str) -> int | None:
        return int(log[key]) if key in log else None

    return Health(
        percentage_used=from_log("percentage_used") if log else percentage_used,
        media_errors=from_log("media_errors"),
        critical_warning=from_log("critical_warning"),
        temperature_c=log.get(
            "temperature_c", float(temperature) if temperature is not None else None
        ),
        sources=tuple(sources),
        available_spare=from_log("available_spare"),
        available_spare_threshold=from_log("available_spare_threshold"),
        data_units_written=from_log("data_units_written") if log else units_written,
        power_on_hours=hours,
        smart_passed=passed,
    )


def _attributes(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    table = (document.get("ata_smart_attributes") or {}).get("table") or []
    return {row["name"]: row for row in table if isinstance(row, dict) and "name" in row}


def _messages(document: Mapping[str, Any]) -> list[str]:
    listed = (document.get("smartctl") or {}).get("messages") or []
    return [str(item.get("string", "")) for item in listed if isinstance(item, dict)]


def _passes_nothing(
    device: Device, device_type: str | None, document: Mapping[str, Any], messages: Sequence[str]
) -> str:
    """The sentence for a drive whose smartctl answer holds no SMART, naming the bridge."""
    status = _number((document.get("smartctl") or {}).get("exit_status")) or 0
    reasons = list(messages) or [text for bit, text in _EXIT_BITS if status & bit]
    why = f" ({'; '.join(reasons)})" if reasons else ""
    usb = device.usb
    if device.kind != "usb" or usb is None:
        return f"SMART not read: /dev/{device.name} gave smartctl none{why}"
    usb_id = f"{usb.vendor_id}:{usb.product_id}"
    text = (
        f"SMART not read: the USB bridge {usb_id} passes none to `smartctl -d {device_type}`{why}"
    )
    nvme = _DUAL_BRIDGES.get(usb_id.lower())
    if nvme is not None and device_type == "sat":
        text += f"; an NVMe drive behind it answers `sudo smartctl -a -d {nvme} /dev/{device.name}`"
    return text


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
