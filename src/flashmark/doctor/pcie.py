"""PCIe findings: an NVMe link slower than both ends can run.

A Raspberry Pi 5's slot is one lane, certified at Gen 2 (5 GT/s); `dtparam=pciex1_gen=3` in
config.txt runs it at Gen 3, which Raspberry Pi says "may be unstable" (Raspberry Pi
documentation, "PCIe Gen 3.0"). Usable rate: lanes x GT/s x the line code (8b/10b to Gen 2,
128b/130b from Gen 3) / 8 bits. Elsewhere the port's own maximum is not read yet, so a link
below the drive's speed is not called a finding (the probe warns of it).
"""

from __future__ import annotations

import re

from flashmark.doctor.findings import Finding
from flashmark.probe.model import PcieLink

_PI5 = ("Raspberry Pi 5", "Raspberry Pi Compute Module 5")
_GTS = re.compile(r"([0-9.]+)\s*GT/s")


def gigatransfers(text: str | None) -> float | None:
    found = _GTS.search(text or "")
    return float(found.group(1)) if found else None


def usable_bytes_per_second(gts: float, lanes: int) -> float:
    code = 0.8 if gts <= 5.0 else 128 / 130
    return gts * 1e9 * code / 8 * lanes


def pcie_findings(link: PcieLink, board: str | None) -> list[Finding]:
    now, best = gigatransfers(link.current_speed), gigatransfers(link.max_speed)
    if now is None or best is None or not (board or "").startswith(_PI5):
        return []
    if now >= 8.0 or best < 8.0:
        return []
    lanes = link.current_width or 1
    at_most = f"at most {usable_bytes_per_second(now, lanes) / 1e6:.0f} MB/s"
    if now < 5.0:  # Gen 1: below even the slot's default, the link itself is poor
        return [
            Finding(
                category="pcie",
                what=f"PCIe at {now:g} GT/s x{lanes} (Gen 1), the drive can do {best:g} GT/s",
                why=f"the Pi 5's slot trains at Gen 2 by default; Gen 1 points to the ribbon "
                f"cable or its connectors: {at_most}",
                fix="reseat the flat cable at both ends (contacts the right way round), or "
                "replace it",
                cap_bytes_per_second=usable_bytes_per_second(now, lanes),
            )
        ]
    return [
        Finding(
            category="pcie",
            what=f"PCIe at {now:g} GT/s x{lanes} (Gen 2), the drive can do {best:g} GT/s",
            why=f"the Pi 5's slot runs Gen 2 by default: {at_most}, Gen 3 about "
            f"{usable_bytes_per_second(8.0, lanes) / 1e6:.0f} MB/s",
            fix="dtparam=pciex1_gen=3 in /boot/firmware/config.txt, then reboot (Raspberry Pi "
            "certifies Gen 2 only: Gen 3 may be unstable; remove the line if the drive drops out)",
            cap_bytes_per_second=usable_bytes_per_second(now, lanes),
        )
    ]
