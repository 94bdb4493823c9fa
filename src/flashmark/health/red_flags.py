"""The device's own alarms, whatever the forecast says.

eMMC PRE_EOL_INFO warning (80% of its reserved blocks used) or urgent, a life estimate
"exceeded", a rated life used up (NVMe or SMART percentage used, an SD card's vendor health: 100%
or more, as eMMC's "exceeded"), NVMe available spare below its threshold, and each bit of NVMe
critical_warning (spare, temperature, reliability, read-only, volatile backup, PMR), and a
SATA/SCSI drive's failed SMART self-assessment. Most say the medium is wearing out
(`worn_out`); a temperature or a failed volatile-memory backup is an alarm of another kind.
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
# The critical_warning bits that mean the medium is wearing out: spare, reliability, read-only.
_WEAR_OUT_BITS = (0, 2, 3)


def red_flags(health: Health) -> tuple[str, ...]:
    """Each alarm the device raises, as a phrase; empty when it raises none."""
    available_spare, spare_threshold = health.available_spare, health.available_spare_threshold
    flags: list[str] = []
    if health.pre_eol in ("warning", "urgent"):
        flags.append(f"pre-EOL {health.pre_eol}: the reserved blocks are running out")
    for name, estimate in (("A", health.life_time_a), ("B", health.life_time_b)):
        if estimate == "exceeded":
            flags.append(f"life time estimate {name} exceeded")
    used = _rated_life_used(health)
    if used is not None:
        flags.append(f"rated life used up: {used}")
    spare_low = (
        available_spare is not None
        and spare_threshold is not None
        and available_spare < spare_threshold
    )
    if spare_low and not (health.critical_warning or 0) & 1:  # bit 0 says it below
        flags.append(f"available spare {available_spare}% below its threshold {spare_threshold}%")
    if health.critical_warning:
        for bit, meaning in enumerate(_CRITICAL_WARNING_BITS):
            if health.critical_warning & (1 << bit):
                flags.append(f"critical warning: {meaning}")
        unknown = health.critical_warning >> len(_CRITICAL_WARNING_BITS)
        if unknown:
            flags.append(f"critical warning 0x{health.critical_warning:02x}")
    if _self_assessment_failed(health):
        flags.append("SMART self-assessment failed: an attribute is at its failure threshold")
    return tuple(flags)


def _self_assessment_failed(health: Health) -> bool:
    """smartctl's overall verdict, where no NVMe critical_warning (from which smartctl derives
    it for NVMe, and which names the cause) stands for it."""
    return health.smart_passed is False and health.critical_warning is None


def _rated_life_used(health: Health) -> str | None:
    """'percentage used 103%' or 'ADATA reports 99-101% used' when the device says its rated
    life is used up (NVMe: "a value of 100 indicates that the estimated endurance ... has been
    consumed", NVM Express Base Specification, SMART log Percentage Used); else None.

    An SD card's vendor figure is a bracket: 0% left in whole percent is [99, 101], in 0.01%
    [99.99, 100.01], so the bracket's middle, not its low end, is set against 100."""
    if health.percentage_used is not None and health.percentage_used >= 100:
        return f"percentage used {health.percentage_used}%"
    vendor = health.vendor
    if vendor is None or vendor.life_used_low_pct is None:
        return None
    low = vendor.life_used_low_pct
    high = vendor.life_used_high_pct if vendor.life_used_high_pct is not None else low
    # Within a rounding error of the decimal figures ([99.99, 100.01] adds up to a hair below).
    if (low + high) / 2 >= 100 - 1e-9:
        return f"{vendor.vendor} reports {low:g}-{high:g}% used"
    return None


def worn_out(health: Health) -> bool:
    """True when an alarm says the medium is wearing out (not heat or a backup failure)."""
    spare_low = (
        health.available_spare is not None
        and health.available_spare_threshold is not None
        and health.available_spare < health.available_spare_threshold
    )
    wear_bits = any((health.critical_warning or 0) & (1 << bit) for bit in _WEAR_OUT_BITS)
    exceeded = "exceeded" in (health.life_time_a, health.life_time_b)
    failed = _self_assessment_failed(health)
    used_up = _rated_life_used(health) is not None
    return (
        health.pre_eol in ("warning", "urgent")
        or exceeded
        or used_up
        or spare_low
        or wear_bits
        or failed
    )
