"""The rules a probe alone answers (a run's stored probe too): the link, the bus, the host.
Kept apart from doctor.check, which reads the machine, so that a saved run's verdict can ask
them without loading the probe."""

from __future__ import annotations

from flashmark.doctor.findings import Finding
from flashmark.doctor.host import (
    governor_findings,
    scheduler_findings,
    temperature_findings,
    throttling_findings,
)
from flashmark.doctor.pcie import nvme_reset_findings, pcie_findings
from flashmark.doctor.sd import host_fastest, sd_bus_findings
from flashmark.doctor.usb import uas_trouble_findings, usb_findings
from flashmark.probe.model import Device, ProbeReport


def probe_findings(
    report: ProbeReport, device: Device, kernel_log: str | None = None
) -> tuple[list[Finding], list[str]]:
    """The findings a probe alone tells (a run's stored probe too), and the checks that could
    not run here."""
    environment = report.environment
    board = environment.board
    found: list[Finding] = []
    not_here: list[str] = []
    throttling = environment.throttling
    under_voltage = (
        None if throttling is None else "under-voltage" in (*throttling.now, *throttling.since_boot)
    )
    if device.usb is not None:
        found += usb_findings(device.usb)
        found += uas_trouble_findings(
            device.usb, kernel_log, under_voltage, board, device.sysfs_path, device.name
        )
    if device.mmc_bus is not None:
        if host_fastest(board) is None:
            not_here.append(
                f"SD bus mode: not available here (the fastest mode of {board or 'this board'}'s "
                "SD host is known for Raspberry Pi 4 and 5)"
            )
        found += sd_bus_findings(device.mmc_bus, device.card, board)
    resets = (
        nvme_reset_findings(device.sysfs_path, device.pcie, kernel_log, under_voltage, board)
        if device.kind == "nvme"
        else []
    )
    if device.pcie is not None and not resets:  # never Gen 3 for a drive that drops off at Gen 2
        found += pcie_findings(device.pcie, board)
    found += resets
    found += scheduler_findings(device.name, device.kind, device.scheduler)
    if throttling is not None:
        found += throttling_findings(throttling, board)
    elif (board or "").startswith("Raspberry Pi"):
        not_here.append(
            "under-voltage and throttling: not read (`vcgencmd get_throttled` gave no answer)"
        )
    else:
        not_here.append(
            "under-voltage and throttling: not available here (a Raspberry Pi's `vcgencmd "
            "get_throttled` tells them)"
        )
    found += governor_findings(environment.cpu_governors, environment.cpu_scaling_driver)
    found += temperature_findings(environment.temperatures)
    return found, not_here
