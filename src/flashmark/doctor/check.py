"""`flashmark doctor` as one library call: the device under a target and the board around it,
read by the probe, and every finding of the rules (usb, sd, sd_queue, pcie, host), with what
could not be checked here said, never left out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from flashmark import __version__
from flashmark.doctor.findings import CATEGORIES, Finding, MeasuredRate
from flashmark.doctor.host import PI5, mount_findings, swap_file_findings, swap_findings
from flashmark.doctor.result import DoctorResult
from flashmark.doctor.rules import probe_findings
from flashmark.doctor.sd_queue import sd_queue_findings
from flashmark.errors import TargetError
from flashmark.probe.mmc_bus import read_kernel_log
from flashmark.probe.model import Device, ProbeReport
from flashmark.probe.target import probe_target
from flashmark.probe.tools import tool_runner_for
from flashmark.system.mounts import mount_of, read_mounts
from flashmark.system.sysroot import SystemRoots
from flashmark.units import utc_text


@dataclass(frozen=True)
class DoctorRequest:
    target: str = "/"


def diagnose(
    request: DoctorRequest,
    roots: SystemRoots,
    latest_rate: Callable[[Device], MeasuredRate | None] = lambda device: None,
) -> DoctorResult:
    """Every finding for the device under the request's target; `latest_rate` gives the
    fastest sequential figure of the latest saved run on that device, held against each cap."""
    tools = tool_runner_for(roots)
    report = probe_target(request.target, roots, tools)
    device = report.device
    if device is None:
        raise TargetError(f"{request.target}: no physical device below it to diagnose")
    notes: list[str] = []
    # The rules that read the kernel log: UAS resets, a Pi 5's SD command queueing, NVMe resets.
    pi5_card = device.mmc_bus is not None and (report.environment.board or "").startswith(PI5)
    reads_log = device.usb is not None or pi5_card or device.kind == "nvme"
    kernel_log = read_kernel_log(tools, notes) if reads_log else None
    findings, not_here = device_findings(report, device, kernel_log, roots)
    order = {category: index for index, category in enumerate(CATEGORIES)}
    return DoctorResult(
        flashmark_version=__version__,
        target=request.target,
        device=f"/dev/{device.name}",
        device_kind=device.kind,
        board=report.environment.board,
        kernel=report.environment.kernel,
        findings=tuple(sorted(findings, key=lambda finding: order[finding.category])),
        not_checked=tuple(not_here + notes),
        finished_at=utc_text(time.time()),
        measured=latest_rate(device) if any(f.cap_bytes_per_second for f in findings) else None,
    )


def device_findings(
    report: ProbeReport, device: Device, kernel_log: str | None, roots: SystemRoots
) -> tuple[list[Finding], list[str]]:
    """Every rule's findings for `device`: the probe's, and those read from `roots`: a Pi 5's
    SD command queueing, swap on it and the mount options of its filesystems."""
    found, not_here = probe_findings(report, device, kernel_log)
    ext_perf = roots.read_sys(f"class/block/{device.name}/device/ext_perf")
    queue_found, queue_notes = sd_queue_findings(
        device, report.environment.board, report.environment.kernel, kernel_log, ext_perf
    )
    found += queue_found
    not_here += queue_notes
    majmins = _majmins(device, roots)
    partitions = tuple(name for name, _ in majmins if name != device.name)
    swaps = roots.read_proc("swaps")
    found += swap_findings(swaps, device.name, partitions)
    mounts = read_mounts(roots)

    def on_device(path: str) -> bool:
        holding = mount_of(path, mounts)
        return holding is not None and holding.majmin in {majmin for _, majmin in majmins}

    found += swap_file_findings(swaps, on_device)
    seen: set[str] = set()  # a filesystem mounted twice (a bind mount) is told once
    for mount in mounts:
        if mount.majmin in {majmin for _, majmin in majmins} and mount.majmin not in seen:
            seen.add(mount.majmin)
            found += mount_findings(mount)
    return found, not_here


def _majmins(device: Device, roots: SystemRoots) -> list[tuple[str, str]]:
    """(name, "major:minor") of the device and each of its partitions."""
    names = [device.name]
    folder = roots.sys_path(f"class/block/{device.name}")
    if folder.is_dir():
        names += sorted(p.name for p in folder.iterdir() if p.name.startswith(device.name))
    found = []
    for name in names:
        majmin = (roots.read_sys(f"class/block/{name}/dev") or "").strip()
        if majmin:
            found.append((name, majmin))
    return found
