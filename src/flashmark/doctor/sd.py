"""SD findings: a bus mode slower than both the card and the board's host can run.

The modes and their bus rates (SD Physical Layer Specification, 4-bit bus): default speed
12.5 MB/s, high speed 25 MB/s, UHS-I SDR50 and DDR50 50 MB/s, SDR104 104 MB/s. The fastest mode
a board's host runs is known for Raspberry Pi boards: a Pi 5 runs SDR104, a Pi 4 DDR50 (its
SD host caps it near 40-50 MB/s). A UHS speed grade says the card runs UHS-I but not whether
it does SDR104, so a UHS card below SDR50 fell back (failed tuning, errors); elsewhere the
host's fastest mode is not known and the check says so.
"""

from __future__ import annotations

import re

from flashmark.doctor.findings import Finding
from flashmark.probe.model import Card, MmcBus

# Mode -> (rank, bus rate in bytes per second).
MODES = {
    "legacy": (0, 12.5e6),
    "SDR12": (0, 12.5e6),
    "high speed": (1, 25e6),
    "SDR25": (1, 25e6),
    "SDR50": (2, 50e6),
    "DDR50": (2, 50e6),
    "SDR104": (3, 104e6),
}
# The fastest mode of each board's SD host, by the start of its device-tree model.
HOST_FASTEST = {"Raspberry Pi 5": "SDR104", "Raspberry Pi Compute Module 5": "SDR104",
                "Raspberry Pi 4": "DDR50", "Raspberry Pi Compute Module 4": "DDR50",
                "Raspberry Pi 400": "DDR50"}  # fmt: skip
_UHS_MODE = re.compile(r"SDR104|SDR50|DDR50|SDR25|SDR12", re.IGNORECASE)


def bus_mode(timing: str | None) -> str | None:
    """The mode in the kernel's words ("sd uhs DDR50", "ultra high speed SDR104 SDXC": a UHS
    mode's name wins over the "high speed" in "ultra high speed")."""
    text = (timing or "").lower().replace("-", " ")  # debugfs: "sd high-speed"
    found = _UHS_MODE.search(text)
    if found is not None:
        return found.group(0).upper()
    return next((mode for mode in ("high speed", "legacy") if mode in text), None)


def host_fastest(board: str | None) -> str | None:
    for model, mode in HOST_FASTEST.items():
        if (board or "").startswith(model):
            return mode
    return None


def sd_bus_findings(bus: MmcBus, card: Card | None, board: str | None) -> list[Finding]:
    mode, fastest = bus_mode(bus.timing), host_fastest(board)
    if mode is None or fastest is None or card is None or card.type != "SD":
        return []
    # A UHS speed grade says the card runs UHS-I, not which modes: a UHS50 card stops at
    # SDR50/DDR50, a UHS104 card does SDR104. Below SDR50 a UHS card fell back.
    uhs = card.ssr is not None and card.ssr.uhs_grade is not None
    best = min(fastest, "SDR50", key=lambda name: MODES[name][0]) if uhs else "high speed"
    if MODES[mode][0] >= MODES[best][0]:
        return []
    return [
        Finding(
            category="sd",
            what=f"SD bus in {mode} mode, where the card and {board} run {best} or faster",
            why=f"{mode} moves at most {MODES[mode][1] / 1e6:g} MB/s: the kernel fell back to "
            "it (failed tuning or bus errors: `dmesg | grep mmc`)",
            fix="reseat the card, clean its contacts, or try another card; an extension cable "
            "or adapter adds errors",
            cap_bytes_per_second=MODES[mode][1],
        )
    ]
