"""Sentences from a probe: what would distort a benchmark, and claimed vs measured classes.

Pure functions of a ProbeReport (and, for claims, the grades of a run). Thresholds that are
judgement rather than specification say so next to them.
"""

from __future__ import annotations

from collections.abc import Sequence

from flashmark.model import Grade
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


# Grade families, lowest first: a failed claim reports the best grade of its family met.
_FAMILIES = (("A1", "A2"), ("U1", "U3"), ("C10",), ("V6", "V10", "V30", "V60", "V90"))


def claim_findings(report: ProbeReport, grades: Sequence[Grade]) -> tuple[str, ...]:
    """Sentences comparing what the card claims (SSR) with what the run measured, e.g.
    "claims A2; measured 1766/732 IOPS: meets A1, not A2; this host does not enable SD
    command queueing, which A2 needs"."""
    device = next((d for d in report.devices if d.card and d.card.claimed.names()), None)
    if device is None or device.card is None:
        return ()
    by_name = {grade.name: grade for grade in grades}
    sentences = []
    for claim in device.card.claimed.names():
        grade = by_name.get(claim)
        if grade is None:
            sentences.append(f"claims {claim}; not graded in this run")
            continue
        measured = _measured(grade)
        if grade.passed is None:
            missing = ", ".join(c.name for c in grade.checks if c.value is None) or "some checks"
            sentences.append(f"claims {claim}; not fully measured ({missing} did not run)")
            continue
        if grade.passed:
            sentences.append(f"claims {claim}; measured {measured}: meets {claim}")
            continue
        met = _best_met(claim, by_name)
        verdict = f"meets {met}, not {claim}" if met else f"does not meet {claim}"
        sentence = f"claims {claim}; measured {measured}: {verdict}"
        if claim == "A2" and device.kind == "sd":
            sentence += _a2_host_clause(device)
        sentences.append(sentence)
    return tuple(sentences)


def _measured(grade: Grade) -> str:
    iops = {c.metric: c.value for c in grade.checks if c.unit == "IOPS" and c.value is not None}
    parts = []
    if "read_iops" in iops and "write_iops" in iops:
        parts.append(f"{iops['read_iops']:.0f}/{iops['write_iops']:.0f} IOPS")
    else:
        parts.extend(f"{value:.0f} {metric}" for metric, value in iops.items())
    for check in grade.checks:
        if check.unit == "MB/s" and check.value is not None and not iops:
            parts.append(f"{check.value:.1f} MB/s")
    return ", ".join(parts) or "no values"


def _best_met(claim: str, by_name: dict[str, Grade]) -> str | None:
    family = next((f for f in _FAMILIES if claim in f), (claim,))
    lower = family[: family.index(claim)]
    passed = [name for name in lower if by_name.get(name) and by_name[name].passed]
    return passed[-1] if passed else None


def _a2_host_clause(device: Device) -> str:
    bus = device.mmc_bus
    lacking = []
    if bus and bus.command_queue is False:
        lacking.append("SD command queueing")
    if bus and bus.cache_enabled is False:
        lacking.append("the card's cache")
    if lacking:
        return f"; this host does not enable {' or '.join(lacking)}, which A2 needs"
    if bus is None or bus.command_queue is None:
        return "; whether this host enables SD command queueing (which A2 needs) is unknown"
    return ""


def device_summary(device: Device) -> str:
    """One line naming what a run measures, e.g. "mmcblk0 (sd): Samsung "EB1QT" 63.9 GB,
    claims C10 U3 V30 A2, bus uhs sdr104 at 100 MHz"."""
    card = device.card
    maker = (card.manufacturer if card else None) or device.vendor
    product = card.cid.product_name if card and card.cid else device.model
    parts = [" ".join(p for p in (maker, f'"{product}"' if product else None) if p) or "unknown"]
    if device.capacity_bytes:
        parts[0] += f" {device.capacity_bytes / 1e9:.1f} GB"
    if card and card.claimed.names():
        parts.append("claims " + " ".join(card.claimed.names()))
    bus = device.mmc_bus
    if bus and bus.timing:
        hz = bus.actual_clock_hz or bus.clock_hz
        parts.append(f"bus {bus.timing}" + (f" at {hz / 1e6:.0f} MHz" if hz else ""))
    if device.pcie and device.pcie.current_speed:
        parts.append(f"PCIe {device.pcie.current_speed} x{device.pcie.current_width}")
    if device.usb and device.usb.speed_mbps:
        parts.append(f"USB {device.usb.speed_mbps} Mb/s, {device.usb.driver or 'driver ?'}")
    return f"{device.name} ({device.kind}): " + ", ".join(parts)


def report_warnings(report_devices: Sequence[Device], environment: Environment) -> list[str]:
    warnings = environment_warnings(environment)
    for device in report_devices:
        warnings.extend(device_warnings(device))
    return warnings
