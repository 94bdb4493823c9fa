"""Do flashmark's workloads rank seed 002's eight cards the way their real install times did?

Each card becomes an emulated device (tests.emulation.throttle) capped at the 4K random IOPS and
sequential MB/s that seed 002 published for it (IOPS rounded down to a multiple of 10: the
throttle works in 100 ms slices). `flashmark workload all` runs inside each card's throttle;
the times are printed beside the seed's measured times, with Spearman's rank correlation.

    sudo python benchmarks/workload_ranking.py [--scale 0.02]

Needs root, loop devices and the block throttle. Prints; never asserts.
What the emulation cannot show (docs/workloads.md, "Emulated devices"): journal commits by
the kernel's jbd2 thread and background writeback are not throttled, so only the writes the
process issues itself (file data forced by sync_file_range/fsync, and its cache flushes) pay
the card's IOPS; on a real card everything does.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from flashmark.units import MB, MiB
from tests.emulation.throttle import DeviceCaps, EmulatedDevice, unavailable_reason


@dataclass(frozen=True)
class SeedCard:
    """One column of seed 002's results table."""

    name: str
    read_iops_4k: int
    write_iops_4k: int
    read_mb_s: int
    write_mb_s: int
    boot_s: float
    install_s: float
    removal_s: float
    reinstall_s: float

    def caps(self) -> DeviceCaps:
        return DeviceCaps(
            self.name,
            read_iops=self.read_iops_4k // 10 * 10,
            write_iops=self.write_iops_4k // 10 * 10,
            read_bps=self.read_mb_s * MB,
            write_bps=self.write_mb_s * MB,
        )


# Seed 002, "Results overview": 4k read/write IOPS, read/write MB/s, boot, 1st install,
# DE removal, 2nd install (seconds).
SEED_002_CARDS = (
    SeedCard("Average card", 1926, 33, 43, 10, 26.7, 1070, 149, 470),
    SeedCard("SanDisk Ultra", 2139, 133, 45, 8, 20.9, 430, 68, 157),
    SeedCard("SanDisk Industrial", 1853, 762, 66, 29, 20.7, 253, 49, 113),
    SeedCard("Extreme Plus", 2344, 770, 66, 62, 13.4, 216, 33, 76),
    SeedCard("Ultra A1", 2867, 787, 66, 18, 14.2, 207, 31, 75),
    SeedCard("Extreme A1", 3201, 1480, 66, 59, 16.2, 161, 28, 57),
    SeedCard("Extreme Pro A2", 1766, 732, 65, 50, 17.0, 190, 36, 75),
    SeedCard("eMMC", 5083, 1943, 128, 32, 15.5, 178, 27, 65),
)

# (our workload, the seed's column it stands for)
PAIRS = (
    ("pkg-install", "install_s", "1st install"),
    ("pkg-remove", "removal_s", "DE removal"),
    ("pkg-reinstall", "reinstall_s", "2nd install"),
    ("cold-read", "boot_s", "boot"),
)


def ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            result[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return result


def spearman(x: list[float], y: list[float]) -> float:
    """Pearson correlation of the ranks (handles ties)."""
    rx, ry = ranks(x), ranks(y)
    mean_x, mean_y = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mean_x) * (b - mean_y) for a, b in zip(rx, ry, strict=True))
    var_x = sum((a - mean_x) ** 2 for a in rx)
    var_y = sum((b - mean_y) ** 2 for b in ry)
    return float(cov / (var_x * var_y) ** 0.5)


def run_card(card: SeedCard, scale: float) -> dict[str, Any]:
    with EmulatedDevice(card.caps(), size_bytes=768 * MiB) as device:
        argv = [sys.executable, "-m", "flashmark", "workload", "all", str(device.target),
                "--scale", str(scale), "--json"]  # fmt: skip
        done = subprocess.run(device.command(argv), capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"{card.name}: flashmark failed: {done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    return {entry["name"]: entry for entry in document["workloads"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.02)
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason is not None:
        raise SystemExit(f"cannot emulate devices here: {reason}")
    started = time.monotonic()
    results: dict[str, dict[str, Any]] = {}
    for card in SEED_002_CARDS:
        card_started = time.monotonic()
        results[card.name] = run_card(card, args.scale)
        print(f"{card.name}: {time.monotonic() - card_started:.0f} s", file=sys.stderr)

    print(f"flashmark workloads at --scale {args.scale} on emulated copies of seed 002's cards")
    print("caps: 4K read/write IOPS (rounded down to x10), read/write MB/s from seed 002\n")
    header = f"{'card':<19} {'caps r/w IOPS, MB/s':<22}"
    for workload, _, seed_label in PAIRS:
        header += f" {workload:>13} {seed_label:>11}"
    print(header)
    for card in SEED_002_CARDS:
        caps = card.caps()
        cap_text = f"{caps.read_iops}/{caps.write_iops}, {card.read_mb_s}/{card.write_mb_s}"
        row = f"{card.name:<19} {cap_text:<22}"
        for workload, field, _ in PAIRS:
            seconds = results[card.name][workload]["seconds"]
            shown = "skipped" if seconds is None else f"{seconds:.2f} s"
            row += f" {shown:>13} {getattr(card, field):>9} s"
        print(row)
    print()
    for workload, field, seed_label in PAIRS:
        ours = [results[c.name][workload]["seconds"] for c in SEED_002_CARDS]
        if any(value is None for value in ours):
            print(f"Spearman {workload} vs seed {seed_label}: skipped")
            continue
        seed = [float(getattr(c, field)) for c in SEED_002_CARDS]
        print(f"Spearman {workload:<13} vs seed {seed_label:<11}: {spearman(ours, seed):+.2f}")
    write_iops = [float(c.write_iops_4k) for c in SEED_002_CARDS]
    write_mb = [float(c.write_mb_s) for c in SEED_002_CARDS]
    installs = [float(c.install_s) for c in SEED_002_CARDS]
    print(
        f"(for reference, seed 002's own 1st install vs 4K write IOPS: "
        f"{spearman(installs, write_iops):+.2f}; vs sequential write MB/s: "
        f"{spearman(installs, write_mb):+.2f})"
    )
    print(f"\nwall time {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
