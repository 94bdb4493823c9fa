"""Host findings: under-voltage and throttling, now and since boot (the probe's decoding)."""

from __future__ import annotations

from flashmark.doctor.findings import Finding
from flashmark.probe.model import Throttling


def throttling_findings(throttling: Throttling) -> list[Finding]:
    found: list[Finding] = []
    if "under-voltage" in throttling.now or "under-voltage" in throttling.since_boot:
        when = "now" if "under-voltage" in throttling.now else "since boot"
        found.append(
            Finding(
                what=f"under-voltage {when} (get_throttled={throttling.raw})",
                why="a sagging supply throttles the CPU and can reset USB and NVMe devices",
                fix="use the official power supply (5 A for a Pi 5 with USB or NVMe storage)",
            )
        )
    heat = {"throttled", "soft temperature limit", "soft temperature limit active"}
    if heat & (set(throttling.now) | set(throttling.since_boot)):
        found.append(
            Finding(
                what=f"CPU throttled (get_throttled={throttling.raw})",
                why="a throttled CPU can slow the I/O it drives",
                fix="add a heatsink or fan",
            )
        )
    return found
