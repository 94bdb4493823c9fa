"""Claimed vs measured: sentences comparing the classes a card claims (its SSR register) with the
grades a run measured. Pure functions of a ProbeReport and the run's grades."""

from __future__ import annotations

from collections.abc import Sequence

from flashmark.bench.model import Grade
from flashmark.probe.model import Device, ProbeReport
from flashmark.stats import Verdict

# Grade families, lowest first: a failed claim reports the best grade of its family met.
_FAMILIES = (("A1", "A2"), ("U1", "U3"), ("C10",), ("V6", "V10", "V30", "V60", "V90"))


def claim_findings(report: ProbeReport, grades: Sequence[Grade]) -> tuple[str, ...]:
    """Sentences comparing what the card claims (SSR) with what the run measured, e.g.
    "claims A2; measured 1766/732 IOPS: meets A1, not A2; this host does not enable SD
    command queueing, which A2 needs"."""
    device = next((d for d in report.devices if d.card and d.card.claimed.names()), None)
    if device is None or device.card is None:
        return ()
    by_name = {grade.name: grade for grade in grades}
    sentences = []
    for claim in device.card.claimed.names():
        grade = by_name.get(claim)
        if grade is None:
            sentences.append(f"claims {claim}; not graded in this run")
            continue
        measured = _measured(grade)
        if grade.passed is None:
            missing = ", ".join(c.name for c in grade.checks if c.value is None) or "some checks"
            sentences.append(f"claims {claim}; not fully measured ({missing} did not run)")
            continue
        if grade.passed:
            sentences.append(f"claims {claim}; measured {measured}: meets {claim}")
            continue
        if grade.verdict is Verdict.UNCERTAIN:
            sentences.append(
                f"claims {claim}; measured {measured}: too close to tell ({grade.verdict_reason})"
            )
            continue
        met = _best_met(claim, by_name)
        verdict = f"meets {met}, not {claim}" if met else f"does not meet {claim}"
        sentence = f"claims {claim}; measured {measured}: {verdict}"
        if claim == "A2" and device.kind == "sd":
            sentence += _a2_host_clause(device)
        sentences.append(sentence)
    return tuple(sentences)


def _measured(grade: Grade) -> str:
    iops = {c.metric: c.value for c in grade.checks if c.unit == "IOPS" and c.value is not None}
    parts = []
    if "read_iops" in iops and "write_iops" in iops:
        parts.append(f"{iops['read_iops']:.0f}/{iops['write_iops']:.0f} IOPS")
    else:
        parts.extend(f"{value:.0f} {metric}" for metric, value in iops.items())
    for check in grade.checks:
        if check.unit == "MB/s" and check.value is not None and not iops:
            parts.append(f"{check.value:.1f} MB/s")
    return ", ".join(parts) or "no values"


def _best_met(claim: str, by_name: dict[str, Grade]) -> str | None:
    family = next((f for f in _FAMILIES if claim in f), (claim,))
    lower = family[: family.index(claim)]
    passed = [name for name in lower if by_name.get(name) and by_name[name].passed]
    return passed[-1] if passed else None


def _a2_host_clause(device: Device) -> str:
    bus = device.mmc_bus
    lacking = []
    if bus and bus.command_queue is False:
        lacking.append("SD command queueing")
    if bus and bus.cache_enabled is False:
        lacking.append("the card's cache")
    if lacking:
        return f"; this host does not enable {' or '.join(lacking)}, which A2 needs"
    if bus is None or bus.command_queue is None:
        return "; whether this host enables SD command queueing (which A2 needs) is unknown"
    return ""
