"""Where a write stream's rate falls off and stays: the write cache, its burst and sustained rate.

The write pass records, after every request, the bytes written so far and the time. A device
with a write cache (an SLC cache on a card, DRAM on a USB stick) writes at the burst rate until
the cache is full, then at its sustained rate: time against bytes is two straight lines. The
estimate is the two least-squares lines that fit best (the break point tried at every request),
the cache size is where they cross, and the rates are their slopes. This is the method the
emulated-flash tests prove (docs/emulated-flash.md, "How exact"): slopes of many points are
robust to a single late completion, which single latencies are not, and a host stall shifts the
line without changing its slope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

NS_PER_S = 1_000_000_000
# A cache that is less than this much faster than the sustained rate is not told from noise
# (GC pauses, host stalls): the device is reported as having no cache found.
MIN_BURST_RATIO = 1.1
_MIN_POINTS = 4  # per line: fewer cannot be told from a stall


@dataclass(frozen=True)
class CacheEstimate:
    found: bool
    bytes: int | None  # where the rate falls off (bytes written from the start of the pass)
    burst_bw_bytes: float | None  # bytes/s before it
    sustained_bw_bytes: float | None  # bytes/s after it (the whole pass when none is found)

    def to_dict(self) -> dict[str, object]:
        return {
            "found": self.found,
            "bytes": self.bytes,
            "burst_bw_bytes": _rounded(self.burst_bw_bytes),
            "sustained_bw_bytes": _rounded(self.sustained_bw_bytes),
            "method": "two least-squares lines through completion time against bytes written",
        }

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> CacheEstimate:
        def number(key: str) -> float | None:
            value = d.get(key)
            return None if value is None else float(value)  # type: ignore[arg-type]

        size = d.get("bytes")
        return cls(
            found=bool(d["found"]),
            bytes=None if size is None else int(size),  # type: ignore[call-overload]
            burst_bw_bytes=number("burst_bw_bytes"),
            sustained_bw_bytes=number("sustained_bw_bytes"),
        )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


@dataclass(frozen=True)
class _Line:
    intercept: float
    slope: float
    sse: float


class _Sums:
    """Prefix sums, so that the least-squares line of any run of points costs O(1)."""

    def __init__(self, xs: Sequence[float], ys: Sequence[float]) -> None:
        self.n = [0]
        self.x = [0.0]
        self.y = [0.0]
        self.xx = [0.0]
        self.xy = [0.0]
        self.yy = [0.0]
        for x, y in zip(xs, ys, strict=True):
            self.n.append(self.n[-1] + 1)
            self.x.append(self.x[-1] + x)
            self.y.append(self.y[-1] + y)
            self.xx.append(self.xx[-1] + x * x)
            self.xy.append(self.xy[-1] + x * y)
            self.yy.append(self.yy[-1] + y * y)

    def line(self, lo: int, hi: int) -> _Line | None:
        n = self.n[hi] - self.n[lo]
        sx, sy = self.x[hi] - self.x[lo], self.y[hi] - self.y[lo]
        sxx, sxy, syy = (
            self.xx[hi] - self.xx[lo],
            self.xy[hi] - self.xy[lo],
            self.yy[hi] - self.yy[lo],
        )
        dxx = sxx - sx * sx / n
        if n < 2 or dxx <= 0:
            return None
        dxy = sxy - sx * sy / n
        slope = dxy / dxx
        intercept = (sy - slope * sx) / n
        sse = max(0.0, (syy - sy * sy / n) - slope * dxy)
        return _Line(intercept, slope, sse)


def estimate_cache(points: Sequence[tuple[int, int]]) -> CacheEstimate | None:
    """The cache from (bytes written so far, ns since the pass started) after each request.

    None when there are too few points to say anything."""
    if len(points) < 2 * _MIN_POINTS:
        return None
    # Relative to the first point: the sums stay small enough for float precision.
    x0, y0 = points[0]
    xs = [float(x - x0) for x, _ in points]
    ys = [float(y - y0) for _, y in points]
    sums = _Sums(xs, ys)
    whole = sums.line(0, len(xs))
    if whole is None or whole.slope <= 0:
        return None
    best: tuple[float, _Line, _Line] | None = None
    for k in range(_MIN_POINTS, len(xs) - _MIN_POINTS + 1):
        first, second = sums.line(0, k), sums.line(k, len(xs))
        if first is None or second is None:
            continue
        total = first.sse + second.sse
        if best is None or total < best[0]:
            best = (total, first, second)
    no_cache = CacheEstimate(False, None, None, NS_PER_S / whole.slope)
    if best is None:
        return no_cache
    _, first, second = best
    if first.slope <= 0 or second.slope < first.slope * MIN_BURST_RATIO:
        return no_cache
    crossing = (first.intercept - second.intercept) / (second.slope - first.slope)
    return CacheEstimate(
        found=True,
        bytes=round(crossing + x0),
        burst_bw_bytes=NS_PER_S / first.slope,
        sustained_bw_bytes=NS_PER_S / second.slope,
    )
