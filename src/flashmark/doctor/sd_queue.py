"""SD command queueing on a Raspberry Pi 5: an A2 card run without it, or its queue failing.

Raspberry Pi's kernel queues an A2 card's commands on a Pi 5 only (mainline does not queue SD
commands), and what `dtparam=sd_cqe` means changed within its releases (docs/doctor.md, "Command
queueing of an A2 card on a Pi 5, by kernel", tells the history with its sources). A 6.6.y or
6.12.y release number alone does not tell which meaning a build has; every 6.13 or later
kernel came out after the tristate of January 2025 (Linux 6.13: 2025-01-19), so has it. The
kernel logs
"mmcN: Command Queue Engine enabled[, N tags]" when it queues (drivers/mmc/core/sd.c in
raspberrypi/linux) and "mmcN: running CQE recovery" each time the card's queue fails
(raspberrypi/linux issues 6561, 5768). Nothing in sysfs or debugfs says whether it queues: the
card's `ext_perf` (Raspberry Pi's sd.c) gives what it supports, bit 4 (SD_EXT_PERF_CMD_QUEUE,
include/linux/mmc/card.h) set only when it has a queue, a cache and power-off notification,
without which the kernel never queues it, whatever sd_cqe says.
"""

from __future__ import annotations

import re

from flashmark.doctor.findings import Finding
from flashmark.doctor.host import PI5
from flashmark.probe.mmc_bus import timing_from_log
from flashmark.probe.model import Device

EXT_PERF_CMD_QUEUE = 1 << 4
FIRST_QUEUEING = (6, 6, 22)  # the first release with SD command queueing
SURELY_TRISTATE = (6, 13)  # every release from here on has the tristate sd_cqe
CONFIG = "/boot/firmware/config.txt"
_RELEASE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def release(kernel: str | None) -> tuple[int, int, int] | None:
    """'6.6.62+rpt-rpi-2712' -> (6, 6, 62)."""
    found = _RELEASE.match(kernel or "")
    if found is None:
        return None
    return int(found.group(1)), int(found.group(2)), int(found.group(3) or 0)


def _off_line(version: tuple[int, int, int] | None) -> str:
    if version is not None and version[:2] >= SURELY_TRISTATE:
        return f"dtparam=sd_cqe=0 in {CONFIG}"
    # The boolean of 2024 took "off" (raspberrypi/linux issue 6561); the tristate of January
    # 2025 on takes 0.
    return f"dtparam=sd_cqe=0 in {CONFIG} (dtparam=sd_cqe=off on a kernel older than January 2025)"


def _queueing_fix(version: tuple[int, int, int] | None, kernel: str | None) -> str:
    risk = (
        "to try it on this card, not on Raspberry Pi's list of known-good cards (one on its "
        "list of bad cards stays off); some cards corrupt data with it: if `dmesg` shows "
        "'running CQE recovery', remove the line"
    )
    if version is not None and version < FIRST_QUEUEING:
        return (
            "update the kernel (sudo apt full-upgrade): SD command queueing came to "
            "Raspberry Pi's kernel with 6.6.22"
        )
    if version is not None and version[:2] >= SURELY_TRISTATE:
        return f"dtparam=sd_cqe=2 in {CONFIG}, then reboot, {risk}"
    return (
        f"what sd_cqe means is not known for this kernel ({kernel or 'release not read'}): "
        "update it (sudo apt full-upgrade); a kernel from January 2025 on takes "
        f"dtparam=sd_cqe=2 in {CONFIG}, then reboot, {risk}"
    )


def sd_queue_findings(
    device: Device,
    board: str | None,
    kernel: str | None,
    kernel_log: str | None,
    ext_perf: str | None = None,
) -> tuple[list[Finding], list[str]]:
    """The finding for an A2 card without queueing, or for its queue failing; or the note
    saying why this could not be checked. `ext_perf`: the card's sysfs attribute, where the
    kernel has it."""
    card, bus = device.card, device.mmc_bus
    if card is None or bus is None or card.type != "SD":
        return [], []
    a2 = card.ssr is not None and card.ssr.app_class == "A2"
    if not (board or "").startswith(PI5):
        if not a2:
            return [], []
        return [], [
            "SD command queueing: not available here (Raspberry Pi's kernel queues an A2 "
            "card's commands on a Raspberry Pi 5 only)"
        ]
    if kernel_log is None:
        return [], ["SD command queueing: not read (no kernel log)"]
    version = release(kernel)
    host = bus.host
    recoveries = sum(
        1 for line in kernel_log.splitlines() if f"{host}: running CQE recovery" in line
    )
    if recoveries:
        return [
            Finding(
                category="sd",
                what=f"{recoveries} 'running CQE recovery' line{'s' * (recoveries != 1)} for "
                f"{host} in the kernel log",
                why="the card fails queued commands and the kernel recovers its queue each "
                "time: stalls, and cards that do this have corrupted filesystems",
                fix=f"{_off_line(version)}, then reboot: command queueing off for this card",
            )
        ], []
    if not a2 or bus.command_queue:
        return [], []
    if ext_perf is not None and _hex(ext_perf) & EXT_PERF_CMD_QUEUE == 0:
        return [], [
            f"SD command queueing: this A2 card cannot queue here (ext_perf={ext_perf.strip()}: "
            "no queue, cache or power-off notification the kernel needs)"
        ]
    if timing_from_log(kernel_log, host) is None:
        return [], [
            "SD command queueing: not read (the kernel log no longer reaches back to the "
            "card's start)"
        ]
    return [
        Finding(
            category="sd",
            what=f"A2 card without command queueing (no '{host}: Command Queue Engine "
            "enabled' in the kernel log)",
            why="an A2 card reaches its rated random I/O only with queued commands: Raspberry "
            "Pi measured about 2.5x the random 4k reads and 4x the writes with them",
            fix=_queueing_fix(version, kernel),
        )
    ], []


def _hex(text: str) -> int:
    try:
        return int(text.strip(), 16)
    except ValueError:
        return EXT_PERF_CMD_QUEUE  # unreadable: no reason to doubt the A2 claim
