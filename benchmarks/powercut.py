"""`flashmark powercut` against emulated cards whose behaviour at a power cut is known exactly.

    sudo python3 -m benchmarks.powercut [--honest-cycles 100] [--cycles 6] [--quick]

Each case is a 256 MiB emulated card (nbdkit + nbdfuse + direct-I/O loop, docs/emulated-flash.md)
taking 4 KiB writes in 0.4 ms, with a volatile write cache whose flush is honest, lying (writes
durable only 0.1, 0.5 or 2 s after they complete, whatever the flush said) or out of order
(each write durable after its own delay of up to 1 s), one that dies at its third power cut,
and the same with files on ext4. The command runs as a user runs it (`flashmark powercut DEVICE
--destructive --yes --json`, the default cut window of 1-4 s), with the card's own switch as
its off and on commands. The truth is the card's: at each cut the engine counts the completed
writes it dropped that a completed flush had covered (PowerCut.flushed_lost_bytes). Printed:
truth, verdict, the cycle of the first loss, flushed bytes lost as measured and as the card
counts them, false alarms (losses claimed on an honest card) and the time. Asserts nothing.

On the raw journal, measured and true flushed bytes differ by at most a flush group a cut: the
card counts a write as flushed when its flush completes, the test once fsync returned and the
flush point was recorded, a moment later. On ext4 the card also counts the filesystem's own
journal and metadata writes; the test counts the files' records.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.emulation.flash.device import EmulatedFlash, unavailable_reason
from tests.emulation.flash.model import Durability, FlashModel

MiB = 1 << 20
MB = 10**6
SECOND = 10**9


def card(**changes: Any) -> FlashModel:
    return FlashModel(
        claimed_bytes=256 * MiB,
        write_bps=20 * MB,
        write_latency_ns=200_000,
        torn_writes=True,
        **changes,
    )


@dataclass(frozen=True)
class Case:
    name: str
    truth: str
    model: FlashModel
    honest: bool
    filesystem: str | None = None


CASES = [
    Case("honest", "keeps every flushed write", card(durability=Durability.HONEST), True),
    *(
        Case(
            f"lying, {lag:g} s lag",
            f"flushed writes durable {lag:g} s late",
            card(durability=Durability.LYING, durable_lag_ns=round(lag * SECOND)),
            False,
        )
        for lag in (0.1, 0.5, 2.0)
    ),
    Case(
        "out of order, up to 1 s",
        "flushed writes durable in its own order",
        card(durability=Durability.OUT_OF_ORDER, durable_lag_ns=SECOND, reorder_seed=11),
        False,
    ),
    Case(
        "gone for good at cut 3",
        "never comes back after its 3rd cut",
        card(durability=Durability.HONEST, dies_at_power_cut=3),
        False,
    ),
    Case(
        "honest, ext4",
        "keeps every fsync'd file",
        card(durability=Durability.HONEST),
        True,
        "ext4",
    ),
    Case(
        "lying 0.5 s, ext4",
        "fsync'd files durable 0.5 s late",
        card(durability=Durability.LYING, durable_lag_ns=SECOND // 2),
        False,
        "ext4",
    ),
]


def run_case(case: Case, cycles: int, state: Path) -> tuple[dict[str, Any], float, int]:
    """The command's document, its wall time, and the card's flushed bytes lost (truth)."""
    with EmulatedFlash(case.model) as device:
        argv = [
            sys.executable, "-m", "flashmark", "powercut", device.path, "--destructive",
            "--yes", "--json", "--cycles", str(cycles), "--come-back-timeout", "5",
            "--off-command", device.power_command("off"),
            "--on-command", device.power_command("on"),
        ]  # fmt: skip
        if case.filesystem:
            argv += ["--filesystem", case.filesystem]
        started = time.monotonic()
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=3600,
            env={**os.environ, "XDG_STATE_HOME": str(state)},
        )
        took = time.monotonic() - started
        truth = sum(cut.flushed_lost_bytes for cut in device.power_cuts())
    if done.returncode != 0:
        raise SystemExit(f"flashmark powercut failed ({done.returncode}): {done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document, took, truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--honest-cycles", type=int, default=100)
    parser.add_argument("--cycles", type=int, default=6, help="cycles of the other cards")
    parser.add_argument("--quick", action="store_true", help="20 honest cycles, raw cards only")
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot run: {reason}")
    cases = [c for c in CASES if not (args.quick and c.filesystem)]
    honest_cycles = 20 if args.quick else args.honest_cycles
    print(
        "256 MiB emulated cards, 4 KiB records, a flush every 8, power cut 1-4 s after each "
        "cycle's first write; time = wall time of the command"
    )
    print()
    print(
        "| card | truth | cycles | verdict | first loss at cycle | flushed bytes lost "
        "(measured) | flushed bytes lost (card) | false alarms | time (s) | s per cycle |"
    )
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(prefix="flashmark-bench-powercut-") as state:
        for case in cases:
            cycles = honest_cycles if case.honest and not case.filesystem else args.cycles
            document, took, truth = run_case(case, cycles, Path(state))
            done = document["cycles"]
            lossy = [c["number"] for c in done if _lost(c)]
            false_alarms = len(lossy) if case.honest else 0
            print(
                f"| {case.name} | {case.truth} | {len(done)} of {cycles} | "
                f"{document['verdict']} | {lossy[0] if lossy else '-'} | "
                f"{document['flushed_bytes_lost']:,} | {truth:,} | "
                f"{false_alarms if case.honest else '-'} | {took:.1f} | "
                f"{took / max(1, len(done)):.1f} |",
                flush=True,
            )


def _lost(cycle: dict[str, Any]) -> bool:
    fsck = cycle.get("fsck")
    return bool(
        cycle["lost_after_flush"]
        or cycle["device"] != "back"
        or (fsck is not None and fsck["state"] != "clean")
    )


if __name__ == "__main__":
    main()
