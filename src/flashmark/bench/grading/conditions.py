"""Conditions that distort a benchmark: warnings about the host and the device, read from a probe.

Pure functions of a probe's Environment and Devices. Thresholds that are judgement rather than
specification say so next to them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from flashmark.probe.model import Device, Environment, ProbeReport

# Judgement, not specification: above these, background activity visibly moves results.
BUSY_DEVICE_PCT = 10.0
BUSY_IOWAIT_PCT = 5.0
# Raspberry Pi firmware starts soft throttling at 80 °C on Pi 4 and Pi 5
# (https://www.raspberrypi.com/documentation/computers/raspberry-pi.html#frequency-management-and-thermal-control).
HOT_CELSIUS = 80.0
NVME_WORN_PCT = 90  # NVMe "Percentage Used" may exceed 100; 90 is our early warning


def environment_warnings(environment: Environment) -> list[str]:
    warnings: list[str] = []
    if "powersave" in environment.cpu_governors:
        warnings.append(
            "CPU governor is 'powersave': the CPU stays at its lowest clock and slows I/O "
            "submission (set 'performance' or 'schedutil' for the run)"
        )
    throttling = environment.throttling
    if throttling and throttling.now:
        warnings.append(f"the board is throttling now ({', '.join(throttling.now)})")
    elif throttling and throttling.since_boot:
        warnings.append(
            f"the board has throttled since boot ({', '.join(throttling.since_boot)}): "
            "check cooling and the power supply"
        )
    hot = [t for t in environment.temperatures if t.celsius >= HOT_CELSIUS]
    if hot:
        zone = max(hot, key=lambda t: t.celsius)
        warnings.append(
            f"{zone.type or zone.zone} is at {zone.celsius:.0f} °C: thermal throttling is likely"
        )
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


def device_warnings(device: Device) -> list[str]:
    warnings: list[str] = []
    label = f"{device.name} ({device.kind})"
    if device.pcie and device.pcie.below_max:
        link = device.pcie
        warnings.append(
            f"{label}: PCIe link runs at {link.current_speed} x{link.current_width}, below the "
            f"drive's {link.max_speed} x{link.max_width}: results show the link's limit"
        )
    if device.usb:
        usb = device.usb
        if usb.speed_mbps and usb.best_speed_mbps and usb.speed_mbps < usb.best_speed_mbps:
            warnings.append(
                f"{label}: USB {usb.usb_version} device negotiated {usb.speed_mbps} Mb/s, "
                f"below its {usb.best_speed_mbps} Mb/s: use a USB 3 port and cable"
            )
        if usb.driver == "usb-storage":
            warnings.append(
                f"{label}: driven by usb-storage (one command at a time), not uas: random I/O "
                "is limited by the protocol"
            )
    health = device.health
    if health:
        if health.pre_eol in ("warning", "urgent"):
            warnings.append(f"{label}: pre-EOL status is {health.pre_eol}: reserved blocks low")
        for estimate in (health.life_time_a, health.life_time_b):
            if estimate in ("90-100%", "exceeded"):
                warnings.append(f"{label}: rated life used {estimate}")
                break
        if health.percentage_used is not None and health.percentage_used >= NVME_WORN_PCT:
            warnings.append(f"{label}: {health.percentage_used}% of rated endurance used")
        if health.critical_warning:
            warnings.append(f"{label}: NVMe critical warning 0x{health.critical_warning:02x}")
    if device.card:
        for flag in device.card.counterfeit_flags:
            warnings.append(f"{label}: possible counterfeit: {flag}")
    return warnings


def report_warnings(report_devices: Sequence[Device], environment: Environment) -> list[str]:
    warnings = environment_warnings(environment)
    for device in report_devices:
        warnings.extend(device_warnings(device))
    return warnings


def judge_probe(report: ProbeReport) -> ProbeReport:
    """The report with its warnings: what in the host and the device would distort a run."""
    return dataclasses.replace(
        report, warnings=tuple(report_warnings(report.devices, report.environment))
    )
