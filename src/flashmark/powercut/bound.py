"""How often might the card lose acknowledged data? The exact upper confidence bound.

Each cut is one trial, lost or not. The one-sided Clopper-Pearson upper bound at 1 - alpha is
the p at which `losses` or fewer of `trials` have probability alpha (Clopper and Pearson,
Biometrika 26(4), 1934, pp. 404-413): sum_{k<=losses} C(trials, k) p^k (1-p)^(trials-k) =
alpha. The sum is exact in integers and falls as p grows, so bisection solves it to a float's
last bit without a statistics library; with no loss it is 1 - alpha^(1/trials).
"""

from __future__ import annotations

import math

CONFIDENCE = 0.95


def loss_rate_upper_bound(losses: int, trials: int, confidence: float = CONFIDENCE) -> float:
    """The one-sided upper bound on the per-cut loss rate; 1.0 with no trial at all."""
    if trials < 0 or not 0 <= losses <= trials:
        raise ValueError(f"{losses} losses in {trials} trials")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence} is not in (0, 1)")
    if losses == trials:
        return 1.0
    alpha = 1 - confidence
    if losses == 0:
        return float(1 - alpha ** (1 / trials))
    low, high = losses / trials, 1.0
    for _ in range(200):  # halving 1.0 200 times is past a float's resolution
        middle = (low + high) / 2
        if _at_most(losses, trials, middle) > alpha:
            low = middle
        else:
            high = middle
        if high - low <= 1e-15:
            break
    return high


def _at_most(losses: int, trials: int, rate: float) -> float:
    """P(X <= losses) for X ~ Binomial(trials, rate)."""
    return math.fsum(
        math.comb(trials, k) * rate**k * (1 - rate) ** (trials - k) for k in range(losses + 1)
    )


def trials_for(bound: float, confidence: float = CONFIDENCE) -> int:
    """How many loss-free cuts bring the upper bound below `bound`."""
    return math.floor(math.log(1 - confidence) / math.log(1 - bound)) + 1
