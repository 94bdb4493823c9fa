"""Reading and writing an emulated card directly, and reading fio's per-I/O logs."""

from __future__ import annotations

import itertools
import json
import mmap
import os
import statistics
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BLOCK = 4096


@contextmanager
def opened_direct(path: str) -> Iterator[int]:
    """The device opened with O_DIRECT: no page cache between us and the model."""
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    try:
        yield fd
    finally:
        os.close(fd)


def signature(offset: int, nonce: bytes = b"run-1") -> bytes:
    """A block that says where it was written (the f3probe idea): aliasing is visible."""
    head = b"FLASHMARK " + nonce + b" @" + str(offset).encode() + b";"
    return (head * (BLOCK // len(head) + 1))[:BLOCK]


def write_block(fd: int, offset: int, data: bytes) -> None:
    buffer = mmap.mmap(-1, len(data))  # page-aligned, as O_DIRECT needs
    buffer[:] = data
    assert os.pwritev(fd, [buffer], offset) == len(data)


def read_block(fd: int, offset: int, length: int = BLOCK) -> bytes:
    buffer = mmap.mmap(-1, length)
    assert os.preadv(fd, [buffer], offset) == length
    return bytes(buffer)


Wrap = Callable[[list[str]], list[str]]  # e.g. EmulatedFlash.command: run inside the caps


def run_fio(
    args: Sequence[str], *, wrap: Wrap | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    argv = ["fio", "--output-format=json", "--direct=1", "--ioengine=libaio", *args]
    return subprocess.run(
        wrap(argv) if wrap else argv, capture_output=True, text=True, timeout=timeout
    )


def fio_json(args: Sequence[str], *, wrap: Wrap | None = None) -> dict[str, Any]:
    done = run_fio(args, wrap=wrap)
    assert done.returncode == 0, done.stderr[-2000:]
    document: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{") :])
    return document


@dataclass(frozen=True)
class CompletedIo:
    """One line of fio's per-I/O completion-latency log (--log_avg_msec=0 --log_offset=1)."""

    time_ms: int  # completion, since the job started
    clat_ns: int
    size: int
    offset: int


def fio_io_log(args: Sequence[str], directory: Path) -> list[CompletedIo]:
    """Run fio logging every I/O; its completions in order."""
    prefix = directory / f"io-{len(list(directory.iterdir()))}"
    fio_json([*args, f"--write_lat_log={prefix}", "--log_avg_msec=0", "--log_offset=1"])
    ios = []
    for line in Path(f"{prefix}_clat.1.log").read_text().splitlines():
        time_ms, clat_ns, _direction, size, offset, *_ = (int(v) for v in line.split(","))
        ios.append(CompletedIo(time_ms, clat_ns, size, offset))
    return ios


# fio stamps completions in whole milliseconds (truncated): a stamp on the device's schedule
# lies up to 1 ms below the true instant, plus the host's reaping delay of a fraction of a ms.
SCHEDULE_SLACK_MS = 1.5
# Neighbours within this many ms of an I/O's stamp decide whether it is on schedule: twice the
# default absorb_ns, so a catch-up after the longest absorbed stall has on-schedule I/Os on
# both sides.
NEIGHBOURHOOD_MS = 100
# A request that finds the device idle (a gap longer than the model's absorb_ns, 50 ms by
# default) starts at its arrival: the schedule steps up by more than absorb_ns. Half of it.
IDLE_STEP_MS = 25


def on_schedule(ios: Sequence[CompletedIo]) -> list[int]:
    """The I/Os whose completion stamps lie on the device's schedule, the late ones left out.

    The engine paces by a running clock (docs/emulated-flash.md, "Pacing"): each request ends
    at a computed instant, and its completion reaches fio at that instant or later, never
    earlier. When the host stalls (by less than the model's absorb_ns), requests reach the
    engine after their scheduled start; the engine keeps its schedule, so the requests after
    the stall complete at once until it has caught up. Completion stamps therefore bunch:
    late, then back on schedule. Over a stretch of back-to-back requests the schedule is a
    straight line of time against bytes (a convex bend where the cache fills), and every stamp
    lies on or above it. So the schedule is the lower convex hull of the stamps around each
    I/O; an I/O whose stamp lies more than SCHEDULE_SLACK_MS above it was reaped late.
    Returns the indices of the others.
    """
    xs = list(itertools.accumulate(io.size for io in ios))
    ys = [float(io.time_ms) for io in ios]
    kept = []
    lo = hi = 0
    for i in range(len(ios)):
        while ys[lo] < ys[i] - NEIGHBOURHOOD_MS:
            lo += 1
        while hi < len(ios) and ys[hi] <= ys[i] + NEIGHBOURHOOD_MS:
            hi += 1
        if ys[i] - _lower_hull_at(xs, ys, lo, hi, xs[i]) <= SCHEDULE_SLACK_MS:
            kept.append(i)
    return kept


def _lower_hull_at(xs: Sequence[int], ys: Sequence[float], lo: int, hi: int, x: int) -> float:
    """The lower convex hull of points lo..hi-1 (xs increasing), evaluated at x."""
    hull: list[int] = []
    for k in range(lo, hi):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # b is not below the segment from a to k: not on the lower hull
            if (ys[b] - ys[a]) * (xs[k] - xs[a]) >= (ys[k] - ys[a]) * (xs[b] - xs[a]):
                hull.pop()
            else:
                break
        hull.append(k)
    for a, b in itertools.pairwise(hull):
        if xs[a] <= x <= xs[b]:
            return ys[a] + (ys[b] - ys[a]) * (x - xs[a]) / (xs[b] - xs[a])
    return ys[hull[0]]  # a single point


def _idle_steps(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[int]]:
    """The times ys of on-schedule points with the schedule's steps taken out, and the steps
    (the index of the first point after each).

    A step is where the time between two neighbouring points exceeds, by more than
    IDLE_STEP_MS, what their bytes take at the slower of the local rates on either side (over
    the 8 points before and the 8 after): the device was idle there, which shifts the rest of
    the schedule but says nothing about its rates or its cache size (the drain aside, which
    the model's truth accounts for)."""
    n = len(xs)

    def slope(lo: int, hi: int) -> float:
        lo, hi = max(0, lo), min(n - 1, hi)
        return (ys[hi] - ys[lo]) / (xs[hi] - xs[lo]) if hi > lo else 0.0

    times, steps = list(ys[:1]), []
    for k in range(n - 1):
        local = max(slope(k - 8, k), slope(k + 1, k + 9))
        dx, dt = xs[k + 1] - xs[k], ys[k + 1] - ys[k]
        if dt - local * dx > IDLE_STEP_MS:
            steps.append(k + 1)
            dt = local * dx
        times.append(times[-1] + dt)
    return times, steps


def rate_bps(ios: Sequence[CompletedIo]) -> float:
    """Bytes per second of a run of back-to-back I/Os, robust to a busy host.

    Only stamps on the device's schedule count (`on_schedule`): a late stamp, or the bunch of
    completions that follows an absorbed host stall while the device catches up, says when fio
    reaped the I/Os, not when the device finished them; a rate over a stretch starting inside
    such a bunch would read high, one ending inside it low. A host stall longer than the
    model's absorb_ns makes the device idle, a step in the schedule, taken out
    (`_idle_steps`); the median of the least-squares rates over every window of a
    quarter of the run (at least 8 on-schedule I/Os) leaves out a step that was not.
    """
    done = list(itertools.accumulate(io.size for io in ios))
    kept = on_schedule(ios)
    if len(kept) < 2:
        raise AssertionError(f"{len(kept)} of {len(ios)} completions on the device's schedule")
    xs = [float(done[i]) for i in kept]
    sums = _prefix_sums(xs, _idle_steps(xs, [float(ios[i].time_ms) for i in kept])[0])
    window = min(len(kept), max(8, len(kept) // 4))
    slopes = [_line(sums, i, i + window)[0] for i in range(len(kept) - window + 1)]
    return 1000 / statistics.median(slopes)


@dataclass(frozen=True)
class CacheKnee:
    cache_bytes: int  # bytes written before the first I/O at the slow rate
    burst: list[CompletedIo]
    sustained: list[CompletedIo]


def find_cache_knee(ios: Sequence[CompletedIo], start_offset: int = 0) -> CacheKnee:
    """Where a sequential depth-1 write slows down, from fio's completion times alone.

    Completion time against bytes written is two straight lines, steep before the knee; the
    split that fits two least-squares lines best is the knee, and the bytes where the two
    lines cross are the cache size (finer than one I/O). Only stamps on the device's schedule
    are fitted (`on_schedule`): the bunch of completions after an absorbed host stall would
    look like a stretch at the burst rate, and a late stamp like a slow I/O. Idle steps of the
    schedule are taken out (`_idle_steps`); a cache that drains while the device is idle
    bursts again after one, so the slow line ends at the first step after the knee (if at
    least 8 points are left to it).
    """
    kept = [ios[i] for i in on_schedule(ios)]
    xs = [float(io.offset + io.size - start_offset) for io in kept]
    ys, steps = _idle_steps(xs, [float(io.time_ms) for io in kept])
    sums = _prefix_sums(xs, ys)
    n = len(kept)
    while True:
        best = min(range(3, n - 2), key=lambda k: _sse(sums, 0, k) + _sse(sums, k, n))
        end = next((step for step in steps if best + 8 <= step < n), n)
        if end == n:
            break
        n = end
    slope1, intercept1 = _line(sums, 0, best)
    slope2, intercept2 = _line(sums, best, n)
    if slope2 <= slope1:
        raise AssertionError(f"no slowdown in {n} I/Os: {slope1} then {slope2} ms per byte")
    crossing = (intercept1 - intercept2) / (slope2 - slope1)
    first_slow = kept[best].offset
    return CacheKnee(
        round(crossing),
        [io for io in ios if io.offset < first_slow],
        [io for io in ios if io.offset >= first_slow],
    )


_Sums = list[tuple[float, float, float, float, float]]  # prefix sums of x, y, xx, xy, yy


def _prefix_sums(xs: Sequence[float], ys: Sequence[float]) -> _Sums:
    sums = [(0.0, 0.0, 0.0, 0.0, 0.0)]
    for x, y in zip(xs, ys, strict=True):
        sx, sy, sxx, sxy, syy = sums[-1]
        sums.append((sx + x, sy + y, sxx + x * x, sxy + x * y, syy + y * y))
    return sums


def _moments(sums: _Sums, lo: int, hi: int) -> tuple[int, float, float, float, float, float]:
    count = hi - lo
    sx, sy, sxx, sxy, syy = (b - a for a, b in zip(sums[lo], sums[hi], strict=True))
    return count, sx, sy, sxx - sx * sx / count, sxy - sx * sy / count, syy - sy * sy / count


def _sse(sums: _Sums, lo: int, hi: int) -> float:
    """Squared residuals of the least-squares line through points lo..hi-1."""
    _, _, _, cxx, cxy, cyy = _moments(sums, lo, hi)
    return cyy - cxy * cxy / cxx if cxx > 0 else cyy


def _line(sums: _Sums, lo: int, hi: int) -> tuple[float, float]:
    count, sx, sy, cxx, cxy, _ = _moments(sums, lo, hi)
    slope = cxy / cxx
    return slope, (sy - slope * sx) / count


def time_shift_ms(ios: Sequence[CompletedIo], rate_bytes_per_ms: float, start: int = 0) -> float:
    """Where a run of a sequential write stream (begun at offset `start`) sits in time: the
    offset of the device's schedule, completion time less the time the stream's bytes up to
    an I/O take at `rate`. Stamps are never early, only late (`on_schedule`), so the schedule
    is the least of these; the median of those within SCHEDULE_SLACK_MS of it evens out fio's
    1 ms stamps. Two runs of one stream differ by the stalls between them (GC pauses),
    whatever late stamps and catch-up bunches of a busy host do."""
    shifts = [io.time_ms - (io.offset + io.size - start) / rate_bytes_per_ms for io in ios]
    least = min(shifts)
    return statistics.median(shift for shift in shifts if shift <= least + SCHEDULE_SLACK_MS)
