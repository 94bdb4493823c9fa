"""`flashmark run --profile sustained` against the truth of emulated cards with write caches.

    sudo python3 benchmarks/sustained.py [--repeat N] [--where device,folder]

Each card (nbdkit + nbdfuse + a direct-I/O loop device, docs/emulated-flash.md) is measured N
times with `flashmark run DEVICE --destructive --yes --no-save --profile sustained --size S
--json`, made fresh with `reset()` in between (empty cache). The cards marked for it are
measured the same way on a folder of a fresh ext4 on the card (`flashmark run FOLDER --no-save
--profile sustained ...`, the card reset after mkfs): rows "(folder, ext4)", whose time
includes the rest before the test. The table gives truth, measured
min/median/max, error min/median/max and the median wall time of one run, for the cache and
both rates (flashmark.surface.cache), the figure the speed classes grade (the slowest 4 MiB
sub-unit of 512 KiB writes after the cache, flashmark.bench.speed_class_rate), the longest write
busy, and the U1/U3 verdicts against the ones the model's truth calls for. One card has a cache
larger than the test writes: its row checks the "cache not exceeded" flag and that no class
passes on what is the burst. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks.truth_rows

from benchmarks.truth_rows import Row
from tests.emulation.flash.device import EmulatedFlash, unavailable_reason
from tests.emulation.flash.model import FlashModel

MB = 1_000_000
KiB, MiB = 1 << 10, 1 << 20
RU = 512 * KiB  # the sustained-write test's request size
SUB_UNIT = 4 * MiB


@dataclass(frozen=True)
class Card:
    model: FlashModel
    size: str  # --size
    verdicts: dict[str, str]  # what the truth calls for
    exceeded: bool  # whether the test can leave the cache
    on_folder: bool = False  # measured on a folder of an ext4 on the card too


CARDS = (
    Card(FlashModel(256 * MiB, name="256 MiB, 48 MiB cache 60 -> 12 MB/s", cache_bytes=48 * MiB,
                    cache_write_bps=60 * MB, write_bps=12 * MB),
         "112M", {"U1": "pass", "U3": "fail"}, True, on_folder=True),
    # The cache that a prepared folder hid: a preparation that wrote the area filled it.
    Card(FlashModel(512 * MiB, name="512 MiB, 128 MiB cache 30 -> 6 MB/s", cache_bytes=128 * MiB,
                    cache_write_bps=30 * MB, write_bps=6 * MB),
         "256M", {"U1": "fail", "U3": "fail"}, True, on_folder=True),
    Card(FlashModel(1 << 30, name="1 GiB, 64 MiB cache 40 -> 20 MB/s", cache_bytes=64 * MiB,
                    cache_write_bps=40 * MB, write_bps=20 * MB),
         "256M", {"U1": "pass", "U3": "fail"}, True),
    # 40 MB/s after the cache with an 80 ms pause every 16 MiB: 33.6 MB/s on average (above
    # U3's 30), but the sub-unit holding a pause runs at 22.7 MB/s: U3 fails as specified.
    Card(FlashModel(256 * MiB, name="256 MiB, 16 MiB cache 80 -> 40 MB/s, 80 ms GC / 16 MiB",
                    cache_bytes=16 * MiB, cache_write_bps=80 * MB, write_bps=40 * MB,
                    gc_pause_ns=80_000_000, gc_every_bytes=16 * MiB),
         "160M", {"U1": "pass", "U3": "fail"}, True),
    # A 200 MiB cache and a 112 MiB test: never left; a pass would rest on the burst.
    Card(FlashModel(256 * MiB, name="256 MiB, 200 MiB cache 60 -> 12 MB/s (test 112 MiB)",
                    cache_bytes=200 * MiB, cache_write_bps=60 * MB, write_bps=12 * MB),
         "112M", {"U1": "uncertain", "U3": "uncertain"}, False),
)  # fmt: skip


def run(target: str, size: str, *, folder: bool) -> tuple[dict[str, Any], float]:
    argv = [sys.executable, "-m", "flashmark", "run", target, "--no-save", "--profile",
            "sustained", "--size", size, "--json"]  # fmt: skip
    if not folder:
        argv += ["--destructive", "--yes"]
    started = time.monotonic()
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL
    )
    took = time.monotonic() - started
    if done.returncode not in (0, 8):  # 8: a grade not met, not a failure of the run
        raise SystemExit(f"flashmark run failed ({done.returncode}): {done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document, took


def slowest_sub_unit_truth(model: FlashModel) -> float:
    """The slowest whole 4 MiB sub-unit after the cache: one GC pause in it if any fall there."""
    busy_ns = model.write_ns(SUB_UNIT, cached=0)
    if model.gc_every_bytes and model.gc_pause_ns:
        busy_ns += model.gc_pause_ns * max(1, SUB_UNIT // model.gc_every_bytes)
    return SUB_UNIT / (busy_ns / 1e9)


def longest_busy_truth(model: FlashModel) -> float:
    """ms: one 512 KiB write after the cache, plus a GC pause if the card has them."""
    return (model.write_ns(RU, cached=0) + model.gc_pause_ns) / 1e6


def idle_ns(device: EmulatedFlash) -> int:
    """The card's idle time since its reset: requests the loaded host delivered more than
    50 ms late (FlashStats.idle_ns; read again when the engine holds its seqlock)."""
    for _ in range(100):
        try:
            return device.stats().idle_ns
        except RuntimeError:
            time.sleep(0.01)
    return device.stats().idle_ns


@contextlib.contextmanager
def ext4_folder(device: EmulatedFlash) -> Iterator[str]:
    """A fresh ext4 on the card, its inode tables and journal written by mkfs (not later in
    the background, ext4(5) "init_itable"), mounted on a temporary folder."""
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device.path],
        check=True, timeout=120, capture_output=True,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="flashmark-bench-") as mount:
        subprocess.run(["mount", device.path, mount], check=True, timeout=60)
        try:
            yield mount
        finally:
            subprocess.run(["umount", mount], check=True, timeout=60)


def rows_for(card: Card, repeat: int, *, folder: bool) -> list[Row]:
    documents: list[dict[str, Any]] = []
    seconds: list[float] = []
    idle_ms: list[float] = []
    with EmulatedFlash(card.model) as device:
        where = ext4_folder(device) if folder else contextlib.nullcontext(device.path)
        with where as target:
            for _ in range(repeat):
                device.reset()
                document, took = run(target, card.size, folder=folder)
                documents.append(document)
                seconds.append(took)
                idle_ms.append(idle_ns(device) / 1e6)
    model = card.model
    name = f"{model.name} (folder, ext4)" if folder else model.name

    def sustained(d: dict[str, Any]) -> dict[str, Any]:
        (test,) = d["tests"]
        found: dict[str, Any] = test["write"]["sustained"]
        return found

    def row(parameter: str, unit: str, scale: float, truth: float | None, key: Any) -> Row:
        # A figure the run did not find (no cache found) counts as 0: -100% in the table.
        values = []
        for d in documents:
            try:
                values.append(float(key(sustained(d)) or 0.0))
            except (KeyError, TypeError):
                values.append(0.0)
        return Row(name, parameter, unit, scale, truth, values, seconds)

    def verdicts(grade: str) -> list[Row]:
        expected = card.verdicts[grade]
        found = [d["grades"][grade]["verdict"] for d in documents]
        right = [1.0 if verdict == expected else 0.0 for verdict in found]
        # pass for a card the truth fails, or fail for one it passes: never acceptable;
        # "uncertain" is (the interval of a minimum, flashmark.bench.speed_class_rate).
        opposite = {"pass": "fail", "fail": "pass"}.get(expected)
        wrong = [1.0 if verdict == opposite else 0.0 for verdict in found]
        return [
            Row(name, f"{grade} verdict is {expected} (1 = every run)", "", 1, 1.0, right,
                seconds),
            Row(name, f"{grade} verdict on the wrong side ({opposite or '-'}) (1 = a run)", "",
                1, 0.0, wrong, seconds),
        ]  # fmt: skip

    rows = [
        row("cache exceeded (1 = yes)", "", 1, 1.0 if card.exceeded else None,
            lambda s: 1.0 if s["cache_exceeded"] else 0.0),
    ]  # fmt: skip
    if card.exceeded:
        rows += [
            row("write cache size", "MiB", MiB, model.cache_bytes, lambda s: s["cache_bytes"]),
            row("burst write, 512 KiB", "MB/s", MB, model.burst_write_bps_at(RU),
                lambda s: s["burst_bw_bytes"]),
            row("sustained write, 512 KiB (after the cache, as a whole)", "MB/s", MB,
                model.sustained_write_bps_at(RU), lambda s: s["sustained_bw_bytes"]),
            row("slowest 4 MiB sub-unit after the cache (graded)", "MB/s", MB,
                slowest_sub_unit_truth(model), lambda s: s["sub_units"]["min_bw_bytes"]),
            row("longest write busy", "ms", 1, longest_busy_truth(model),
                lambda s: s["sub_units"]["max_busy_ms"]),
        ]  # fmt: skip
    else:
        rows.append(row("cache at least (written)", "MiB", MiB, None, lambda s: s["written_bytes"]))
    rows += [*verdicts("U1"), *verdicts("U3")]
    rows.append(Row(name, "card idle in the run (requests delivered > 50 ms late)", "ms", 1,
                    None, idle_ms, seconds))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per card")
    parser.add_argument(
        "--where", default="device,folder", help="device, folder or both (comma-separated)"
    )
    options = parser.parse_args()
    where = set(options.where.split(","))
    if not where <= {"device", "folder"}:
        raise SystemExit("--where takes device, folder or device,folder")
    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot run: {reason}")
    rows: list[Row] = []
    for card in CARDS:
        if "device" in where:
            rows += rows_for(card, options.repeat, folder=False)
        if "folder" in where and card.on_folder:
            rows += rows_for(card, options.repeat, folder=True)
    print(f"min / median / max of {options.repeat} runs; MB = 10^6\n")
    print("| card | parameter | unit | truth | measured | error | time per run |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(row.render())


if __name__ == "__main__":
    main()
