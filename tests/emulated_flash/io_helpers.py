"""Reading and writing an emulated card directly, and reading fio's per-I/O logs."""

from __future__ import annotations

import json
import mmap
import os
import statistics
import subprocess
from collections.abc import Iterator, Sequence
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


def run_fio(args: Sequence[str], *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["fio", "--output-format=json", "--direct=1", "--ioengine=libaio", *args],
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def fio_json(args: Sequence[str]) -> dict[str, Any]:
    done = run_fio(args)
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
    """Bytes per second between the first and the last completion of a run of I/Os."""
    span_s = (ios[-1].time_ms - ios[0].time_ms) / 1000
    return sum(io.size for io in ios[1:]) / span_s


@dataclass(frozen=True)
class CacheKnee:
    cache_bytes: int  # bytes written before the first I/O at the slow rate
    burst: list[CompletedIo]
    sustained: list[CompletedIo]


def find_cache_knee(ios: Sequence[CompletedIo], start_offset: int = 0) -> CacheKnee:
    """Split a sequential depth-1 write at the point its latency steps up, from the data alone.

    The threshold lies between the typical latency of the first and of the last ten I/Os; the
    knee is the first I/O that starts a run of three slow ones (one stray slow I/O on a busy
    host is not the end of the cache).
    """
    fast = statistics.median(io.clat_ns for io in ios[:10])
    slow = statistics.median(io.clat_ns for io in ios[-10:])
    threshold = (fast * slow) ** 0.5
    for index in range(len(ios) - 2):
        if all(io.clat_ns > threshold for io in ios[index : index + 3]):
            return CacheKnee(ios[index].offset - start_offset, list(ios[:index]), list(ios[index:]))
    raise AssertionError(f"no knee: latencies {[io.clat_ns for io in ios]}")
