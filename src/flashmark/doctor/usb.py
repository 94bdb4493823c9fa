"""USB findings: a link slower than the device can signal, and Bulk-Only instead of UAS."""

from __future__ import annotations

import re

from flashmark.doctor.findings import Finding
from flashmark.doctor.host import supply_fix
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
                category="usb",
                what=f"USB link at {speed} Mb/s, the device (USB {link.usb_version}) can do "
                f"{best} Mb/s",
                why="the port, a hub or the cable negotiated a slower link than the device's",
                fix=_link_fix(best),
                cap_bytes_per_second=USB2_BULK_CAP_BYTES_PER_SECOND if speed == 480 else None,
            )
        )
    if link.driver == "usb-storage" and best is not None and best >= 5000:
        found.append(
            Finding(
                category="usb",
                what="driver usb-storage (Bulk-Only Transport) on a USB 3 device",
                why="one command at a time: no queueing, slower random I/O than uas",
                fix="a bridge with UAS support, unless a usb-storage quirk was set on purpose",
            )
        )
    return found


def _link_fix(best_mbps: int) -> str:
    """The port and cable the device's own USB version needs (bcdUSB tells a 3.x device's
    SuperSpeed, not whether it does 10 or 20 Gb/s, so no finding asks for more than 5 Gb/s)."""
    if best_mbps >= 5000:
        return "plug it into a USB 3 (blue) port directly, with a USB 3 cable"
    return "plug it into a USB 2.0 port directly, not through a USB 1.1 hub or cable"


# The kernel's uas driver logs these when it aborts or resets a command that timed out
# (drivers/usb/storage/uas.c: uas_eh_abort_handler, uas_eh_device_reset_handler).
UAS_TROUBLE = ("uas_eh_abort_handler", "uas_eh_device_reset_handler")


_SCSI_HOST = re.compile(r"/host(\d+)/")


def _names_device(line: str, scsi_host: str | None, block_name: str) -> bool:
    """A uas line names its SCSI host ("scsi host0: uas_eh_device_reset_handler start") or
    its device ("sd 0:0:0:0: [sda] tag#11 uas_eh_abort_handler")."""
    if scsi_host is not None:
        return f"scsi host{scsi_host}:" in line or f"sd {scsi_host}:" in line
    return f"[{block_name}]" in line


def uas_trouble_findings(
    link: UsbLink,
    kernel_log: str | None,
    under_voltage_seen: bool | None,
    board: str | None = None,
    device_path: str = "",
    block_name: str = "",
) -> list[Finding]:
    """UAS aborts or resets of this device (its SCSI host, from its sysfs path) in the kernel
    log: the quirk that turns UAS off for this bridge, only once power is ruled out (kernel
    maintainers reject turning UAS off blindly: a sagging supply causes the same resets)."""
    if link.driver != "uas" or not kernel_log:
        return []
    host = _SCSI_HOST.search(device_path)
    scsi_host = host.group(1) if host else None
    lines = [
        line
        for line in kernel_log.splitlines()
        if any(t in line for t in UAS_TROUBLE) and _names_device(line, scsi_host, block_name)
    ]
    if not lines:
        return []
    bridge = f"{link.vendor_id}:{link.product_id}"
    what = f"{len(lines)} UAS command aborts or resets in the kernel log (bridge {bridge})"
    if under_voltage_seen or under_voltage_seen is None:
        power = "under-voltage was seen" if under_voltage_seen else "power could not be checked"
        return [
            Finding(
                category="usb",
                what=what,
                why=f"{power}: a sagging supply causes these resets too",
                fix=f"power first: {supply_fix(board)}; turn UAS off only if the resets go on",
            )
        ]
    return [
        Finding(
            category="usb",
            what=what,
            why="the bridge's UAS firmware fails under load; the kernel retries and resets",
            fix=f"add usb-storage.quirks={bridge}:u to /boot/firmware/cmdline.txt (one line), "
            "then reboot: the bridge runs usb-storage, slower on random I/O but steady",
        )
    ]
