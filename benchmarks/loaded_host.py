"""A card exactly at the A1 line, measured on a host kept busy by CPU hogs: never graded "fail".

    sudo python3 -m benchmarks.loaded_host [--runs N] [--hogs N] [--profile quick]
                                                             (from the repository root)

The emulated card (a loop device with ext4, capped by the kernel block throttle,
tests.emulation.throttle) does 1920 random 4K reads/s, 500 random 4K writes/s and writes 10 MB/s:
A1 asks for >= 1500 read IOPS, >= 500 write IOPS and >= 10 MB/s (SD Association application
performance class), so its write checks sit exactly on their thresholds. The quick profile once
graded such a card "A1 fail" on a busy host. The card's truth is on the line, so the
right answers are "pass" (its write figures measured at or above the line) or "uncertain" (the
interval contains the line); "fail" says the card is below A1, which it is not.

The script starts the CPU hogs itself (busy loops, one process each, default two per CPU) and
always stops them, then runs `flashmark run --profile P --json --no-save` N times and prints per
run the A1 verdict, its reason and each check's value and 95% interval. Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from tests.emulation.throttle import DeviceCaps, EmulatedDevice, unavailable_reason

EXACT_A1 = DeviceCaps("exact A1", 1920, 500, 40_000_000, 10_000_000)
_HOG = "while True:\n    pass\n"


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[list[int]]:
    """`count` busy-loop processes for the time of the block; each is killed and reaped by the
    pid this started, whatever ends the block."""
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            hogs.append(subprocess.Popen([sys.executable, "-c", _HOG]))
        yield [hog.pid for hog in hogs]
    finally:
        for hog in hogs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(hog.pid, signal.SIGKILL)
        for hog in hogs:
            hog.wait()


def run_once(device: EmulatedDevice, profile: str) -> tuple[dict[str, Any], float]:
    argv = [sys.executable, "-m", "flashmark", "run", str(device.mount_point)]
    argv += ["--profile", profile, "--json", "--no-save"]
    started = time.monotonic()
    done = subprocess.run(device.command(argv), capture_output=True, text=True, timeout=1800)
    if done.returncode not in (0, 8):
        raise SystemExit(f"flashmark failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout), time.monotonic() - started


def check_cells(grade: dict[str, Any]) -> str:
    cells = []
    for check in grade["checks"]:
        value, interval = check.get("value"), check.get("interval")
        if value is None:
            cells.append(f"{check['test']}: not measured")
            continue
        around = f" [{interval[0]:,.1f}..{interval[1]:,.1f}]" if interval else ""
        cells.append(f"{check['test']} {value:,.1f}{around} {check.get('verdict')}")
    return "; ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hogs", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--profile", default="quick")
    args = parser.parse_args()
    if (reason := unavailable_reason()) is not None:
        raise SystemExit(f"cannot emulate devices here: {reason}")
    rows: list[str] = []
    verdicts: list[str] = []
    with EmulatedDevice(EXACT_A1, size_bytes=512 * 2**20) as device, cpu_hogs(args.hogs):
        load = os.getloadavg()[0]
        for number in range(1, args.runs + 1):
            document, wall = run_once(device, args.profile)
            grade = document["grades"]["A1"]
            verdict = grade.get("verdict") or ("pass" if grade["pass"] else "fail")
            verdicts.append(verdict)
            rows.append(
                f"| {number} | {verdict} | {wall:.1f} s | {check_cells(grade)} | "
                f"{grade.get('verdict_reason') or ''} |"
            )
            print(f"# run {number}: A1 {verdict} ({wall:.1f} s)", file=sys.stderr, flush=True)
        load = max(load, os.getloadavg()[0])
    print(
        f"exact-A1 card (1920/500 IOPS 4K, 10 MB/s), profile {args.profile}, {args.hogs} CPU "
        f"hogs on {os.cpu_count()} CPUs (1-min load average up to {load:.1f})\n"
    )
    print("| run | A1 verdict | wall | checks: value [95% interval] verdict | reason |")
    print("| ---: | --- | ---: | --- | --- |")
    print("\n".join(rows))
    fails = verdicts.count("fail")
    print(
        f"\n{len(verdicts)} runs: {verdicts.count('pass')} pass, "
        f"{verdicts.count('uncertain')} uncertain, {fails} fail"
        + ("" if not fails else "  <-- WRONG: the card is on the line, not below it")
    )


if __name__ == "__main__":
    main()
