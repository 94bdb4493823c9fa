"""USB findings: a link slower than the device can signal, and Bulk-Only instead of UAS."""

from __future__ import annotations

from flashmark.doctor.findings import Finding
from flashmark.probe.model import UsbLink

# USB 2.0 high speed moves at most 13 bulk packets of 512 bytes a 125 us microframe
# (USB 2.0 specification, table 5-10): 53.248 MB/s before any protocol overhead.
USB2_BULK_CAP_BYTES_PER_SECOND = 13 * 512 * 8000


def usb_findings(link: UsbLink) -> list[Finding]:
    found: list[Finding] = []
    speed, best = link.speed_mbps, link.best_speed_mbps
    if speed is not None and best is not None and speed < best:
        found.append(
            Finding(
                what=f"USB link at {speed} Mb/s, the device (USB {link.usb_version}) can do {best}",
                why="the port, a hub or the cable negotiated a slower link than the device's",
                fix="plug it into a USB 3 (blue) port directly, with a USB 3 cable",
                cap_bytes_per_second=USB2_BULK_CAP_BYTES_PER_SECOND if speed == 480 else None,
            )
        )
    if link.driver == "usb-storage" and best is not None and best >= 5000:
        found.append(
            Finding(
                what="driver usb-storage (Bulk-Only Transport) on a USB 3 device",
                why="one command at a time: no queueing, slower random I/O than uas",
                fix="a bridge with UAS support, unless a usb-storage quirk was set on purpose",
            )
        )
    return found
