"""One line naming a probed device or what a run measured, for every view that shows it."""

from __future__ import annotations

from flashmark.probe.model import Device, ProbeReport


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


def measured_summary(report: ProbeReport) -> str | None:
    """One line naming what a run on the probed target measures: its device, or, for a target
    on a loop device, the loop device (the device probed) and its backing file, and the device
    that file lives on (a loop's speed is its backing file's filesystem on that device), e.g.
    "loop3 (loop device, backed by /srv/card.img) on vda: 1.1 GB"."""
    device = report.device
    at = next((i for i, layer in enumerate(report.layers) if layer.kind == "loop"), None)
    if at is None:
        return device_summary(device) if device is not None else None
    loop = report.layers[at]
    under = next((layer.name for layer in report.layers[at + 1 :] if layer.kind == "device"), None)
    beneath = f" on {under}" if under is not None else ""
    size = (
        f": {device.capacity_bytes / 1e9:.1f} GB"
        if device is not None and device.name == loop.name and device.capacity_bytes
        else ""
    )
    return f"{loop.name} (loop device, {loop.detail}){beneath}{size}"
