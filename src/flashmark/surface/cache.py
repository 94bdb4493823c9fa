"""Where a write stream's rate falls off and stays: the write cache, its burst and sustained rate.

The write pass records, after every request, the bytes written so far and the time. A device
with a write cache (an SLC cache on a card, DRAM on a USB stick) writes at the burst rate until
the cache is full, then at its sustained rate: time against bytes is two straight lines. The
two least-squares lines that fit best (the break tried at every request; the method of the
emulated-flash tests, docs/emulated-flash.md "How exact") place the break roughly. A host
stall is a step in that time line and pulls least-squares lines, so the rates are then taken
robustly on each side of the break (the median of four windows' rates), the break moved to
where the requests' own rates change, and the cache size placed inside the request that
straddles it (the share of its bytes its time says went at the burst rate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

NS_PER_S = 1_000_000_000
# A cache that is less than this much faster than the sustained rate is not told from noise
# (GC pauses, host stalls): the device is reported as having no cache found.
MIN_BURST_RATIO = 1.1
_MIN_POINTS = 4  # per line: fewer cannot be told from a stall
STALL_FACTOR = 2.0  # a request this many times slower than its neighbours is a stall


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
            "method": (
                "rates from least-squares slopes either side of the break in completion time "
                "against bytes written (host stalls cut down)"
            ),
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
    if len(points) < 2 * _MIN_POINTS + 1:
        return None
    # Per request: its bytes and the time since the previous completion, stalls cut down.
    sizes = [float(points[i + 1][0] - points[i][0]) for i in range(len(points) - 1)]
    times = _without_stalls([float(points[i + 1][1] - points[i][1]) for i in range(len(sizes))])
    xs, ys = [0.0], [0.0]
    for size, took in zip(sizes, times, strict=True):
        xs.append(xs[-1] + size)
        ys.append(ys[-1] + took)
    sums = _Sums(xs, ys)
    whole = sums.line(0, len(xs))
    if whole is None or whole.slope <= 0:
        return None
    no_cache = CacheEstimate(False, None, None, NS_PER_S / whole.slope)
    first_guess = _least_squares_break(sums, len(xs))
    if first_guess is None:
        return no_cache
    # Least squares on a noisy line can place the break far off; the robust search is run
    # from there and from a few other starting points, and the split that misclassifies the
    # fewest requests wins.
    n = len(sizes)
    guesses = {first_guess - 1, _MIN_POINTS, *(n * q // 20 for q in (1, 2, 5, 10, 15))}
    results = [r for r in (_robust_break(sizes, times, g) for g in sorted(guesses)) if r]
    if not results:
        return no_cache
    _, split, burst, sustained = min(results)
    # The request that straddles the cliff took part of its bytes at each rate: its share at
    # the burst rate (interpolated from its own time) places the cliff inside it.
    cache = sum(sizes[: max(0, split - 1)])
    for index in (split - 1, split):
        if 0 <= index < len(sizes) and sizes[index] > 0:
            per_byte = times[index] / sizes[index]
            share = (1 / sustained - per_byte) / (1 / sustained - 1 / burst)
            cache += sizes[index] * min(1.0, max(0.0, share))
    return CacheEstimate(
        found=True,
        bytes=round(cache),
        burst_bw_bytes=burst * NS_PER_S,
        sustained_bw_bytes=sustained * NS_PER_S,
    )


def _without_stalls(times: list[float]) -> list[float]:
    """Each request's time; one that took more than STALL_FACTOR times the median of its 9
    neighbours counts as that median.

    Such a request waited for the host (a stalled thread: the device idled) or for a long
    pause of the device; either way it says nothing about the rate the device streams at, and
    one such step would pull the least-squares lines. A level change (the cliff) moves the
    neighbours' median with it and is kept, and so are short pauses (GC pauses of tens of ms
    every few MiB cost less than doubling a request's time, and are averaged in)."""
    half = 4
    cleaned = []
    for index, took in enumerate(times):
        around = sorted(times[max(0, index - half) : index + half + 1])
        median = around[len(around) // 2]
        cleaned.append(median if took > STALL_FACTOR * median else took)
    return cleaned


def _least_squares_break(sums: _Sums, n: int) -> int | None:
    """The first point of the second of the two least-squares lines that fit best."""
    best: tuple[float, int] | None = None
    for k in range(_MIN_POINTS, n - _MIN_POINTS + 1):
        first, second = sums.line(0, k), sums.line(k, n)
        if first is None or second is None:
            continue
        total = first.sse + second.sse
        if best is None or total < best[0]:
            best = (total, k)
    return None if best is None else best[1]


def _robust_break(
    sizes: Sequence[float], times: Sequence[float], guess: int
) -> tuple[int, int, float, float] | None:
    """(requests misclassified, first request at the sustained rate, burst and sustained rate
    in bytes per ns).

    Least squares find the break, but one host stall (a step in the time line) pulls the lines.
    So the rates come from the requests on each side, away from the break (their own
    least-squares slope, stalls cut down), and the break is moved to the split that
    misclassifies fewest requests against the midpoint of the two rates. Two rounds settle
    it."""
    n = len(sizes)
    split = min(max(guess, _MIN_POINTS), n - _MIN_POINTS)
    burst = sustained = 0.0
    best = (n, split)
    for _ in range(3):
        margin = max(1, n // 100)
        left = range(0, max(1, split - margin))
        right = range(min(n - 1, split + margin), n)
        if len(left) < _MIN_POINTS or len(right) < _MIN_POINTS:
            return None
        burst, sustained = _window_rate(sizes, times, left), _window_rate(sizes, times, right)
        if burst <= 0 or sustained <= 0 or burst < sustained * MIN_BURST_RATIO:
            return None
        middle = (1 / burst + 1 / sustained) / 2  # ns per byte
        slow = [times[i] > middle * sizes[i] for i in range(n)]
        # misclassified(k) = fast requests after k + slow requests before k
        fast_after = sum(1 for flag in slow if not flag)
        slow_before = 0
        best = (fast_after + slow_before, 0)
        for k in range(n):
            slow_before += slow[k]
            fast_after -= not slow[k]
            best = min(best, (fast_after + slow_before, k + 1))
        if best[1] == split:
            break
        split = best[1]
    return best[0], split, burst, sustained


def _window_rate(sizes: Sequence[float], times: Sequence[float], span: range) -> float:
    """Bytes per ns over the requests in `span`: the least-squares slope of their completion
    times (stalls already cut down), which delivery jitter hardly moves."""
    xs, ys = [0.0], [0.0]
    for i in span:
        xs.append(xs[-1] + sizes[i])
        ys.append(ys[-1] + times[i])
    line = _Sums(xs, ys).line(0, len(xs))
    return 0.0 if line is None or line.slope <= 0 else 1 / line.slope
