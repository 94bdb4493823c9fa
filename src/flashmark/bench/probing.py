"""`flashmark probe` as one library call: the device under a target, judged (what would
distort a benchmark), with a passport for each SD/eMMC card from the history's earlier results
(bench.passport). The result is printed, never saved (bench.probe_kind).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flashmark.bench.grading.conditions import judge_probe
from flashmark.bench.passport import card_passports
from flashmark.bench.probe_kind import ProbeResult
from flashmark.history.store import History
from flashmark.probe.target import probe_target
from flashmark.system.sysroot import SystemRoots


@dataclass(frozen=True)
class ProbeRequest:
    """What `flashmark probe` is asked: the target, and the history its cards' passports read
    (None: the default one)."""

    target: str = "."
    db_path: Path | None = None


def run_probe(
    request: ProbeRequest,
    *,
    roots: SystemRoots | None = None,
    warn: Callable[[str], None] = lambda message: None,
) -> ProbeResult:
    """Probe and judge the target, and give each card its passport; a history that cannot be
    read gives the passports without it, said through `warn`."""
    report = judge_probe(probe_target(request.target, roots or SystemRoots.from_environment()))
    passports = card_passports(report, History.locate(request.db_path), warn)
    return ProbeResult(report, tuple(passports))
