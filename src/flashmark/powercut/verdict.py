"""The verdict of a power-cut test, and its one-line summary: fail when a cut lost an
acknowledged write, a filesystem needed repairs after its journal replay, or the device did not
come back whole; pass when nothing acknowledged was lost and the 95% upper bound on the share of
cuts that lose data (bound.py) over the cuts that tested something is below 50% (5 cuts);
uncertain otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from flashmark.powercut.bound import CONFIDENCE, loss_rate_upper_bound, trials_for
from flashmark.powercut.result import BACK, CycleResult

PASS_BELOW = 0.5  # the loss-rate bound a pass needs
PASS_CUTS = trials_for(PASS_BELOW)  # 5


@dataclass(frozen=True)
class Judgement:
    verdict: str
    loss_rate_upper_95: float
    summary: str


def judge(cycles: Sequence[CycleResult], record_bytes: int) -> Judgement:
    tested = [cycle for cycle in cycles if cycle.informative]
    failed = [cycle for cycle in tested if cycle.lost_acknowledged]
    bound = loss_rate_upper_bound(len(failed), len(tested), CONFIDENCE)
    rate = f"loss rate < {_percent_up(bound)} at {CONFIDENCE:.0%}"
    if failed:
        return Judgement("fail", bound, f"fail — {_failure(failed, cycles)}")
    count = _cycles(len(cycles))
    if len(tested) >= PASS_CUTS:
        summary = f"pass — {count}, nothing acknowledged was lost ({rate})"
        if len(tested) < len(cycles):
            summary += f"; {len(cycles) - len(tested)} cut before any flush tested nothing"
        return Judgement("pass", bound, summary)
    if not tested:
        why = "no cut came after an acknowledged flush" if cycles else "no cut was checked"
        return Judgement("uncertain", bound, f"uncertain — {count}: {why}")
    return Judgement(
        "uncertain",
        bound,
        f"uncertain — {count}, nothing acknowledged was lost, too few cuts to tell "
        f"({rate}; {PASS_CUTS} cuts after a flush bound it below {PASS_BELOW:.0%})",
    )


def _failure(failed: Sequence[CycleResult], cycles: Sequence[CycleResult]) -> str:
    gone = next((cycle for cycle in failed if cycle.device != BACK), None)
    lost = [cycle for cycle in failed if cycle.lost_after_flush]
    parts: list[str] = []
    if lost:
        total = sum(cycle.flushed_bytes_lost for cycle in lost)
        records = sum(cycle.lost_after_flush for cycle in lost)
        order = " (out of order)" if any(cycle.reordered for cycle in lost) else ""
        parts.append(
            f"the card lost acknowledged writes{order} in {len(lost)} of {_cycles(len(cycles))}: "
            f"{records:,} flushed record(s), {total:,} bytes"
        )
    repaired = [c for c in failed if c.fsck is not None and c.fsck.state != "clean"]
    if repaired:
        first = repaired[0]
        state = first.fsck.state if first.fsck is not None else ""
        parts.append(
            f"fsck found the filesystem damaged after {len(repaired)} cut(s) "
            f"(first after cut {first.number}: {state})"
        )
    if gone is not None:
        parts.append(f"the device {_device_failure(gone)} after cut {gone.number}")
    return "; ".join(parts)


def _device_failure(cycle: CycleResult) -> str:
    return {
        "vanished": "did not come back",
        "unreadable": "came back unreadable",
        "capacity changed": "came back with another capacity",
    }.get(cycle.device, cycle.device)


def _cycles(count: int) -> str:
    return f"{count} cycle" + ("" if count == 1 else "s")


def _percent_up(rate: float) -> str:
    """A bound in percent, rounded up to a tenth: a bound is never shown lower than it is."""
    return f"{math.ceil(rate * 1000 - 1e-9) / 10:.1f}%"
