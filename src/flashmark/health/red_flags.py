"""The wear signs that call for a new device now, whatever the forecast says.

Each is the device's own alarm: eMMC PRE_EOL_INFO warning (80% of its reserved blocks used) or
urgent, a life estimate "exceeded", NVMe available spare below its threshold, and any bit of
NVMe critical_warning (spare, temperature, reliability, read-only, volatile backup, PMR).
"""

from __future__ import annotations

from flashmark.probe.model import Health

# NVMe Base Specification, SMART / Health Information log, byte 0.
_CRITICAL_WARNING_BITS = (
    "available spare below threshold",
    "temperature beyond its threshold",
    "reliability degraded by media or internal errors",
    "media read-only",
    "volatile memory backup failed",
    "persistent memory region read-only or unreliable",
)


def red_flags(health: Health) -> tuple[str, ...]:
    """Each alarm the device raises, as a phrase; empty when it raises none."""
    available_spare, spare_threshold = health.available_spare, health.available_spare_threshold
    flags: list[str] = []
    if health.pre_eol in ("warning", "urgent"):
        flags.append(f"pre-EOL {health.pre_eol}: the reserved blocks are running out")
    for name, estimate in (("A", health.life_time_a), ("B", health.life_time_b)):
        if estimate == "exceeded":
            flags.append(f"life time estimate {name} exceeded")
    spare_low = (
        available_spare is not None
        and spare_threshold is not None
        and available_spare < spare_threshold
    )
    if spare_low:
        flags.append(f"available spare {available_spare}% below its threshold {spare_threshold}%")
    if health.critical_warning:
        for bit, meaning in enumerate(_CRITICAL_WARNING_BITS):
            if health.critical_warning & (1 << bit):
                flags.append(f"critical warning: {meaning}")
        unknown = health.critical_warning >> len(_CRITICAL_WARNING_BITS)
        if unknown:
            flags.append(f"critical warning 0x{health.critical_warning:02x}")
    return tuple(flags)
