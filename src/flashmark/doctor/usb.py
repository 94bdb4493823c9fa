"""USB findings: a link slower than the device can signal, and Bulk-Only instead of UAS."""

from __future__ import annotations

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
                fix="plug it into a USB 3 (blue) port directly, with a USB 3 cable",
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


# The kernel's uas driver logs these when it aborts or resets a command that timed out
# (drivers/usb/storage/uas.c: uas_eh_abort_handler, uas_eh_device_reset_handler).
UAS_TROUBLE = ("uas_eh_abort_handler", "uas_eh_device_reset_handler")


def uas_trouble_findings(
    link: UsbLink,
    kernel_log: str | None,
    under_voltage_seen: bool | None,
    board: str | None = None,
) -> list[Finding]:
    """UAS aborts or resets in the kernel log: the quirk that turns UAS off for this bridge,
    only once power is ruled out (kernel maintainers reject turning UAS off blindly: a
    sagging supply causes the same resets)."""
    if link.driver != "uas" or not kernel_log:
        return []
    lines = [line for line in kernel_log.splitlines() if any(t in line for t in UAS_TROUBLE)]
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
