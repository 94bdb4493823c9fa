"""SMART of a USB, SATA or SCSI drive, read through smartctl's JSON (smartmontools 7.0 on).

`smartctl --json=c -a -n standby [-d TYPE] /dev/sdX`. smartctl guesses a SATA or SCSI drive's
type itself, and a USB bridge's from its own drivedb.h (refusing one it does not list); a
bridge that takes a SATA or an NVMe drive is told `-d sat` (SCSI/ATA Translation), and a
USB-to-NVMe bridge its own pass-through (`sntasmedia`, `sntjmicron`, `sntrealtek`, smartctl(8)
`-d`), by the bridge's USB id, as smartmontools' drivedb.h lists them.

The JSON's keys (src/ataprint.cpp, nvmeprint.cpp, scsiprint.cpp, smartctl.cpp of
smartmontools): `smart_status.passed`, `power_on_time.hours`, `temperature.current`,
`logical_block_size`, `ata_smart_attributes.table[]` (id, name, normalised `value`, `raw.value`),
`nvme_smart_health_information_log`, `endurance_used.current_percent` (SCSI),
`in_smartctl_database` (ATA), and `smartctl.messages[]` and `smartctl.exit_status` (a bit field,
smartctl(8) EXIT STATUS).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flashmark.probe.model import DATA_UNIT_BYTES, Device, Health
from flashmark.probe.nvme import smartctl_health_log
from flashmark.probe.tools import ToolFailed, ToolNotAvailable, ToolRunner
from flashmark.system.sysroot import SystemRoots

# The device kinds whose SMART smartctl reads as /dev/sdX.
SMART_KINDS = frozenset({"usb", "sata", "scsi"})
INSTALL_LINE = "sudo apt install smartmontools"

# USB-to-NVMe bridges by USB id (vendor:product) and the pass-through smartctl needs: the
# drivedb.h entries (smartmontools, drivedb/drivedb.h, "USB:" section) whose preset is a plain
# `-d snt*`.
_NVME_BRIDGES = {
    # Realtek RTL9210 (and Netac's id for it), Actions AM8180 (an RTL9210), Transcend
    # TS-CM10G, Lexar E300
    "0bda:9210": "sntrealtek",
    "0dd8:9210": "sntrealtek",
    "1de1:e101": "sntrealtek",
    "2174:7010": "sntrealtek",
    "21c4:b083": "sntrealtek",
    # JMicron JMS583 (its id 152d:a583; 152d:0583 is a dual bridge below), Lexar ES3 and E6,
    # KIOXIA EXCERIA PLUS
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
# `sntjmicron/sat` (smartctl 7.5 on: NVMe, else SAT), Realtek RTL9211 as two entries and RTL9220
# as "USB->PCIe (NVMe) or SATA" ("SATA requires `-d sat`"). 152d:0583 is JMicron's JMS583 and
# also the default id of its USB-SATA adapters: drivedb knows no bcdDevice that takes
# `-d sntjmicron` (its JMS583 entry's is a TODO) and warns that `-d sntjmicron` sends such an
# adapter an ATA hardware reset, while SAT to an NVMe bridge only fails. When SAT passes
# nothing, the note names the NVMe pass-through to try.
_DUAL_BRIDGES = {
    "152d:0581": "sntjmicron",
    "152d:a581": "sntjmicron",
    "152d:b581": "sntjmicron",
    "152d:0583": "sntjmicron",
    "0bda:9211": "sntrealtek",
    "2eb9:9211": "sntrealtek",
    "0bda:9220": "sntrealtek",
}

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
_OPEN_FAILED = 2  # bit 1: the device did not open, or `-n` found it in a low-power mode
# What `-n standby` says of a drive it leaves asleep (src/ataprint.cpp, src/smartctl.cpp: "Device
# is in %s mode, exit(%d)", an information message): STANDBY, STANDBY_Y, SLEEP, STANDBY (OS).
_LOW_POWER = re.compile(r"Device is in (STANDBY|SLEEP)\b")
UNEXPECTED_JSON = "SMART not read: unexpected JSON from smartctl"
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


def smartctl_type(device: Device) -> str | None:
    """The `-d` type for `device`; None leaves it to smartctl: it guesses a drive not on USB,
    and looks a USB bridge up in its own drivedb.h, refusing one it does not list (a stick, a
    card reader) rather than guess, as flashmark does not either."""
    if device.kind != "usb" or device.usb is None:
        return None
    usb_id = _usb_id(device.usb.vendor_id, device.usb.product_id)
    return "sat" if usb_id in _DUAL_BRIDGES else _NVME_BRIDGES.get(usb_id)


def read_smart(device: Device, roots: SystemRoots, tools: ToolRunner) -> SmartReading | None:
    """Run smartctl on `device` and read its JSON; None for a kind of device it does not read
    (SMART_KINDS). Never raises for what the drive, the bridge or the tool cannot give: the
    reading says it."""
    if device.kind not in SMART_KINDS:
        return None
    device_type = smartctl_type(device)
    type_args = ["-d", device_type] if device_type else []
    # `-n standby`: the health timer asks daily; a spun-down disk is left asleep.
    argv = ["smartctl", "--json=c", "-a", "-n", "standby", *type_args, f"/dev/{device.name}"]
    try:
        output = tools.run(argv, check=False).stdout
    except ToolNotAvailable as error:
        if not roots.is_live:  # a recorded tree's tools are its recordings: nothing to install
            return SmartReading(None, (f"SMART not read: {error}",))
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
        return SmartReading(
            None, ("SMART not read: smartctl printed no JSON (it needs smartmontools 7.0 on)",)
        )
    if not isinstance(document, dict) or not isinstance(document.get("smartctl"), dict):
        return SmartReading(None, (UNEXPECTED_JSON,))
    messages = _messages(document)
    # The open (EACCES) or SCSI pass-through (EPERM, without CAP_SYS_RAWIO) refused to a user.
    refused = ("permission denied", "operation not permitted")
    if any(word in message.lower() for message in messages for word in refused):
        return SmartReading(None, needs_root=True)
    if _exit_status(document) & _OPEN_FAILED and any(map(_LOW_POWER.match, messages)):
        return SmartReading(None, ("SMART not read: the drive is in standby (left asleep)",))
    # With no -d, the type smartctl chose from its drivedb names the bridge's reading.
    named = device_type or (_text(document, "device", "type") if device.kind == "usb" else None)
    health = decode_smartctl(document, " ".join(["smartctl", *(["-d", named] if named else [])]))
    if health is None:
        return SmartReading(None, (_passes_nothing(device, named, document, messages),))
    if health.percentage_used is None:
        listing = " ".join(["sudo", "smartctl", "-a", *type_args, f"/dev/{device.name}"])
        if _units_unknown(document):
            note = (
                "SMART read, but the drive is not in smartctl's database: the units of its wear "
                f"and write attributes are unknown, neither is read (`{listing}` lists them)"
            )
        else:
            note = f"SMART read, but no wear attribute flashmark knows (`{listing}` lists them)"
        return SmartReading(health, (note,))
    return SmartReading(health)


def decode_smartctl(document: Mapping[str, Any], source: str) -> Health | None:
    """The Health in smartctl's JSON `document` (`source`: the command, as the Health names
    it); None when it holds no SMART at all (the bridge or the drive passed none). Any value
    of an unexpected type is unknown; it never raises."""
    sources = [source]
    percentage_used: int | None = None
    units_written: int | None = None
    attributes = _attributes(document)
    # The wear and write attributes' units are known only of a drive drivedb.h lists: others
    # get its default names (177 Wear_Leveling_Count, 233 Media_Wearout_Indicator, 241
    # Total_LBAs_Written), whose units vary by maker.
    trusted = {} if _units_unknown(document) else attributes
    wear = next((trusted[name] for name in _WEAR_ATTRIBUTES if name in trusted), None)
    left = _count(wear.get("value")) if wear is not None else None
    if wear is not None and left is not None and left <= 100:
        percentage_used = 100 - left
        sources.append(_attribute_source(wear))
    block_bytes = _count(document.get("logical_block_size")) or 512
    for name, unit in _WRITTEN_ATTRIBUTES:
        raw = _count(_get(trusted.get(name), "raw", "value"))
        if raw is not None:
            units_written = raw * (unit or block_bytes) // DATA_UNIT_BYTES
            sources.append(_attribute_source(trusted[name]))
            break
    endurance = _count(_get(document, "endurance_used", "current_percent"))
    if percentage_used is None and endurance is not None:  # SCSI's endurance indicator
        percentage_used = endurance
    log = _nvme_log(document)
    passed = _get(document, "smart_status", "passed")
    if not isinstance(passed, bool):
        passed = None
    hours = _count(_get(document, "power_on_time", "hours"))
    temperature = _integer(_get(document, "temperature", "current"))
    if temperature is not None and not -273 <= temperature <= 1000:  # no float of it, or absurd
        temperature = None
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


def _units_unknown(document: Mapping[str, Any]) -> bool:
    """True for an ATA drive with a wear or write attribute that smartctl's database does not
    list (`in_smartctl_database`, src/ataprint.cpp; absent before it was written: unknown)."""
    names = {name for name, _unit in _WRITTEN_ATTRIBUTES} | set(_WEAR_ATTRIBUTES)
    listed = document.get("in_smartctl_database") is True
    return not listed and not names.isdisjoint(_attributes(document))


def _nvme_log(document: Mapping[str, Any]) -> dict[str, float]:
    """The NVMe log as the NVMe path reads it, of its integer fields only (smartctl writes
    them so)."""
    log = document.get("nvme_smart_health_information_log")
    if not isinstance(log, Mapping):
        return {}
    # Its counters are unsigned 128-bit (NVMe): a larger number would overflow the float it is
    # read as, and only the temperature may be below zero.
    integers = {}
    for key, value in log.items():
        number = _integer(value) if key == "temperature" else _count(value)
        if number is not None and abs(number) < 1 << 128:
            integers[key] = number
    return smartctl_health_log({"nvme_smart_health_information_log": integers})


def _attributes(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    table = _get(document, "ata_smart_attributes", "table")
    rows = table if isinstance(table, list) else []
    return {
        row["name"]: row
        for row in rows
        if isinstance(row, dict) and isinstance(row.get("name"), str)
    }


def _attribute_source(row: Mapping[str, Any]) -> str:
    number = _integer(row.get("id"))
    return " ".join(["attribute", *([str(number)] if number is not None else []), row["name"]])


def _messages(document: Mapping[str, Any]) -> list[str]:
    listed = _get(document, "smartctl", "messages")
    items = listed if isinstance(listed, list) else []
    return [item["string"] for item in items if isinstance(_get(item, "string"), str)]


def _exit_status(document: Mapping[str, Any]) -> int:
    return _count(_get(document, "smartctl", "exit_status")) or 0


def _passes_nothing(
    device: Device, named: str | None, document: Mapping[str, Any], messages: Sequence[str]
) -> str:
    """The sentence for a drive whose smartctl answer holds no SMART, naming the bridge."""
    status = _exit_status(document)
    reasons = list(messages) or [text for bit, text in _EXIT_BITS if status & bit]
    why = f" ({'; '.join(reasons)})" if reasons else ""
    usb = device.usb
    if device.kind != "usb" or usb is None:
        return f"SMART not read: /dev/{device.name} gave smartctl none{why}"
    usb_id = _usb_id(usb.vendor_id, usb.product_id)
    if named is None:  # smartctl chose no type: drivedb.h does not list the bridge
        return (
            f"SMART not read: smartctl knows no device type for the USB bridge {usb_id}{why}; "
            f"a SATA drive behind a USB-SATA bridge may answer "
            f"`sudo smartctl -a -d sat /dev/{device.name}`"
        )
    text = f"SMART not read: the USB bridge {usb_id} passes none to `smartctl -d {named}`{why}"
    nvme = _DUAL_BRIDGES.get(usb_id)
    if nvme is not None and named == "sat":
        text += f"; an NVMe drive behind it answers `sudo smartctl -a -d {nvme} /dev/{device.name}`"
    return text


def _usb_id(vendor_id: str | None, product_id: str | None) -> str:
    return f"{vendor_id or ''}:{product_id or ''}".lower()


def _get(value: object, *keys: str) -> object:
    """`value[keys[0]][keys[1]]...`, or None where a level is not a JSON object."""
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _text(document: Mapping[str, Any], *keys: str) -> str | None:
    value = _get(document, *keys)
    return value if isinstance(value, str) and value else None


def _integer(value: object) -> int | None:
    """An integer, not a bool (JSON's true is Python's 1)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(value: object) -> int | None:
    """A non-negative integer: a counter, a percentage, a size."""
    number = _integer(value)
    return number if number is not None and number >= 0 else None
