"""The machine around the device: board, CPU, kernel, distribution, clocks, heat, load.

From the device tree model (else DMI), proc/cpuinfo, osrelease, os-release, cpufreq (kHz,
Documentation/admin-guide/pm/cpufreq.rst), thermal zones (millidegrees C, sysfs-class-thermal),
proc/loadavg, proc/stat (iowait: the cpu line's 5th time, proc(5)), the block device's `stat`
(io_ticks: field 10, Documentation/block/stat.rst) and `inflight`, and on a Raspberry Pi
`vcgencmd get_throttled` (raspberrypi.com/documentation/computers/os.html#get_throttled).
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import time
from dataclasses import dataclass

from flashmark.probe.model import Environment, Temperature, Throttling
from flashmark.probe.tools import ToolFailed, ToolNotAvailable, ToolRunner
from flashmark.system.diskstats import read_block_stat
from flashmark.system.mounts import Mount
from flashmark.system.sysroot import SystemRoots

# vcgencmd get_throttled bit -> condition (Raspberry Pi documentation, see module doc).
THROTTLE_BITS_NOW = {
    0: "under-voltage",
    1: "ARM frequency capped",
    2: "throttled",
    3: "soft temperature limit active",
}
THROTTLE_BITS_SINCE_BOOT = {
    16: "under-voltage",
    17: "ARM frequency capped",
    18: "throttled",
    19: "soft temperature limit",
}


def decode_throttled(text: str) -> Throttling:
    """'throttled=0x50005' -> conditions now and since boot. Raises ValueError on other text."""
    match = re.search(r"throttled=(0x[0-9a-fA-F]+)", text)
    if not match:
        raise ValueError(f"not vcgencmd get_throttled output: {text.strip()!r}")
    value = int(match.group(1), 16)
    now = tuple(name for bit, name in THROTTLE_BITS_NOW.items() if value & (1 << bit))
    since = tuple(name for bit, name in THROTTLE_BITS_SINCE_BOOT.items() if value & (1 << bit))
    return Throttling(raw=match.group(1), now=now, since_boot=since)


@dataclass(frozen=True)
class _CpuTimes:
    total: int
    iowait: int


def _cpu_times(roots: SystemRoots) -> _CpuTimes | None:
    text = roots.read_proc("stat")
    if not text:
        return None
    first = text.splitlines()[0].split()
    if first[0] != "cpu" or len(first) < 6:
        return None
    values = [int(v) for v in first[1:] if v.isdigit()]
    return _CpuTimes(total=sum(values[:8]), iowait=values[4])


def _io_ticks(roots: SystemRoots, device: str | None) -> int | None:
    counters = None if device is None else read_block_stat(roots, device)
    return None if counters is None else counters.io_ms


def read_environment(
    roots: SystemRoots,
    mount: Mount | None,
    device: str | None,
    tools: ToolRunner,
    notes: list[str],
    sample_s: float,
) -> Environment:
    before_cpu, before_ticks = _cpu_times(roots), _io_ticks(roots, device)
    started = time.monotonic()
    if sample_s > 0:
        time.sleep(sample_s)
    window = time.monotonic() - started if sample_s > 0 else None
    after_cpu, after_ticks = _cpu_times(roots), _io_ticks(roots, device)
    iowait = busy = None
    if window and before_cpu and after_cpu and after_cpu.total > before_cpu.total:
        iowait = (
            100.0 * (after_cpu.iowait - before_cpu.iowait) / (after_cpu.total - before_cpu.total)
        )
    if window and before_ticks is not None and after_ticks is not None:
        busy = min(100.0, 100.0 * (after_ticks - before_ticks) / (window * 1000.0))

    load = (roots.read_proc("loadavg") or "").split()
    cpuinfo = roots.read_proc("cpuinfo") or ""
    free = total = None
    if mount is not None and roots.is_live:
        try:
            st = os.statvfs(mount.mount_point)
            free, total = st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize
        except OSError as error:
            notes.append(f"free space of {mount.mount_point} not read: {error}")
    inflight_fields = (roots.read_sys(f"class/block/{device}/inflight") or "").split()
    inflight = (
        sum(int(v) for v in inflight_fields if v.isdigit()) if len(inflight_fields) == 2 else None
    )
    return Environment(
        board=_board(roots),
        cpu_model=_cpu_model(cpuinfo),
        cpu_count=sum(1 for line in cpuinfo.splitlines() if line.startswith("processor")) or None,
        kernel=roots.read_proc("sys/kernel/osrelease"),
        distribution=_distribution(roots),
        filesystem=mount.fstype if mount else None,
        mount_point=mount.mount_point if mount else None,
        mount_source=mount.source if mount else None,
        mount_options=mount.all_options if mount else None,
        free_bytes=free,
        total_bytes=total,
        cpu_governors=_governors(roots),
        cpu_scaling_driver=roots.read_sys("devices/system/cpu/cpu0/cpufreq/scaling_driver"),
        cpu_mhz=_cpu_mhz(roots),
        cpu_max_mhz=_khz_to_mhz(roots.read_sys("devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")),
        temperatures=_temperatures(roots),
        throttling=_throttling(tools, notes),
        load_1m=_float(load[0]) if len(load) > 2 else None,
        load_5m=_float(load[1]) if len(load) > 2 else None,
        load_15m=_float(load[2]) if len(load) > 2 else None,
        iowait_pct=round(iowait, 1) if iowait is not None else None,
        sample_window_s=round(window, 2) if window else None,
        device_busy_pct=round(busy, 1) if busy is not None else None,
        device_inflight=inflight,
    )


def _board(roots: SystemRoots) -> str | None:
    model = roots.read_sys("firmware/devicetree/base/model")
    if model:
        return model.rstrip("\x00").strip()
    vendor = roots.read_sys("class/dmi/id/sys_vendor")
    product = roots.read_sys("class/dmi/id/product_name")
    named = " ".join(part for part in (vendor, product) if part)
    return named or None


def _cpu_model(cpuinfo: str) -> str | None:
    # x86 prints "model name"; Raspberry Pi kernels print "Model" (the board) and ARM cores
    # only "CPU part"; "Hardware" names the SoC on older ARM kernels.
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    for key in ("model name", "Hardware", "cpu model", "uarch"):
        if fields.get(key):
            return fields[key]
    part = fields.get("CPU part")
    return f"ARM CPU part {part}" if part else None


def _distribution(roots: SystemRoots) -> str | None:
    """os-release's PRETTY_NAME. On this machine the standard library reads it (it knows both
    places, /etc and /usr/lib, and the file's shell quoting: os-release(5)); a recorded tree
    keeps its copy as proc/self/root/etc/os-release, read the same way."""
    if roots.is_live:
        try:
            return platform.freedesktop_os_release().get("PRETTY_NAME")
        except OSError:
            return None
    text = roots.read_proc("self/root/etc/os-release")
    if not text:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "PRETTY_NAME":
            words = shlex.split(value)  # os-release values are shell-quoted
            return words[0] if words else None
    return None


def _cpu_dirs(roots: SystemRoots) -> list[str]:
    folder = roots.sys_path("devices/system/cpu")
    if not folder.is_dir():
        return []
    names = [p.name for p in folder.iterdir() if re.fullmatch(r"cpu\d+", p.name)]
    return sorted(names, key=lambda n: int(n[3:]))


def _cpufreq(roots: SystemRoots, attribute: str) -> list[str]:
    """Each CPU's cpufreq `attribute`, in CPU order, where one is given."""
    texts = (
        roots.read_sys(f"devices/system/cpu/{cpu}/cpufreq/{attribute}") for cpu in _cpu_dirs(roots)
    )
    return [text for text in texts if text]


def _governors(roots: SystemRoots) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_cpufreq(roots, "scaling_governor")))


def _cpu_mhz(roots: SystemRoots) -> tuple[int, ...]:
    values = (_khz_to_mhz(text) for text in _cpufreq(roots, "scaling_cur_freq"))
    return tuple(mhz for mhz in values if mhz is not None)


def _temperatures(roots: SystemRoots) -> tuple[Temperature, ...]:
    folder = roots.sys_path("class/thermal")
    if not folder.is_dir():
        return ()
    temperatures = []
    for zone in sorted(p.name for p in folder.iterdir() if p.name.startswith("thermal_zone")):
        value = roots.read_sys(f"class/thermal/{zone}/temp")
        if value is None or not value.lstrip("-").isdigit():
            continue
        temperatures.append(
            Temperature(zone, roots.read_sys(f"class/thermal/{zone}/type"), int(value) / 1000.0)
        )
    return tuple(temperatures)


def _throttling(tools: ToolRunner, notes: list[str]) -> Throttling | None:
    try:
        output = tools.run(["vcgencmd", "get_throttled"]).stdout
    except ToolNotAvailable:
        return None  # not a Raspberry Pi (or its firmware tools are not installed)
    except ToolFailed as error:
        notes.append(f"throttling not read: {error}")
        return None
    try:
        return decode_throttled(output)
    except ValueError as error:
        notes.append(f"throttling not read: {error}")
        return None


def _khz_to_mhz(text: str | None) -> int | None:
    return int(text) // 1000 if text and text.isdigit() else None


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
