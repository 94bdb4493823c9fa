"""Emulated flash against its own truth: how exactly fio sees what the model says.

    sudo python3 benchmarks/emulated_flash.py [--repeat N]

For each parameter of a few emulated cards (nbdkit + nbdfuse + a direct-I/O loop device, see
docs/emulated-flash.md) it runs plain fio N times on the same device, made fresh in between
with `reset()`, and prints truth, measured min/median/max, error min/median/max and the median
time of one repetition. Also the cost of creating and removing a device, and the ceiling of the
stack (a model with no limits). Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' fio helpers

from tests.emulation.flash.device import EmulatedFlash, unavailable_reason
from tests.emulation.flash.model import FlashModel
from tests.emulation.io_helpers import (
    find_cache_knee,
    fio_io_log,
    fio_json,
    rate_bps,
    time_shift_ms,
)

MB = 1_000_000
KiB = 1 << 10
MiB = 1 << 20

READER = FlashModel(256 * MiB, read_bps=40 * MB, read_latency_ns=500_000 - 102_400)
CACHED = FlashModel(256 * MiB, cache_bytes=24 * MiB, cache_write_bps=60 * MB, write_bps=12 * MB)
RECOVERING = FlashModel(
    256 * MiB, cache_bytes=8 * MiB, cache_write_bps=80 * MB, write_bps=20 * MB,
    cache_drain_bps=10 * MB,
)  # fmt: skip
PAUSING = FlashModel(256 * MiB, write_bps=20 * MB, gc_pause_ns=40_000_000, gc_every_bytes=4 * MiB)
UNLIMITED = FlashModel(1 << 30)


@dataclass
class Row:
    parameter: str
    unit: str
    scale: float
    truth: float | None
    measured: list[float]
    seconds: list[float]

    def render(self) -> str:
        low, mid, high = min(self.measured), statistics.median(self.measured), max(self.measured)
        values = " / ".join(f"{v / self.scale:,.3f}" for v in (low, mid, high))
        if self.truth is None:
            truth, errors = "-", "-"
        else:
            truth = f"{self.truth / self.scale:,.3f}"
            errors = " / ".join(
                f"{(v - self.truth) / self.truth * 100:+.2f}%" for v in (low, mid, high)
            )
        return (
            f"| {self.parameter} | {self.unit} | {truth} | {values} | {errors} | "
            f"{statistics.median(self.seconds):.2f} s |"
        )


def args_for(device: EmulatedFlash, rw: str, bs: int, **options: object) -> list[str]:
    args = [f"--name={rw}", f"--filename={device.path}", f"--rw={rw}", f"--bs={bs}"]
    return args + [f"--{key}={value}" for key, value in options.items()]


def repeat(
    device: EmulatedFlash, times: int, measure: Callable[[], dict[str, float]]
) -> tuple[dict[str, list[float]], list[float]]:
    results: dict[str, list[float]] = {}
    seconds = []
    for _ in range(times):
        device.reset()
        started = time.monotonic()
        for key, value in measure().items():
            results.setdefault(key, []).append(value)
        seconds.append(time.monotonic() - started)
    return results, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per parameter")
    options = parser.parse_args()
    if (reason := unavailable_reason()) is not None:
        raise SystemExit(f"cannot emulate flash here: {reason}")
    with tempfile.TemporaryDirectory(prefix="flashmark-bench-") as logs_dir:
        rows = measure(options.repeat, Path(logs_dir))
    print(f"{options.repeat} repetitions each; values are min / median / max")
    print("| parameter | unit | truth | measured | error | time per repetition |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(row.render())


def measure(n: int, logs: Path) -> list[Row]:
    """Every row of the table; fio's per-I/O logs go to `logs`."""
    rows: list[Row] = []

    setup: list[float] = []
    for _ in range(n):
        started = time.monotonic()
        with EmulatedFlash(FlashModel(64 << 30, real_bytes=64 * MiB)):
            pass
        setup.append(time.monotonic() - started)
    rows.append(Row("create + remove a 64 GiB fake (on 64 MiB)", "s", 1, None, setup, setup))

    with EmulatedFlash(READER) as device:

        def reads() -> dict[str, float]:
            seq = fio_json(args_for(device, "read", 128 * KiB, runtime=2, time_based=1))
            rnd = fio_json(args_for(device, "randread", 4096, runtime=2, time_based=1))
            return {
                "bw": seq["jobs"][0]["read"]["bw_bytes"],
                "iops": rnd["jobs"][0]["read"]["iops"],
            }

        got, seconds = repeat(device, n, reads)
        rows.append(Row("read rate, 128 KiB", "MB/s", MB, READER.read_bps_at(128 * KiB),
                        got["bw"], seconds))  # fmt: skip
        rows.append(Row("random 4K read, depth 1", "IOPS", 1, READER.read_iops_at(4096),
                        got["iops"], seconds))  # fmt: skip

    with EmulatedFlash(CACHED) as device:

        def cliff() -> dict[str, float]:
            ios = fio_io_log(
                args_for(device, "write", 256 * KiB, size=CACHED.cache_bytes + 24 * MB), logs
            )
            knee = find_cache_knee(ios)
            return {
                "cache": knee.cache_bytes,
                "burst": rate_bps(knee.burst),
                "sustained": rate_bps(knee.sustained),
            }

        got, seconds = repeat(device, n, cliff)
        rows.append(Row("write cache size", "MiB", MiB, CACHED.cache_bytes, got["cache"], seconds))
        rows.append(Row("burst write, 256 KiB", "MB/s", MB, CACHED.burst_write_bps_at(256 * KiB),
                        got["burst"], seconds))  # fmt: skip
        sustained = CACHED.sustained_write_bps_at(256 * KiB)
        rows.append(Row("sustained write, 256 KiB", "MB/s", MB, sustained, got["sustained"],
                        seconds))  # fmt: skip

    with EmulatedFlash(RECOVERING) as device:
        truths: list[float] = []

        def recovery() -> dict[str, float]:
            fio_json(args_for(device, "write", 256 * KiB, size=12 * MiB))
            time.sleep(0.5)
            ios = fio_io_log(args_for(device, "write", 64 * KiB, size=12 * MiB, offset=16 * MiB),
                             logs)  # fmt: skip
            # the burst the engine served after the idle: the room the model says the idle
            # made, more if a host stall made the device idle again before the cache was full
            truths.append(device.stats().cached_after_longest_idle_bytes)
            recovered = find_cache_knee(ios, start_offset=16 * MiB).cache_bytes
            return {"error": (recovered - truths[-1]) / truths[-1]}

        got, seconds = repeat(device, n, recovery)
        # the truth differs per repetition (the idle time is the host's): compare the errors
        rows.append(Row("cache recovered after ~0.55 s idle: error vs truth", "%", 0.01, None,
                        got["error"], seconds))  # fmt: skip

    with EmulatedFlash(PAUSING) as device:

        def pauses() -> dict[str, float]:
            every, bs = 4 * MiB, 256 * KiB
            ios = fio_io_log(args_for(device, "write", bs, size=4 * every + every // 2), logs)
            # the four slowest writes, and the shift in time of the stream across each pause
            slowest = sorted(ios, key=lambda io: io.clat_ns)[-4:]
            runs = [[io for io in ios if k * every <= io.offset < (k + 1) * every - bs]
                    for k in range(5)]  # fmt: skip
            shifts = [time_shift_ms(run, 20e6 / 1000) for run in runs]
            pauses_ms = [after - before for before, after in itertools.pairwise(shifts)]
            placed = sorted(io.offset for io in slowest) == [k * every - bs for k in range(1, 5)]
            return {
                "pause": statistics.median(pauses_ms) * 1e6,
                "total": sum(pauses_ms) * 1e6,
                "placed": float(placed),
                "normal": statistics.median(io.clat_ns for io in ios),
            }

        got, seconds = repeat(device, n, pauses)
        rows.append(Row("GC pause (median shift of the write stream)", "ms", 1e6,
                        PAUSING.gc_pause_ns, got["pause"], seconds))  # fmt: skip
        rows.append(Row("GC pauses, total of 4 (no extra stall)", "ms", 1e6,
                        4 * PAUSING.gc_pause_ns, got["total"], seconds))  # fmt: skip
        rows.append(Row("GC pauses at the 4 MiB marks (1 = all 4 slowest there)", "", 1, 1,
                        got["placed"], seconds))  # fmt: skip
        rows.append(Row("write of 256 KiB between pauses (median latency)", "ms", 1e6,
                        256 * KiB / 20e6 * 1e9, got["normal"], seconds))  # fmt: skip

    with EmulatedFlash(UNLIMITED) as device:

        def ceiling() -> dict[str, float]:
            write = fio_json(args_for(device, "write", MiB, size=512 * MiB))
            read = fio_json(args_for(device, "read", MiB, size=512 * MiB))
            rnd = fio_json(args_for(device, "randread", 4096, runtime=2, time_based=1))
            return {
                "write": write["jobs"][0]["write"]["bw_bytes"],
                "read": read["jobs"][0]["read"]["bw_bytes"],
                "iops": rnd["jobs"][0]["read"]["iops"],
            }

        got, seconds = repeat(device, n, ceiling)
        rows.append(Row("stack ceiling: sequential write 1 MiB", "MB/s", MB, None, got["write"],
                        seconds))  # fmt: skip
        rows.append(Row("stack ceiling: sequential read 1 MiB", "MB/s", MB, None, got["read"],
                        seconds))  # fmt: skip
        rows.append(Row("stack ceiling: random 4K read, depth 1", "IOPS", 1, None, got["iops"],
                        seconds))  # fmt: skip

    return rows


if __name__ == "__main__":
    main()
