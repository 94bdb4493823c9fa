"""The README's scenarios as a new user runs them, on emulated cards whose truth is known: each
command's exit status, time and last line (the answer a user came for).

    sudo python3 -m benchmarks.scenarios [--only folder|device|cache ...] (from the repository root)

Cards: a throttled loop device with ext4 (tests.emulation.throttle; 40 MB/s read, 10 MB/s
write, 1500/500 IOPS) for the folder scenarios, and emulated flash devices
(tests.emulation.flash) for the device scenarios: an A1-class card, a fake card (128 MiB
real of 512 MiB, wrapping), a card with a 128 MiB write cache (30 MB/s, then 6 MB/s; raw, and
with ext4 for the folder run), an honest and a lying card under power cuts. Every command runs
as `flashmark ...` with its own history and home folder; nothing else is touched. Prints a
table and the truth beside the cards' lines; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.emulation.flash.device import EmulatedFlash
from tests.emulation.flash.device import unavailable_reason as flash_unavailable
from tests.emulation.flash.model import Durability, FakeMode, FlashModel
from tests.emulation.throttle import DeviceCaps, EmulatedDevice
from tests.emulation.throttle import unavailable_reason as throttle_unavailable

MiB = 1 << 20
MB = 10**6
FOLDER_CARD = DeviceCaps("10 MB/s card", 1500, 500, 40 * MB, 10 * MB)
# An A1 card: 4 KiB reads in 0.5 ms (about 1900 IOPS), writes in 1.4 ms (about 600 IOPS).
A1_CARD = FlashModel(
    256 * MiB,
    name="A1 card",
    read_bps=40 * MB,
    read_latency_ns=420_000,
    write_bps=20 * MB,
    write_latency_ns=1_400_000,
)
FAKE_CARD = FlashModel(512 * MiB, name="fake card", real_bytes=128 * MiB, fake=FakeMode.WRAP)
CACHED_CARD = FlashModel(
    1024 * MiB,
    name="cached card",
    write_bps=6 * MB,
    cache_bytes=128 * MiB,
    cache_write_bps=30 * MB,
    cache_drain_bps=6 * MB,
)
POWER_CARD = FlashModel(64 * MiB, write_bps=20 * MB, write_latency_ns=200_000)


@dataclass(frozen=True)
class Outcome:
    scenario: str
    command: str
    status: int
    seconds: float
    last_line: str


class Walk:
    """Runs commands with a history and home folder of its own."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.outcomes: list[Outcome] = []
        self.environment = dict(os.environ, HOME=str(home), COLUMNS="120", TERM="dumb")
        self.environment.pop("FLASHMARK_DB", None)

    def run(
        self,
        scenario: str,
        argv: list[str],
        wrap: Callable[[list[str]], list[str]] = lambda argv: argv,
    ) -> Outcome:
        command = [sys.executable, "-m", "flashmark", *argv]
        started = time.monotonic()
        done = subprocess.run(
            wrap(command), env=self.environment, capture_output=True, text=True, check=False
        )
        seconds = time.monotonic() - started
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        errors = [line for line in done.stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else (errors[-1] if errors else "")
        if done.returncode and errors:
            last = f"{last} / {errors[-1]}" if lines else errors[-1]
        outcome = Outcome(scenario, "flashmark " + shlex.join(argv), done.returncode, seconds, last)
        self.outcomes.append(outcome)
        print(f"{outcome.status:>3} {seconds:6.1f} s  {scenario}: {last}", flush=True)
        return outcome


@contextlib.contextmanager
def mounted(device: str, folder: Path) -> Iterator[Path]:
    """ext4 on `device`, mounted at `folder` while in the block."""
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device],
        check=True,
    )
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", device, str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def folder_scenarios(walk: Walk) -> None:
    with EmulatedDevice(FOLDER_CARD, size_bytes=3 * 1024 * MiB) as card:
        folder = str(card.target)
        inside = card.command
        walk.run("check a mounted card", ["run", folder], inside)
        walk.run("grade a card against A1/A2", ["run", folder, "--profile", "a1"], inside)
        walk.run("a fuller review", ["run", folder, "--profile", "standard"], inside)
        walk.run("the block-size sweep", ["run", folder, "--profile", "full"], inside)
        walk.run("how long a package install takes", ["workload", "pkg-install", folder], inside)
        name = Path(card.device).name
        walk.run(
            "what a command does to the disk",
            [
                "monitor",
                name,
                "--",
                "dd",
                "if=/dev/zero",
                f"of={folder}/monitored",
                "bs=1M",
                "count=32",
                "oflag=direct",
            ],
            inside,
        )
        walk.run("fill a mounted card's free space and verify it", ["surface", folder], inside)
        walk.run("identify the device", ["probe", folder], inside)
        walk.run("remove what a killed run left behind", ["clean", folder], inside)
        walk.run("see what was measured before", ["history"])
        walk.run("a forum post of a result", ["show", "1", "--format", "md"])
        walk.run("runs side by side", ["compare", "1", "2", "--reference", "seed001-microsd"])
        report = walk.home / "report.html"
        walk.run("a self-contained HTML report", ["report", "1", "2", "-o", str(report)])


def device_scenarios(walk: Walk) -> None:
    with EmulatedFlash(A1_CARD) as card:
        walk.run("read speeds of a whole device, nothing written", ["run", card.path])
        walk.run(
            "test an empty card, writes included",
            ["run", card.path, "--destructive", "--yes", "--profile", "a1"],
        )
        walk.run("read speed over a whole device (surface)", ["surface", card.path])
    with EmulatedFlash(FAKE_CARD) as card:
        walk.run("is the card fake? (capacity)", ["capacity", card.path])
        walk.run(
            "is the card fake? (surface, write and verify)",
            ["surface", card.path, "--destructive", "--yes"],
        )
    for label, model in (
        ("honest", dataclasses.replace(POWER_CARD, durability=Durability.HONEST)),
        (
            "lying",
            dataclasses.replace(
                POWER_CARD, durability=Durability.LYING, durable_lag_ns=500_000_000
            ),
        ),
    ):
        with EmulatedFlash(model) as card:
            walk.run(
                f"does the card keep what it acknowledged? ({label} card)",
                [
                    "powercut",
                    card.path,
                    "--destructive",
                    "--yes",
                    "--cycles",
                    "3",
                    "--off-command",
                    card.power_command("off"),
                    "--on-command",
                    card.power_command("on"),
                ],
            )


def cache_scenarios(walk: Walk) -> None:
    # A 256 MiB area: twice the cache, and room for it on the card's own ext4.
    with EmulatedFlash(CACHED_CARD) as card:
        walk.run(
            "where the write cache runs out (device)",
            [
                "run",
                card.path,
                "--profile",
                "sustained",
                "--size",
                "256M",
                "--destructive",
                "--yes",
            ],
        )
    with EmulatedFlash(CACHED_CARD) as card, mounted(card.path, walk.home / "cached") as folder:
        walk.run(
            "where the write cache runs out (folder)",
            ["run", str(folder), "--profile", "sustained", "--size", "256M"],
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=("folder", "device", "cache"), default=None)
    arguments = parser.parse_args()
    # SIGTERM unwinds like Ctrl-C, so that every emulated card is removed on the way out.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    reason = throttle_unavailable() or flash_unavailable()
    if reason:
        sys.exit(f"cannot emulate cards here: {reason}")
    chosen = arguments.only or ["folder", "device", "cache"]
    with tempfile.TemporaryDirectory(prefix="flashmark-scenarios-") as home:
        walk = Walk(Path(home))
        if "folder" in chosen:
            folder_scenarios(walk)
        if "device" in chosen:
            device_scenarios(walk)
        if "cache" in chosen:
            cache_scenarios(walk)
    print()
    print("Truth: folder card 40 MB/s read, 10 MB/s write, 1500/500 IOPS (A1: 1500/500);")
    print("A1 card ~1900/600 IOPS; fake card 128 MiB real of 512 MiB; cached card 128 MiB cache")
    print("at 30 MB/s, then 6 MB/s; honest card keeps every flushed write, lying card does not.")
    print()
    print("| scenario | exit | time | last line |")
    print("| --- | --- | --- | --- |")
    for outcome in walk.outcomes:
        line = outcome.last_line.replace("|", "\\|")
        print(f"| {outcome.scenario} | {outcome.status} | {outcome.seconds:.0f} s | {line} |")


if __name__ == "__main__":
    main()
