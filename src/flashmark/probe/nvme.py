"""NVMe: the PCIe link the drive runs at, and its health (SMART / Health Information log).

Link: the PCI device's `current_link_speed`, `current_link_width`, `max_link_speed`,
`max_link_width` (Documentation/ABI/testing/sysfs-bus-pci; the speed text is
pci_speed_string() + " PCIe", e.g. "5.0 GT/s PCIe"). Temperature: the controller's hwmon
`temp1_input` in millidegrees Celsius (drivers/nvme/host/hwmon.c, Documentation/hwmon/
sysfs-interface.rst). Percentage used and media errors are only in the Health Information
log page (NVMe Base Specification 2.0, 5.16.1.3), which needs nvme-cli or smartctl.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from flashmark.probe.model import Health, PcieLink, Unreadable
from flashmark.probe.tools import ToolFailed, ToolNotAvailable, ToolRunner
from flashmark.system.sysroot import SystemRoots


def read_pcie_link(roots: SystemRoots, block_name: str) -> PcieLink | None:
    pci = f"class/block/{block_name}/device/device"
    current = roots.read_sys(f"{pci}/current_link_speed")
    if current is None:
        return None
    return PcieLink(
        current_speed=current,
        current_width=_int(roots.read_sys(f"{pci}/current_link_width")),
        max_speed=roots.read_sys(f"{pci}/max_link_speed"),
        max_width=_int(roots.read_sys(f"{pci}/max_link_width")),
    )


def controller_name(roots: SystemRoots, block_name: str) -> str:
    """nvme0n1 -> nvme0 (the controller the namespace belongs to)."""
    return roots.sys_path(f"class/block/{block_name}/device").resolve().name


def read_hwmon_temperature(roots: SystemRoots, block_name: str) -> float | None:
    folder = roots.sys_path(f"class/block/{block_name}/device")
    for hwmon in sorted(folder.glob("hwmon*")) if folder.is_dir() else []:
        text = roots.read_sys(f"class/block/{block_name}/device/{hwmon.name}/temp1_input")
        value = _int(text)
        if value is not None:
            return value / 1000.0
    return None


def read_health(
    roots: SystemRoots, block_name: str, tools: ToolRunner, notes: list[str]
) -> tuple[Health, tuple[Unreadable, ...]]:
    controller = controller_name(roots, block_name)
    temperature = read_hwmon_temperature(roots, block_name)
    sources = ["sysfs hwmon"] if temperature is not None else []
    unreadable: list[Unreadable] = []
    log: dict[str, float] | None = None
    try:
        output = tools.run(["nvme", "smart-log", f"/dev/{controller}"]).stdout
        log = parse_nvme_cli_smart_log(output)
        if log:
            sources.append("nvme smart-log")
        else:
            unreadable.append(Unreadable("nvme smart-log", output[:400], "no known fields"))
    except (ToolNotAvailable, ToolFailed) as error:
        notes.append(f"NVMe health via nvme-cli: {error}")
    if not log:
        try:
            output = tools.run(["smartctl", "-j", "-A", f"/dev/{controller}"]).stdout
            log = parse_smartctl_json(output)
            if log:
                sources.append("smartctl")
        except (ToolNotAvailable, ToolFailed) as error:
            notes.append(f"NVMe health via smartctl: {error}")
        except ValueError as error:
            unreadable.append(Unreadable("smartctl", "", str(error)))
    log = log or {}
    if temperature is None and "temperature_c" in log:
        temperature = log["temperature_c"]
    health = Health(
        percentage_used=_opt_int(log.get("percentage_used")),
        media_errors=_opt_int(log.get("media_errors")),
        critical_warning=_opt_int(log.get("critical_warning")),
        temperature_c=temperature,
        sources=tuple(sources),
        available_spare=_opt_int(log.get("available_spare")),
        available_spare_threshold=_opt_int(log.get("available_spare_threshold")),
        data_units_written=_opt_int(log.get("data_units_written")),
    )
    return health, tuple(unreadable)


_NVME_CLI_FIELDS = {
    # nvme-cli's plain smart-log keys, as 1.x and 2.x print them.
    "critical_warning": "critical_warning",
    "percentage_used": "percentage_used",
    "percent_used": "percentage_used",
    "media_errors": "media_errors",
    "available_spare": "available_spare",
    "available_spare_threshold": "available_spare_threshold",
    "data units written": "data_units_written",  # units of 512,000 bytes (nvme-cli 2.x)
    "data_units_written": "data_units_written",  # nvme-cli 1.x
}


def parse_nvme_cli_smart_log(text: str) -> dict[str, float]:
    """`nvme smart-log /dev/nvmeX` text: 'key : value' lines; temperature as '35°C (308 Kelvin)'."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "temperature":
            # nvme-cli prints Celsius first and the log's raw Kelvin in brackets; a bare
            # "308 Kelvin" is converted the way nvme-cli does (K - 273).
            first = re.match(r"\s*(-?\d+)\s*(\S*)", value)
            if first and first.group(2).lower().startswith("kelvin"):
                found["temperature_c"] = float(int(first.group(1)) - 273)
            elif first:
                found["temperature_c"] = float(first.group(1))
        elif key in _NVME_CLI_FIELDS:
            digits = re.search(r"-?\d+", value.replace(",", ""))
            if digits:
                found[_NVME_CLI_FIELDS[key]] = float(digits.group(0))
    return found


def parse_smartctl_json(text: str) -> dict[str, float]:
    """`smartctl -j -A /dev/nvmeX`: the nvme_smart_health_information_log object
    (smartmontools JSON output, documented in smartctl(8) --json)."""
    return smartctl_health_log(json.loads(text))


def smartctl_health_log(document: Mapping[str, Any]) -> dict[str, float]:
    """The NVMe health log's fields in smartctl's JSON `document` (empty when it has none)."""
    log = document.get("nvme_smart_health_information_log") or {}
    found: dict[str, float] = {}
    for key in (
        "percentage_used",
        "media_errors",
        "critical_warning",
        "available_spare",
        "available_spare_threshold",
        "data_units_written",
    ):
        if isinstance(log.get(key), int | float):
            found[key] = float(log[key])
    if isinstance(log.get("temperature"), int | float):
        found["temperature_c"] = float(log["temperature"])
    return found


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _opt_int(value: float | None) -> int | None:
    return int(value) if value is not None else None
