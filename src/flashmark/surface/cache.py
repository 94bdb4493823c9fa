"""Where a write stream's rate falls off and stays: the write cache, its burst and sustained rate.

From the bytes written and the time after every request: a device with a write cache gives two
straight lines (burst, then sustained). Host stalls, which later requests never make up, are cut
first; then the two least-squares lines that fit best are fitted again without the requests next
to the break: their slopes are the rates, their crossing the cache size (docs/surface.md, "The
write cache").
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from flashmark.codec import document, written

NS_PER_S = 1_000_000_000
# A cache that is less than this much faster than the sustained rate is not told from noise
# (GC pauses, host stalls): the device is reported as having no cache found.
MIN_BURST_RATIO = 1.1
_MIN_POINTS = 4  # per line: fewer cannot be told from a stall
STALL_FACTOR = 2.0  # a request this many times slower than its neighbours may be a stall
_MAKE_UP_REQUESTS = 16  # how far on a late delivery is looked for being made up


@dataclass(frozen=True)
class CacheEstimate:
    found: bool
    bytes: int | None  # where the rate falls off (bytes written from the start of the pass)
    burst_bw_bytes: float | None = field(metadata=document(digits=1))  # bytes/s before it
    # bytes/s after it (the whole pass when none is found)
    sustained_bw_bytes: float | None = field(metadata=document(digits=1))

    @property
    @written()
    def method(self) -> str:
        return (
            "rates from least-squares slopes either side of the break in completion time "
            "against bytes written (host stalls cut down)"
        )


@dataclass(frozen=True)
class _Line:
    intercept: float
    slope: float
    sse: float


def _prefix(values: Iterable[float]) -> list[float]:
    """0, then the running sums of `values`."""
    return [0.0, *itertools.accumulate(values)]


class _Sums:
    """Prefix sums, so that the least-squares line of any run of points costs O(1)."""

    def __init__(self, xs: Sequence[float], ys: Sequence[float]) -> None:
        self.x, self.y = _prefix(xs), _prefix(ys)
        self.xx, self.yy = _prefix(x * x for x in xs), _prefix(y * y for y in ys)
        self.xy = _prefix(x * y for x, y in zip(xs, ys, strict=True))

    def line(self, lo: int, hi: int) -> _Line | None:
        n = hi - lo
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
    xs, ys = _prefix(sizes), _prefix(times)
    sums = _Sums(xs, ys)
    whole = sums.line(0, len(xs))
    if whole is None or whole.slope <= 0:
        return None
    no_cache = CacheEstimate(False, None, None, NS_PER_S / whole.slope)
    first_guess = _least_squares_break(sums, len(xs))
    if first_guess is None:
        return no_cache
    # The lines again without the requests next to the break (the one that straddles the
    # cliff, and late deliveries around it), their slopes the rates, their crossing the cliff.
    n = len(sizes)
    split = first_guess - 1  # the first request of the second line
    margin = max(2, n // 50)
    if split - margin < _MIN_POINTS:
        # A "cache" of a request or two is the first request's own quirk (a buffered first
        # write, a device waking up), not a cache that can be told from it: none is found.
        return no_cache
    first = _line_through(sizes, times, range(0, max(0, split - margin)))
    second = _line_through(sizes, times, range(min(n, split + margin), n))
    if first is None or second is None or first.slope <= 0:
        return no_cache
    if second.slope < first.slope * MIN_BURST_RATIO:
        return no_cache
    # (counted from the first point: the bytes written before it, the ramp, come first)
    cache = points[0][0] + (first.intercept - second.intercept) / (second.slope - first.slope)
    if not points[0][0] < cache < points[-1][0]:
        # The lines cross outside what was written: no fall-off inside the pass (a short
        # pass of a folder's files, a few requests faster at its end), not a cache.
        return no_cache
    burst, sustained = 1 / first.slope, 1 / second.slope
    return CacheEstimate(
        found=True,
        bytes=round(cache),
        burst_bw_bytes=burst * NS_PER_S,
        sustained_bw_bytes=sustained * NS_PER_S,
    )


def _without_stalls(times: list[float]) -> list[float]:
    """Each request's time, less the part of a stall that was never made up.

    A request that took more than STALL_FACTOR times the median of its 9 neighbours either
    waited for a host that did not ask (a stalled thread: the device idled, time lost for good)
    or was only delivered late, and the next requests then complete early (no time lost: the
    sum over them is right, and least squares handle it). Only what the following requests do
    not give back counts as a stall and is cut. A level change (the cliff) moves the
    neighbours' median with it and is kept; short device pauses (GC pauses of tens of ms every
    few MiB) stay, averaged in."""
    half = 4
    n = len(times)
    medians = []
    for index in range(n):
        around = sorted(times[max(0, index - half) : index + half + 1])
        medians.append(around[len(around) // 2])
    cleaned = list(times)
    for index, took in enumerate(times):
        if took <= STALL_FACTOR * medians[index]:
            continue
        excess = took - medians[index]
        after = range(index + 1, min(n, index + 1 + _MAKE_UP_REQUESTS))
        given_back = sum(times[j] - medians[j] for j in after)
        lost = excess + min(0.0, given_back)
        if lost > excess / 2:  # mostly never made up: a stall (less is delivery noise)
            cleaned[index] = took - lost
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


def _line_through(sizes: Sequence[float], times: Sequence[float], span: range) -> _Line | None:
    """The least-squares line of completion time against bytes written over `span` (both
    counted from the start of the pass)."""
    xs = list(itertools.accumulate(sizes[span.start : span.stop], initial=sum(sizes[: span.start])))
    ys = list(itertools.accumulate(times[span.start : span.stop], initial=sum(times[: span.start])))
    return _Sums(xs, ys).line(0, len(xs))
