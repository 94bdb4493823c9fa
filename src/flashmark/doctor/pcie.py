"""PCIe findings: an NVMe link slower than both ends can run, and a drive reset off its link.

A Raspberry Pi 5's slot is one lane, certified at Gen 2 (5 GT/s); `dtparam=pciex1_gen=3` in
config.txt runs it at Gen 3, which Raspberry Pi says "may be unstable" (Raspberry Pi
documentation, "PCIe Gen 3.0"). Usable rate: lanes x GT/s x the line code (8b/10b to Gen 2,
128b/130b from Gen 3) / 8 bits. Elsewhere the port's own maximum is not read yet, so a link
below the drive's speed is not called a finding (the probe warns of it).
"""

from __future__ import annotations

import re

from flashmark.doctor.findings import Finding
from flashmark.doctor.host import PI5, supply_fix
from flashmark.probe.model import PcieLink

_GTS = re.compile(r"([0-9.]+)\s*GT/s")


def gigatransfers(text: str | None) -> float | None:
    found = _GTS.search(text or "")
    return float(found.group(1)) if found else None


def usable_bytes_per_second(gts: float, lanes: int) -> float:
    code = 0.8 if gts <= 5.0 else 128 / 130
    return gts * 1e9 * code / 8 * lanes


def pcie_findings(link: PcieLink, board: str | None) -> list[Finding]:
    now, best = gigatransfers(link.current_speed), gigatransfers(link.max_speed)
    if now is None or best is None or not (board or "").startswith(PI5):
        return []
    if now >= 8.0 or best < 8.0:
        return []
    lanes = link.current_width or 1
    cap = usable_bytes_per_second(now, lanes)
    at_most = f"at most {cap / 1e6:.0f} MB/s"
    if now < 5.0:  # Gen 1: below even the slot's default, the link itself is poor
        gen = 1
        why = (
            f"the Pi 5's slot trains at Gen 2 by default; Gen 1 points to the ribbon cable or "
            f"its connectors: {at_most}"
        )
        fix = "reseat the flat cable at both ends (contacts the right way round), or replace it"
    else:
        gen = 2
        why = (
            f"the Pi 5's slot runs Gen 2 by default: {at_most}, Gen 3 about "
            f"{usable_bytes_per_second(8.0, lanes) / 1e6:.0f} MB/s"
        )
        fix = (
            "dtparam=pciex1_gen=3 in /boot/firmware/config.txt, then reboot (Raspberry Pi "
            "certifies Gen 2 only: Gen 3 may be unstable; remove the line if the drive drops out)"
        )
    return [
        Finding(
            category="pcie",
            what=f"PCIe at {now:g} GT/s x{lanes} (Gen {gen}), the drive can do {best:g} GT/s",
            why=why,
            fix=fix,
            cap_bytes_per_second=cap,
        )
    ]


# What the kernel logs when an NVMe drive drops off its link: the controller found dead
# (drivers/nvme/host/pci.c, nvme_warn_reset, which then gives POWER_SAVING_OFF below as its
# advice), not ready again after a reset (drivers/nvme/host/core.c, nvme_wait_ready), and the
# link's own errors (drivers/pci/pcie/aer.c, aer_print_error).
NVME_TROUBLE = ("controller is down; will reset", "Device not ready", "PCIe Bus Error")
# A link error the hardware corrected itself (aer_print_error's "severity=Corrected"): many
# healthy machines log them now and then, and nothing was reset.
_CORRECTED = "severity=Corrected"
# .../0000:01:00.0/nvme/nvme0/nvme0n1: the drive's PCI address (a domain of 4 hex digits or
# more: VMD's are 5) and its controller.
_NVME_PATH = re.compile(r"/([0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f])/nvme/(nvme\d+)/")


# The kernel's own advice with these resets (nvme_warn_reset, above).
POWER_SAVING_OFF = "nvme_core.default_ps_max_latency_us=0 pcie_aspm=off pcie_port_pm=off"


def nvme_reset_findings(
    sysfs_path: str,
    link: PcieLink | None,
    kernel_log: str | None,
    under_voltage_seen: bool | None,
    board: str | None,
) -> list[Finding]:
    """The drive's resets and link errors in the kernel log (its lines only: those naming its
    controller or its PCI address): power first where under-voltage was seen; on a Pi 5 at
    Gen 3, back to the certified Gen 2; else the parameters that keep drive and link out of
    their power-saving states."""
    found = _NVME_PATH.search(sysfs_path)
    if found is None or not kernel_log:
        return []
    address, controller = found.groups()
    lines = [
        line
        for line in kernel_log.splitlines()
        if any(trouble in line for trouble in NVME_TROUBLE)
        and _CORRECTED not in line
        and (f"{controller}:" in line or address in line)
    ]
    if not lines:
        return []
    count = len(lines)
    what = (
        f"{count} NVMe controller reset{'s' * (count != 1)} or PCIe bus error"
        f"{'s' * (count != 1)} in the kernel log ({controller})"
    )
    gen3 = link is not None and (gigatransfers(link.current_speed) or 0) >= 8.0
    if under_voltage_seen:
        why = "under-voltage was seen: a sagging supply drops the drive off its link too"
        fix = (
            f"power first: {supply_fix(board)}; then the kernel's power-saving parameters if "
            "the resets go on"
        )
    elif gen3 and (board or "").startswith(PI5):
        why = "the link runs Gen 3, which Raspberry Pi does not certify on the Pi 5"
        fix = (
            "remove dtparam=pciex1_gen=3 from /boot/firmware/config.txt, then reboot (Gen 2); "
            "the kernel's power-saving parameters if the resets go on"
        )
    else:
        if (board or "").startswith("Raspberry Pi"):
            where = "/boot/firmware/cmdline.txt (one line)"
        else:
            where = (
                "the kernel command line (GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then "
                "update-grub)"
            )
        why = (
            "the drive or its link fails to wake from a power-saving state (NVMe APST, PCIe "
            "ASPM), and the kernel resets it; a loose cable or adapter gives the same errors"
        )
        fix = (
            f"add {POWER_SAVING_OFF} to {where}, then reboot (the kernel's own advice with these "
            "errors; the drive then idles warmer)"
        )
    return [Finding(category="pcie", what=what, why=why, fix=fix)]
