"""A doctor finding: what was read, why it matters, the fix, and the cap it implies."""

from __future__ import annotations

from dataclasses import dataclass

# A finding is called *the* limit only when the measured rate comes this close to its cap:
# further below, something else holds the device back first.
THE_LIMIT_MARGIN = 0.20
# A figure this far above a cap (the cap's own rounding, a cache absorbing the first writes)
# still counts as held by it; further above, the finding does not hold the device back.
OVER_CAP = 0.05
# Where a finding was found, in the order a report lists them.
CATEGORIES = ("usb", "sd", "pcie", "host")


@dataclass(frozen=True)
class Finding:
    category: str  # CATEGORIES
    what: str  # the reading, e.g. "USB link at 480 Mb/s, the device (USB 3.00) can do 5000"
    why: str  # why it matters
    fix: str  # the line or action that fixes it
    cap_bytes_per_second: float | None = None  # the rate it allows at most, when it implies one


def is_the_limit(finding: Finding, measured_bytes_per_second: float) -> bool:
    """True when the measured rate is within THE_LIMIT_MARGIN below the finding's cap (a rate
    well above it, from a cache or a wrong reading, is not held by it)."""
    cap = finding.cap_bytes_per_second
    if cap is None or cap <= 0:
        return False
    return cap * (1 - THE_LIMIT_MARGIN) <= measured_bytes_per_second <= cap * (1 + OVER_CAP)


@dataclass(frozen=True)
class MeasuredRate:
    """The fastest sequential figure of the latest saved run on the same device: what a
    finding's cap is held against."""

    run_id: int
    test: str  # "seq-read" or "seq-write"
    bytes_per_second: float
    finished_at: str


def cost_text(finding: Finding, measured: MeasuredRate) -> str | None:
    """What the finding costs the device by its latest run, or None when it sets no cap:
    'seq-read 46.1 MB/s in run #12 (2026-11-28T10:00:00Z): within 20% of this cap, it is
    the limit'."""
    cap = finding.cap_bytes_per_second
    if cap is None or cap <= 0:
        return None
    rate = f"{measured.test} {measured.bytes_per_second / 1e6:.1f} MB/s"
    where = f"{rate} in run #{measured.run_id} ({measured.finished_at})"
    if is_the_limit(finding, measured.bytes_per_second):
        return f"{where}: within {THE_LIMIT_MARGIN:.0%} of this cap, it is the limit"
    if measured.bytes_per_second > cap * (1 + OVER_CAP):
        # A figure the cap rules out: the run is older than the condition read now (a card
        # that fell back to a slower bus mode since, a drive moved to a slower port).
        return f"{where}: above this cap, so that run was made before it held"
    below = 1 - measured.bytes_per_second / cap
    return f"{where}: {below:.0%} below this cap, so something else limits it first"
