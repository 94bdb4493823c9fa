"""Host findings: under-voltage and throttling now and since boot (the probe's decoding), the
CPU governor, heat, swap on the device, mount options that multiply writes and the I/O
scheduler."""

from __future__ import annotations

from collections.abc import Callable

from flashmark.doctor.findings import Finding
from flashmark.probe.model import Temperature, Throttling
from flashmark.system.mounts import Mount

# The boards of the Raspberry Pi 5's family (the model string's start): its PCIe slot and SD
# host, which the rules for them read.
PI5 = ("Raspberry Pi 5", "Raspberry Pi Compute Module 5")

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
# Governors that keep the CPU at its lowest clock whatever the load
# (Documentation/admin-guide/pm/cpufreq.rst, "powersave").
SLOW_GOVERNORS = ("powersave",)
# Drivers with their own "powersave" algorithm, which scales with the load: intel_pstate and
# amd-pstate-epp in active mode, where it is the default (Documentation/admin-guide/pm/
# intel_pstate.rst, amd-pstate.rst). In passive mode they are named intel_cpufreq and
# amd-pstate and run the generic governors, powersave's lowest clock included.
OWN_POWERSAVE_DRIVERS = ("intel_pstate", "amd-pstate-epp")


def governor_findings(governors: tuple[str, ...], driver: str | None = None) -> list[Finding]:
    if driver in OWN_POWERSAVE_DRIVERS:
        return []
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


# ext4's default commit interval, seconds; a lower one "will hurt performance"
# (Documentation/admin-guide/ext4.rst, "commit=nrsec").
EXT4_DEFAULT_COMMIT_S = 5


def mount_findings(mount: Mount) -> list[Finding]:
    """Mount options that multiply writes (mountinfo prints sync, dirsync and lazytime among
    the superblock's options, noatime and relatime among the mount's: fs/proc_namespace.c)."""
    flags = set(mount.all_options.split(","))
    if mount.read_only:
        return []
    where = mount.mount_point
    line = f"its line in /etc/fstab ({mount.mount_point})"
    found = []
    for option, why in (
        ("sync", "every write goes to the flash at once, in small pieces: many times the writes"),
        ("dirsync", "every file created, renamed or deleted is written through at once"),
    ):
        if option in flags:
            found.append(
                Finding(
                    category="host",
                    what=f"{where} mounted with {option}",
                    why=why,
                    fix=f"remove {option} from {line} (the default async is safe with a "
                    "journalling filesystem)",
                )
            )
    if not flags & {"noatime", "relatime", "lazytime"}:
        found.append(
            Finding(
                category="host",
                what=f"{where} mounted with strictatime (neither noatime nor relatime)",
                why="every read of a file writes its access time back to the flash",
                fix=f"add noatime to the options of {line}, then mount -o remount "
                f"{mount.mount_point}",
            )
        )
    if "data=journal" in flags:
        found.append(
            Finding(
                category="host",
                what=f"{where} mounted with data=journal",
                why="ext4 writes all data into its journal first, then in place: twice the "
                "writes, and no delayed allocation",
                fix=f"remove data=journal from {line} (the default is data=ordered), then "
                "reboot; `tune2fs -l` shows whether journal_data is among its default mount "
                "options (`tune2fs -o ^journal_data` clears it)",
            )
        )
    commit = next((f.removeprefix("commit=") for f in flags if f.startswith("commit=")), None)
    if mount.fstype == "ext4" and commit and commit.isdigit():
        seconds = int(commit)
        if 0 < seconds < EXT4_DEFAULT_COMMIT_S:
            found.append(
                Finding(
                    category="host",
                    what=f"{where} mounted with commit={seconds}",
                    why=f"ext4 commits its journal every {seconds} s instead of every "
                    f"{EXT4_DEFAULT_COMMIT_S}: more, smaller writes",
                    fix=f"remove commit={seconds} from {line}, then mount -o remount "
                    f"{mount.mount_point}",
                )
            )
    return found


# BFQ spends about 1.9 us of CPU on each request where mq-deadline spends 0.7, which caps the
# IOPS a CPU drives through it: 80,000 on a Cortex-A53, 400,000 on a Core i7-4850HQ
# (Documentation/block/bfq-iosched.rst). Only an NVMe drive outruns that; on other flash BFQ
# "achieves about the same throughput as the other schedulers" (same document), so it is no
# finding there. The kernel itself runs none on a device with several hardware queues, an
# NVMe drive's (block/elevator.c, elevator_get_default): bfq there was set by hand or a rule.
def scheduler_findings(device_name: str, kind: str, scheduler: str | None) -> list[Finding]:
    if scheduler != "bfq" or kind != "nvme":
        return []
    rule = 'ACTION=="add|change", KERNEL=="nvme[0-9]*n[0-9]*", ATTR{queue/scheduler}="none"'
    return [
        Finding(
            category="host",
            what=f"I/O scheduler bfq on {device_name}",
            why="BFQ's CPU time a request (about 1.9 us, mq-deadline's 0.7) caps a fast "
            "drive's IOPS: about 80,000 on a Cortex-A53",
            fix=f"echo none | sudo tee /sys/block/{device_name}/queue/scheduler; to keep it, "
            f"the line {rule} in /etc/udev/rules.d/60-scheduler.rules",
        )
    ]
