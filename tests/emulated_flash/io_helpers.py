"""Reading and writing an emulated card directly, and reading fio's per-I/O logs."""

from __future__ import annotations

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


def rate_bps(ios: Sequence[CompletedIo]) -> float:
    """Bytes per second of a run of back-to-back I/Os, robust to a busy host.

    fio stamps a completion when it reaps it, so one stamp can be late by tens of ms while the
    device kept its pace; and a host stall longer than the model's absorb_ns makes the device
    idle once. Either would shift a rate taken from the two end points by a few percent. The
    median of the rates over every window of a quarter of the run (at least 8 I/Os, so fio's
    1 ms stamps cost little) leaves such single events out.
    """
    window = max(8, len(ios) // 4)
    done = [0]
    for io in ios[1:]:
        done.append(done[-1] + io.size)
    rates = [
        (done[i + window] - done[i]) / (ios[i + window].time_ms - ios[i].time_ms)
        for i in range(len(ios) - window)
        if ios[i + window].time_ms > ios[i].time_ms
    ]
    return statistics.median(rates) * 1000


@dataclass(frozen=True)
class CacheKnee:
    cache_bytes: int  # bytes written before the first I/O at the slow rate
    burst: list[CompletedIo]
    sustained: list[CompletedIo]


def find_cache_knee(ios: Sequence[CompletedIo], start_offset: int = 0) -> CacheKnee:
    """Where a sequential depth-1 write slows down, from fio's completion times alone.

    Completion time against bytes written is two straight lines, steep before the knee; the
    split that fits two least-squares lines best is the knee, and the bytes where the two
    lines cross are the cache size (finer than one I/O). Completion times, unlike single
    latencies, stay on the device's schedule when a busy host delays a stretch of I/Os (the
    device catches up), so a slow stretch does not end the cache early.
    """
    xs = [float(io.offset + io.size - start_offset) for io in ios]
    ys = [float(io.time_ms) for io in ios]
    sums = _prefix_sums(xs, ys)
    n = len(ios)
    best = min(range(3, n - 2), key=lambda k: _sse(sums, 0, k) + _sse(sums, k, n))
    slope1, intercept1 = _line(sums, 0, best)
    slope2, intercept2 = _line(sums, best, n)
    if slope2 <= slope1:
        raise AssertionError(f"no slowdown in {n} I/Os: {slope1} then {slope2} ms per byte")
    crossing = (intercept1 - intercept2) / (slope2 - slope1)
    return CacheKnee(round(crossing), list(ios[:best]), list(ios[best:]))


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
    """Where a run of a sequential write stream (begun at offset `start`) sits in time,
    robustly: the median over its I/Os of completion time less the time the stream's bytes up
    to it take at `rate`. Two runs of one stream differ by the stalls between them (GC
    pauses), whatever single late stamps of a busy host do."""
    return statistics.median(
        io.time_ms - (io.offset + io.size - start) / rate_bytes_per_ms for io in ios
    )
