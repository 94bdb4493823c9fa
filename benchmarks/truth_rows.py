"""One row of a truth table printed by the emulated-card benchmarks (surface.py, sustained.py):
a parameter of a card, its truth, min / median / max of the measured values, their errors and
the median time. Prints nothing itself."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass
class Row:
    card: str
    parameter: str
    unit: str
    scale: float
    truth: float | None
    measured: list[float]
    seconds: list[float]

    def render(self) -> str:
        low, mid, high = min(self.measured), statistics.median(self.measured), max(self.measured)
        values = " / ".join(f"{v / self.scale:,.3f}" for v in (low, mid, high))
        if self.truth is None or self.truth == 0:
            truth = "-" if self.truth is None else "0"
            errors = "-"
        else:
            truth = f"{self.truth / self.scale:,.3f}"
            errors = " / ".join(
                f"{(v - self.truth) / self.truth * 100:+.2f}%" for v in (low, mid, high)
            )
        return (
            f"| {self.card} | {self.parameter} | {self.unit} | {truth} | {values} | {errors} | "
            f"{statistics.median(self.seconds):.1f} s |"
        )
