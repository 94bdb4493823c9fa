"""Conditions that distort a benchmark: warnings about the host and the device, read from a probe.

Pure functions of a probe's Environment and Devices. What holds a device back is `flashmark
doctor`'s finding, worded as it words it (flashmark.doctor); a device's alarms are its health
red flags (flashmark.health.red_flags); the rest (a busy device or host, early wear) is the
benchmark's own. Thresholds that are judgement rather than specification say so next to them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from flashmark.doctor.findings import Finding
from flashmark.doctor.host import (
    governor_findings,
    scheduler_findings,
    temperature_findings,
    throttling_findings,
)
from flashmark.doctor.pcie import pcie_findings
from flashmark.doctor.sd import sd_bus_findings
from flashmark.doctor.usb import usb_findings
from flashmark.health.red_flags import red_flags
from flashmark.probe.model import Device, Environment, ProbeReport

# Judgement, not specification: above these, background activity visibly moves results.
BUSY_DEVICE_PCT = 10.0
BUSY_IOWAIT_PCT = 5.0
NVME_WORN_PCT = 90  # NVMe "Percentage Used" may exceed 100; 90 is our early warning


def finding_warning(finding: Finding, label: str | None = None) -> str:
    """A doctor finding as a run's warning: what was read and why it matters (`flashmark
    doctor` gives the fix)."""
    text = f"{finding.what}: {finding.why}"
    return f"{label}: {text}" if label else text


def environment_warnings(environment: Environment) -> list[str]:
    findings = governor_findings(environment.cpu_governors, environment.cpu_scaling_driver)
    if environment.throttling is not None:
        findings += throttling_findings(environment.throttling, environment.board)
    findings += temperature_findings(environment.temperatures)
    warnings = [finding_warning(finding) for finding in findings]
    if environment.device_busy_pct is not None and environment.device_busy_pct > BUSY_DEVICE_PCT:
        warnings.append(
            f"the device was busy {environment.device_busy_pct:.0f}% of the time while probing:"
            " other I/O will mix into the results"
        )
    elif environment.iowait_pct is not None and environment.iowait_pct > BUSY_IOWAIT_PCT:
        warnings.append(f"iowait is {environment.iowait_pct:.0f}%: another process is doing I/O")
    load, cpus = environment.load_1m, environment.cpu_count
    if load is not None and cpus and load > cpus:
        warnings.append(f"load average {load:.2f} exceeds the {cpus} CPUs: the machine is busy")
    return warnings


def device_warnings(device: Device, board: str | None = None) -> list[str]:
    label = f"{device.name} ({device.kind})"
    findings: list[Finding] = []
    if device.usb is not None:
        findings += usb_findings(device.usb)
    if device.mmc_bus is not None:
        findings += sd_bus_findings(device.mmc_bus, device.card, board)
    pcie = pcie_findings(device.pcie, board) if device.pcie is not None else []
    findings += pcie
    findings += scheduler_findings(device.name, device.kind, device.scheduler)
    warnings = [finding_warning(finding, label) for finding in findings]
    if device.pcie and device.pcie.below_max and not pcie:  # the port's maximum is not read
        link = device.pcie
        warnings.append(
            f"{label}: PCIe link runs at {link.current_speed} x{link.current_width}, below the "
            f"drive's {link.max_speed} x{link.max_width}: results show the link's limit"
        )
    health = device.health
    if health:
        warnings += [f"{label}: {flag}" for flag in red_flags(health)]
        if "90-100%" in (health.life_time_a, health.life_time_b):
            warnings.append(f"{label}: rated life used 90-100%")
        if health.percentage_used is not None and health.percentage_used >= NVME_WORN_PCT:
            warnings.append(f"{label}: {health.percentage_used}% of rated endurance used")
    if device.card:
        warnings += [
            f"{label}: possible counterfeit: {flag}" for flag in device.card.counterfeit_flags
        ]
    return warnings


def report_warnings(report_devices: Sequence[Device], environment: Environment) -> list[str]:
    warnings = environment_warnings(environment)
    for device in report_devices:
        warnings.extend(device_warnings(device, environment.board))
    return warnings


def judge_probe(report: ProbeReport) -> ProbeReport:
    """The report with its warnings: what in the host and the device would distort a run."""
    return dataclasses.replace(
        report, warnings=tuple(report_warnings(report.devices, report.environment))
    )
