"""The SD/eMMC host: bus timing and clock, command queueing, the card's write cache.

Timing and clock from debugfs `mmcN/ios` (root; drivers/mmc/core/debugfs.c), else the timing
from the kernel log's "new ... card" line (drivers/mmc/core/bus.c). Command queueing: eMMC's
`cmdq_en`, or "Command Queue Engine enabled" in the log (drivers/mmc/core/mmc.c; SD on a Pi 5
with allow-listed A2 cards, raspberrypi/linux #6046, #6591); mainline SD's "Host Software Queue"
sends one command at a time and does not count. The cache: the queue's `write_cache` says
"write back" only when the kernel enabled it (drivers/mmc/core/block.c).
"""

from __future__ import annotations

import re
from pathlib import Path

from flashmark.probe.model import MmcBus
from flashmark.probe.tools import ToolFailed, ToolNotAvailable, ToolRunner
from flashmark.system.sysroot import SystemRoots


def parse_ios(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            values[key.strip()] = value.strip()
    return values


def _parenthesised(value: str | None) -> str | None:
    if not value:
        return None
    match = re.search(r"\((.*)\)", value)
    return match.group(1) if match else None


def _hz(value: str | None) -> int | None:
    match = re.match(r"(\d+)\s*Hz", value or "")
    return int(match.group(1)) if match else None


_NEW_CARD = re.compile(r"(mmc\d+): new (.+?) card at address [0-9a-fA-F]+")
_CQE = re.compile(r"(mmc\d+): (Command Queue Engine enabled|CQE enabled)", re.IGNORECASE)


def timing_from_log(log: str, host: str) -> str | None:
    """'new ultra high speed SDR104 SDXC card' -> 'ultra high speed SDR104 SDXC' (last one)."""
    found = None
    for match in _NEW_CARD.finditer(log):
        if match.group(1) == host:
            found = match.group(2)
    return found


def read_mmc_bus(
    roots: SystemRoots,
    block_name: str,
    card_type: str,
    kernel_log: str | None,
    write_cache: str | None,
) -> MmcBus:
    card_dir = roots.sys_path(f"class/block/{block_name}/device").resolve()
    host = card_dir.parent.name  # .../mmc_host/mmc0/mmc0:aaaa -> mmc0
    controller = _controller_driver(card_dir)
    ios_text = roots.read_debug(f"{host}/ios")
    timing = clock = actual = width = voltage = None
    source = None
    if ios_text:
        ios = parse_ios(ios_text)
        timing = _parenthesised(ios.get("timing spec"))
        clock, actual = _hz(ios.get("clock")), _hz(ios.get("actual clock"))
        bits = re.search(r"\((\d+) bits\)", ios.get("bus width", ""))
        width = int(bits.group(1)) if bits else None
        voltage = _parenthesised(ios.get("signal voltage"))
        source = "debugfs ios"
    elif kernel_log:
        timing = timing_from_log(kernel_log, host)
        source = "kernel log" if timing else None

    command_queue: bool | None = None
    queue_source = None
    if card_type == "MMC":
        cmdq = roots.read_sys(f"class/block/{block_name}/device/cmdq_en")
        if cmdq is not None:
            command_queue, queue_source = cmdq.strip() == "1", "sysfs cmdq_en"
    if command_queue is None and kernel_log is not None:
        enabled = any(m.group(1) == host for m in _CQE.finditer(kernel_log))
        command_queue = enabled
        queue_source = "kernel log" + ("" if enabled else ": no 'Command Queue Engine enabled'")

    cache = None
    cache_source = None
    if write_cache is not None:
        cache, cache_source = write_cache.strip() == "write back", "queue/write_cache"
    return MmcBus(
        host=host,
        controller=controller,
        timing=timing,
        clock_hz=clock,
        actual_clock_hz=actual,
        bus_width_bits=width,
        signal_voltage=voltage,
        timing_source=source,
        command_queue=command_queue,
        command_queue_source=queue_source,
        cache_enabled=cache,
        cache_source=cache_source,
    )


def _controller_driver(card_dir: Path) -> str | None:
    # card: <controller>/mmc_host/mmcN/mmcN:RCA; the controller's `driver` names it.
    controller = card_dir.parent.parent.parent
    link = controller / "driver"
    return link.resolve().name if link.exists() else None


def read_kernel_log(tools: ToolRunner, notes: list[str]) -> str | None:
    try:
        return tools.run(["dmesg"]).stdout
    except (ToolNotAvailable, ToolFailed) as error:
        notes.append(f"kernel log not read: {error}")
        return None
