"""Host findings: under-voltage and throttling now and since boot (the probe's decoding), the
CPU governor, heat, swap on the device and mount options that multiply writes."""

from __future__ import annotations

from collections.abc import Callable

from flashmark.doctor.findings import Finding
from flashmark.probe.model import Temperature, Throttling

# The supply Raspberry Pi sells for each board (Raspberry Pi documentation, "Power supply").
SUPPLIES = {
    "Raspberry Pi 5": "the official 27 W (5 V, 5 A) supply: with less, the USB ports are held "
    "to 600 mA in all",
    "Raspberry Pi 4": "the official 15 W (5.1 V, 3 A) supply",
    "Raspberry Pi 400": "the official 15 W (5.1 V, 3 A) supply",
}


def supply_fix(board: str | None) -> str:
    for model, supply in SUPPLIES.items():
        if (board or "").startswith(model):
            return f"use {supply}; a powered hub or enclosure for a USB drive"
    return "use the board maker's supply, and a powered hub or enclosure for a USB drive"


def throttling_findings(throttling: Throttling, board: str | None = None) -> list[Finding]:
    found: list[Finding] = []
    if "under-voltage" in throttling.now or "under-voltage" in throttling.since_boot:
        when = "now" if "under-voltage" in throttling.now else "since boot"
        found.append(
            Finding(
                category="host",
                what=f"under-voltage {when} (get_throttled={throttling.raw})",
                why="a sagging supply throttles the CPU and can reset USB and NVMe devices",
                fix=supply_fix(board),
            )
        )
    seen = set(throttling.now) | set(throttling.since_boot)
    # The firmware throttles and caps the clock for heat and for under-voltage alike: cooling
    # is the fix only where the soft temperature limit was hit or no under-voltage was seen.
    hot = bool({"soft temperature limit", "soft temperature limit active"} & seen)
    slowed = bool({"throttled", "ARM frequency capped"} & seen)
    if hot or (slowed and "under-voltage" not in seen):
        found.append(
            Finding(
                category="host",
                what=f"CPU throttled (get_throttled={throttling.raw})",
                why="a throttled CPU can slow the I/O it drives",
                fix="add a heatsink or fan (a Pi 5: the Active Cooler)",
            )
        )
    return found


# The Raspberry Pi firmware starts throttling the CPU at 80 °C (soft limit from 60 °C where
# set; Raspberry Pi documentation, "Frequency management and thermal control").
HOT_CELSIUS = 80.0
# Governors that keep the CPU at its lowest clock whatever the load.
SLOW_GOVERNORS = ("powersave",)


def governor_findings(governors: tuple[str, ...]) -> list[Finding]:
    slow = [governor for governor in governors if governor in SLOW_GOVERNORS]
    if not slow:
        return []
    return [
        Finding(
            category="host",
            what=f"CPU governor {slow[0]}",
            why="the CPU stays at its lowest clock, which slows every I/O it submits",
            fix="echo schedutil | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
        )
    ]


def temperature_findings(temperatures: tuple[Temperature, ...]) -> list[Finding]:
    hot = [zone for zone in temperatures if zone.celsius >= HOT_CELSIUS]
    if not hot:
        return []
    hottest = max(hot, key=lambda zone: zone.celsius)
    return [
        Finding(
            category="host",
            what=f"{hottest.type or hottest.zone} at {hottest.celsius:.0f} °C",
            why=f"from {HOT_CELSIUS:.0f} °C the CPU is throttled, and a hot NVMe drive or card "
            "slows itself too",
            fix="add a heatsink or fan (a Pi 5: the Active Cooler)",
        )
    ]


def swap_findings(swaps: str | None, device: str, partitions: tuple[str, ...]) -> list[Finding]:
    """Swap (from /proc/swaps) on the device or one of its partitions."""
    found = []
    for line in (swaps or "").splitlines()[1:]:
        fields = line.split()
        if not fields:
            continue
        name = fields[0].removeprefix("/dev/")
        kind = fields[1] if len(fields) > 1 else ""
        if kind == "partition" and name in (device, *partitions):
            found.append(
                Finding(
                    category="host",
                    what=f"swap on {fields[0]}, on the device itself",
                    why="swapping writes the flash in small random blocks: slow, and it wears it",
                    fix=f"swap to RAM instead (apt install zram-tools), then swapoff {fields[0]}",
                )
            )
    return found


def swap_file_findings(swaps: str | None, on_device: Callable[[str], bool]) -> list[Finding]:
    """A swap file on a filesystem of the device (`on_device` tells by its path)."""
    found = []
    for line in (swaps or "").splitlines()[1:]:
        fields = line.split()
        if len(fields) > 1 and fields[1] == "file" and on_device(fields[0]):
            found.append(
                Finding(
                    category="host",
                    what=f"swap file {fields[0]}, on the device",
                    why="swapping writes the flash in small random blocks: slow, and it wears it",
                    fix="swap to RAM instead (apt install zram-tools; on Raspberry Pi OS "
                    "`sudo dphys-swapfile swapoff && sudo systemctl disable dphys-swapfile`)",
                )
            )
    return found


def mount_findings(options: str | None, mount_point: str | None) -> list[Finding]:
    """Mount options that multiply writes: `sync` writes every change at once."""
    flags = set((options or "").split(","))
    if "sync" not in flags:
        return []
    return [
        Finding(
            category="host",
            what=f"{mount_point or 'the filesystem'} mounted with sync",
            why="every write goes to the flash at once, in small pieces: many times the writes",
            fix="remove sync from its line in /etc/fstab (the default async is safe with a "
            "journalling filesystem)",
        )
    ]
