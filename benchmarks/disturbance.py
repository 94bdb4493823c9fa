"""Does flashmark know when the device was not its own? `flashmark run --profile a1 --runtime 2` on
an emulated A1 card (a throttled loop device, tests.emulation.throttle) under six conditions
(one on the host's own disk), each run counted: flagged (a test says another process used the
device), the verdicts, and false flags (a flag where no other process wrote).

    sudo python3 -m benchmarks.disturbance [--runs-scale 0.5] [--only idle-ext4 ...]

Conditions: idle ext4 and idle btrfs folders, a journald-like writer (2 kB appended every 100
ms, buffered, ~20 kB/s) on the same ext4 and beside a folder of the host's own system disk (no
throttle: whatever else the host does there counts as another process; 20 runs each); a foreign
fio writer of 1 MB/s (64 KiB direct writes) and one at 10% of the random-write test's rate (4
KiB direct random writes, 280 kB/s: 70 IOPS of the card's 700) on the same filesystem (10 runs
each). The writers run inside the card's throttle, as a second process on a real card shares
its time. Starved: runs where a test was flagged for the CPUs alone (the host is shared), and
the most fio waited for a CPU in any window. Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.emulation.throttle import DeviceCaps, EmulatedDevice

MB = 10**6
CARD = DeviceCaps("A1 card", read_iops=2000, write_iops=700, read_bps=40 * MB, write_bps=20 * MB)
# 10% of the random-write test's rate: 700 IOPS of 4 KiB is 2.87 MB/s.
TENTH_RATE = "280k"


@dataclass(frozen=True)
class Condition:
    name: str
    fstype: str
    runs: int
    writer: str | None  # None, "journald", or a fio rate for the direct writer
    foreign: bool  # another process writes at a rate that must be named


CONDITIONS = (
    Condition("idle-ext4", "ext4", 20, None, False),
    Condition("idle-btrfs", "btrfs", 20, None, False),
    Condition("journald-like 20 kB/s", "ext4", 20, "journald", False),
    Condition("system disk, journald-like 20 kB/s", "system", 20, "journald", False),
    Condition("writer 1 MB/s", "ext4", 10, "1m", True),
    Condition("writer 10% of rand-write", "ext4", 10, TENTH_RATE, True),
)

_JOURNALD = (
    "import sys, time\n"
    "with open(sys.argv[1], 'ab') as log:\n"
    "    while True:\n"
    "        log.write(b'x' * 2000); log.flush(); time.sleep(0.1)\n"
)


class SystemFolder:
    """A folder of the host's own system disk (under /var/tmp), used as an emulated card is:
    its commands run as they are, outside any throttle."""

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(dir="/var/tmp", prefix="flashmark-dist-")
        self.mount_point: Path | None = Path(self._folder.name)

    def command(self, argv: list[str]) -> list[str]:
        return argv

    def __enter__(self) -> SystemFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self._folder.cleanup()


@contextlib.contextmanager
def writer(device: EmulatedDevice | SystemFolder, kind: str | None) -> Iterator[None]:
    assert device.mount_point is not None
    if kind is None:
        yield
        return
    if kind == "journald":
        argv = [sys.executable, "-c", _JOURNALD, str(device.mount_point / "journal.log")]
    else:
        pattern, block = ("randwrite", "4k") if kind == TENTH_RATE else ("write", "64k")
        argv = [
            "fio", "--name=foreign", f"--filename={device.mount_point}/foreign.dat",
            "--size=32M", f"--rw={pattern}", f"--bs={block}", "--direct=1", f"--rate={kind}",
            "--time_based", "--runtime=3600", "--thread", "--output=/dev/null",
        ]  # fmt: skip
    # A session of its own, killed whole: fio's job threads and any child go with it.
    process = subprocess.Popen(
        device.command(argv), stdout=subprocess.DEVNULL, start_new_session=True
    )
    try:
        time.sleep(1.0)
        yield
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def one_run(device: EmulatedDevice | SystemFolder) -> dict[str, object]:
    argv = [sys.executable, "-m", "flashmark", "run", str(device.mount_point), "--profile", "a1",
            "--runtime", "2", "--size", "64M", "--json", "--no-save"]  # fmt: skip
    done = subprocess.run(device.command(argv), capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    document: dict[str, object] = json.loads(done.stdout)
    return document


def a1_verdict(document: dict[str, object]) -> str:
    grades = document.get("grades")
    if not isinstance(grades, dict):
        return "error"
    return str(grades["A1"]["verdict"])


def flags(document: dict[str, object]) -> tuple[bool, bool, bool, float]:
    """(a test flagged for another process's I/O, rand-write-4k among them, a test flagged
    for the CPUs alone, the most fio waited for a CPU in a window, %)."""
    tests = document.get("tests")
    if not isinstance(tests, list):
        return False, False, False, 0.0
    device = rand_write = cpu = False
    wait = 0.0
    for test in tests:
        disturbance = test.get("disturbance") or {}
        wait = max(wait, disturbance.get("fio_cpu_wait_pct") or 0.0)
        if disturbance.get("status") != "disturbed":
            continue
        if "another process" in disturbance.get("reason", ""):
            device = True
            rand_write = rand_write or test["name"] == "rand-write-4k"
        else:
            cpu = True
    return device, rand_write, cpu, wait


def run_condition(condition: Condition, scale: float) -> tuple[object, ...]:
    runs = max(1, round(condition.runs * scale))
    flagged = rand_write_flagged = starved = 0
    most_wait = 0.0
    verdicts: Counter[str] = Counter()
    started = time.monotonic()
    device: EmulatedDevice | SystemFolder = (
        SystemFolder()
        if condition.fstype == "system"
        else EmulatedDevice(CARD, size_bytes=384 * 2**20, fstype=condition.fstype)
    )
    with device, writer(device, condition.writer):
        for _ in range(runs):
            document = one_run(device)
            device_flag, rand_write_flag, cpu_flag, wait = flags(document)
            flagged += device_flag
            rand_write_flagged += rand_write_flag
            starved += cpu_flag and not device_flag
            most_wait = max(most_wait, wait)
            verdicts[a1_verdict(document)] += 1
    false_flags = 0 if condition.foreign else flagged
    verdict_text = ", ".join(f"A1 {name} {count}" for name, count in sorted(verdicts.items()))
    minutes = (time.monotonic() - started) / 60
    return (
        condition.name, runs, flagged, rand_write_flagged, verdict_text, false_flags, starved,
        f"{most_wait:.1f}", f"{minutes:.1f}",
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-scale", type=float, default=1.0, help="fraction of the runs")
    parser.add_argument("--only", nargs="*", help="condition names (prefixes)")
    options = parser.parse_args()
    chosen = [
        c for c in CONDITIONS if not options.only or any(c.name.startswith(o) for o in options.only)
    ]
    # A signal ends the run through the `with` blocks: the card and its writer are removed.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    print(
        "| condition | runs | flagged | rand-write-4k flagged | verdicts | false flags "
        "| starved only | most fio CPU wait % | minutes |"
    )
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for condition in chosen:
        cells = run_condition(condition, options.runs_scale)
        print("| " + " | ".join(map(str, cells)) + " |", flush=True)


if __name__ == "__main__":
    main()
