"""probe_target(): resolve the target, read every physical device, the host and environment."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from flashmark.probe.block import read_block
from flashmark.probe.emmc_health import read_emmc_health
from flashmark.probe.environment import read_environment
from flashmark.probe.mmc import read_card
from flashmark.probe.mmc_bus import read_kernel_log, read_mmc_bus
from flashmark.probe.model import Device, ProbeReport
from flashmark.probe.nvme import read_health as read_nvme_health
from flashmark.probe.nvme import read_pcie_link
from flashmark.probe.resolve import resolve_target
from flashmark.probe.tools import ToolRunner, tool_runner_for
from flashmark.probe.ufs import read_ufs, ufs_host_dir
from flashmark.probe.usb import read_usb_link
from flashmark.system.sysroot import SystemRoots

LIVE_SAMPLE_S = 0.5  # long enough to see iowait and a busy disk, short enough not to bother


def probe_target(
    path: str | Path,
    roots: SystemRoots,
    tools: ToolRunner | None = None,
    *,
    sample_s: float | None = None,
) -> ProbeReport:
    """Describe the device(s) under `path`. Raises TargetNotFound when `path` does not exist;
    fields that cannot be read are None (or listed as unreadable), never an exception.
    The report observes only: its `warnings` are judged by flashmark.bench.grading.judge_probe."""
    if tools is None:
        tools = tool_runner_for(roots)
    if sample_s is None:
        sample_s = LIVE_SAMPLE_S if roots.is_live else 0.0
    notes: list[str] = []
    resolution = resolve_target(path, roots)
    kernel_log: str | None = None
    if any(name.startswith("mmcblk") for name in resolution.physical):
        kernel_log = read_kernel_log(tools, notes)
    devices = tuple(
        read_device(roots, name, tools, kernel_log, notes) for name in resolution.physical
    )
    if not devices:
        notes.append("no physical block device found under the target")
    environment = read_environment(
        roots,
        resolution.mount,
        resolution.physical[0] if resolution.physical else None,
        tools,
        notes,
        sample_s,
    )
    for device in devices:
        notes.extend(f"{device.name}: {u.field} unreadable: {u.reason}" for u in device.unreadable)
    return ProbeReport(
        target=str(path),
        resolved=resolution.resolved,
        target_type=resolution.target_type,
        layers=resolution.layers,
        devices=devices,
        environment=environment,
        notes=tuple(notes),
    )


def read_device(
    roots: SystemRoots,
    name: str,
    tools: ToolRunner,
    kernel_log: str | None,
    notes: list[str],
) -> Device:
    device = read_block(roots, name)
    device_dir = f"class/block/{name}/device"
    if device.kind in ("sd", "emmc"):
        card, unreadable = read_card(roots, device_dir)
        bus = read_mmc_bus(roots, name, card.type, kernel_log, device.write_cache)
        cid = card.cid
        device = dataclasses.replace(
            device,
            card=card,
            mmc_bus=bus,
            vendor=card.manufacturer or device.vendor,
            model=(cid.product_name if cid else None) or roots.read_sys(f"{device_dir}/name"),
            serial=f"0x{cid.serial:08x}" if cid else roots.read_sys(f"{device_dir}/serial"),
            firmware=(cid.revision if cid else None) or device.firmware,
            unreadable=device.unreadable + unreadable,
        )
        if card.type == "MMC":
            health, unreadable = read_emmc_health(roots, device_dir)
            device = dataclasses.replace(
                device, health=health, unreadable=device.unreadable + unreadable
            )
    elif device.kind == "nvme":
        health, unreadable = read_nvme_health(roots, name, tools, notes)
        device = dataclasses.replace(
            device,
            pcie=read_pcie_link(roots, name),
            health=health,
            unreadable=device.unreadable + unreadable,
        )
    elif device.kind == "usb":
        device = dataclasses.replace(device, usb=read_usb_link(roots, device.sysfs_path))
    elif device.kind == "ufs":
        host_dir = ufs_host_dir(roots, device.sysfs_path)
        if host_dir is not None:
            identity, health, unreadable = read_ufs(roots, host_dir)
            device = dataclasses.replace(
                device,
                vendor=identity["vendor"] or device.vendor,
                model=identity["model"] or device.model,
                firmware=identity["firmware"] or device.firmware,
                serial=identity["serial"] or device.serial,
                health=health,
                unreadable=device.unreadable + unreadable,
            )
        else:
            notes.append(f"{name}: UFS host controller attributes not found")
    return device
