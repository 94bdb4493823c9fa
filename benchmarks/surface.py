"""`flashmark surface` against the truth of emulated cards: rates, cache, integrity, time.

    sudo python3 benchmarks/surface.py [--repeat N] [--quick]

Each card (nbdkit + nbdfuse + a direct-I/O loop device, docs/emulated-flash.md) is scanned N
times (made fresh with `reset()` in between: empty cache, counters zero): the cards with a
cache through the library call the command makes (flashmark.surface.run.scan_surface, so the
card's clock can be read between the passes), the fakes with `flashmark surface DEVICE
--destructive --yes --json --no-save`. The table gives truth, measured min/median/max, error
min/median/max and the median wall time of one scan. The time row compares the scan's wall
time (planning included; the command's start-up adds ~0.3 s) with the time the model's rates
allow for writing and reading every byte. Integrity rows count sectors: missed (in the truth,
not reported) and false (reported, not in the truth), against tests/surface/truth.py.
A loaded host sometimes delivers a request to the emulated card more than 50 ms late; the card
then idles (FlashStats.idle_ns, a row of its own), which lowers the measured averages against
the pure truth. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' truth helpers

from benchmarks.truth_rows import Row
from flashmark.surface.result import SurfaceResult
from flashmark.surface.run import SurfaceRequest, prepare_surface, scan_surface
from tests.emulation.flash.device import EmulatedFlash, unavailable_reason
from tests.emulation.flash.model import BadRange, FakeMode, FlashModel
from tests.surface.truth import expected_ranges

MB = 1_000_000
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
BLOCK = MiB  # the command's default request size
SECTOR = 512

CACHED = FlashModel(
    GiB, name="1 GiB card, 64 MiB cache", read_bps=80 * MB, cache_bytes=64 * MiB,
    cache_write_bps=40 * MB, write_bps=20 * MB,
)  # fmt: skip
SMALL_CACHED = FlashModel(
    256 * MiB, name="256 MiB card, 24 MiB cache", read_bps=60 * MB, cache_bytes=24 * MiB,
    cache_write_bps=60 * MB, write_bps=12 * MB,
)  # fmt: skip
BAD = (BadRange(100 * MiB + 1536, 1024), BadRange(700 * MiB, 64 * KiB), BadRange(GiB - 512, 512))
FAKES = (
    FlashModel(GiB, name="fake 1 GiB on 256 MiB, wrap, bad blocks", real_bytes=256 * MiB,
               bad_ranges=BAD),
    FlashModel(GiB, name="fake 1 GiB on 300 MiB + 512, zeros", real_bytes=300 * MiB + 512,
               fake=FakeMode.ZEROS),
    FlashModel(GiB, name="fake 1 GiB on 128 MiB, erased", real_bytes=128 * MiB,
               fake=FakeMode.ERASED),
    FlashModel(GiB, name="genuine 1 GiB, bad blocks", bad_ranges=BAD),
)  # fmt: skip


def scan(device: EmulatedFlash) -> tuple[dict[str, Any], float]:
    argv = [sys.executable, "-m", "flashmark", "surface", device.path, "--destructive", "--yes",
            "--json", "--no-save"]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"flashmark surface failed ({done.returncode}): {done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document, took


def allowed_seconds(model: FlashModel) -> float:
    """Writing every byte (cache first) and reading it back, at the model's rates."""
    size = model.claimed_bytes
    burst = model.burst_write_bps_at(BLOCK) or float("inf")
    sustained = model.sustained_write_bps_at(BLOCK) or float("inf")
    cached = min(size, model.cache_bytes)
    write = cached / burst + (size - cached) / sustained
    read = size / (model.read_bps_at(BLOCK) or float("inf"))
    return write + read


def idle_ns(device: EmulatedFlash) -> int:
    """The card's idle time so far. The counters are read under a seqlock the engine (another
    process) holds while it publishes; a descheduled engine can hold it longer than the
    reader spins (RuntimeError), so read again a moment later."""
    for _ in range(100):
        try:
            return device.stats().idle_ns
        except RuntimeError:
            time.sleep(0.01)
    return device.stats().idle_ns


def scan_in_process(device: EmulatedFlash) -> tuple[SurfaceResult, float, dict[str, float]]:
    """The library call (what the command runs), with the card's idle time read at each phase
    change: (result, seconds, idle ms per phase)."""
    started = time.monotonic()
    job = prepare_surface(SurfaceRequest(device.path, destructive=True, block_bytes=BLOCK))
    marks: dict[str, int] = {}

    def progress(phase: str, done: int, total: int) -> None:
        if phase not in marks:
            marks[phase] = idle_ns(device)

    result = scan_surface(job, progress=progress)
    took = time.monotonic() - started
    end = idle_ns(device)
    idle = {
        "write": (marks["read"] - marks["write"]) / 1e6,
        "read": (marks.get("retry", end) - marks["read"]) / 1e6,
    }
    return result, took, idle


def rate_rows(model: FlashModel, repeat: int) -> list[Row]:
    """Figures against the pure truth, and against the truth with the card's own idle time
    (requests a loaded host delivered late) added to each pass."""
    results: list[SurfaceResult] = []
    seconds: list[float] = []
    idles: list[dict[str, float]] = []
    with EmulatedFlash(model) as device:
        for _ in range(repeat):
            device.reset()
            result, took, idle = scan_in_process(device)
            results.append(result)
            seconds.append(took)
            idles.append(idle)
    size = model.claimed_bytes
    # The first request of each pass is its ramp, not timed: the truth of the timed part.
    timed = size - BLOCK
    read_s = timed / (model.read_bps_at(BLOCK) or 1)
    write_s = allowed_seconds(model) - size / (model.read_bps_at(BLOCK) or 1)
    write_s -= BLOCK / (model.burst_write_bps_at(BLOCK) or 1)
    name = model.name

    def row(parameter: str, unit: str, scale: float, truth: float | None, key: Any) -> Row:
        return Row(name, parameter, unit, scale, truth, [key(r) for r in results], seconds)

    def with_idle(pass_name: str, busy_s: float) -> Row:
        truths = [timed / (busy_s + idle[pass_name] / 1e3) for idle in idles]
        measured = [
            getattr(r, pass_name).bw_bytes / truth for r, truth in zip(results, truths, strict=True)
        ]
        return Row(name, f"surface average {pass_name} / (truth with the card's idle time)",
                   "x", 1, 1.0, measured, seconds)  # fmt: skip

    return [
        row("write cache size", "MiB", MiB, model.cache_bytes, lambda r: r.cache.bytes or 0),
        row("burst write", "MB/s", MB, model.burst_write_bps_at(BLOCK),
            lambda r: r.cache.burst_bw_bytes or 0),
        row("sustained write", "MB/s", MB, model.sustained_write_bps_at(BLOCK),
            lambda r: r.cache.sustained_bw_bytes),
        row("surface average write", "MB/s", MB, timed / write_s, lambda r: r.write.bw_bytes),
        with_idle("write", write_s),
        row("surface average read", "MB/s", MB, model.read_bps_at(BLOCK),
            lambda r: r.read.bw_bytes),
        with_idle("read", read_s),
        Row(name, "scan time (write + verify) / time the rates allow", "x", 1, 1.0,
            [s / allowed_seconds(model) for s in seconds], seconds),
        row("sectors verified", "sectors", 1, size // SECTOR,
            lambda r: r.integrity.verified_bytes // SECTOR),
        Row(name, "card idle in the write / read pass (requests delivered > 50 ms late)", "ms",
            1, None, [i["write"] + i["read"] for i in idles], seconds),
    ]  # fmt: skip


def _sectors(ranges: list[tuple[int, int, str, int | None]]) -> dict[int, tuple[str, int | None]]:
    found = {}
    for start, length, kind, source in ranges:
        for at in range(start, start + length, SECTOR):
            found[at] = (kind, None if source is None else source + at - start)
    return found


def integrity_rows(model: FlashModel, repeat: int) -> list[Row]:
    truth = _sectors([(r.start, r.length, r.kind, r.source) for r in expected_ranges(model)])
    missed: list[float] = []
    false: list[float] = []
    mapped: list[float] = []
    seconds: list[float] = []
    with EmulatedFlash(model) as device:
        for _ in range(repeat):
            device.reset()
            document, took = scan(device)
            seconds.append(took)
            reported = _sectors(
                [(r["start"], r["length"], r["kind"], r.get("source"))
                 for r in document["integrity"]["ranges"]]
            )  # fmt: skip
            missed.append(sum(1 for at, what in truth.items() if reported.get(at) != what))
            false.append(sum(1 for at in reported if at not in truth))
            mapped.append(len(reported))
    name = model.name
    return [
        Row(name, "sectors not as written (aliased, dropped, unreadable)", "sectors", 1,
            len(truth), mapped, seconds),
        Row(name, "missed or misreported", "sectors", 1, 0, missed, seconds),
        Row(name, "false (reported, not in the truth)", "sectors", 1, 0, false, seconds),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="scans per card")
    parser.add_argument("--quick", action="store_true", help="only the 256 MiB card and one fake")
    parser.add_argument("--only", choices=("rates", "integrity"), help="one half of the table")
    options = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot run: {reason}")
    rows: list[Row] = []
    cached = (SMALL_CACHED,) if options.quick else (SMALL_CACHED, CACHED)
    for model in cached if options.only != "integrity" else ():
        rows += rate_rows(model, options.repeat)
    for model in (FAKES[:1] if options.quick else FAKES) if options.only != "rates" else ():
        rows += integrity_rows(model, options.repeat)
    print(f"min / median / max of {options.repeat} scans; block {BLOCK // KiB} KiB; MB = 10^6\n")
    print("| card | parameter | unit | truth | measured | error | time per scan |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(row.render())


if __name__ == "__main__":
    main()
