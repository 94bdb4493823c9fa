"""Time to a graded verdict, per profile, on emulated cards: wall time beside the target, and
where it goes (preparation, tests, the rest), an older tree vs this checkout.

    sudo python3 -m benchmarks.time_to_verdict [--repeat N] [--profiles quick a1 full]
                                               [--cards throttle flash] [--old-tree DIR]
                                               (from the repository root)

Each profile runs `flashmark run` on two kinds of emulated card with the same caps:
- throttle: `flashmark run FOLDER --profile P --json --no-save` on an ext4 folder of a loop
  device capped by the kernel block throttle (tests.emulation.throttle), inside its throttle
  group.
  The throttle grants 100 ms of budget at a time: I/O completes in bursts.
- flash: `flashmark run DEVICE --profile P --destructive --yes --json --no-save` on an emulated
  flash device (tests.emulation.flash: nbdkit paces every request by the model's latency and
  rate, as a card completes I/O one request at a time).

"new" is this checkout (or --new-tree DIR, e.g. a `git archive` of a commit, so that editing the
checkout during a long run changes nothing); "old" is the tree given by --old-tree (by
default main at b9d5891, before adaptive lengths, unpacked with `git archive` into a temporary
folder), run the same way. Runs are interleaved (old, new, old, new, ...) on the same card, so
a busy host weighs on both alike; min / median / max over the repetitions are printed.

Breakdown: "tests" is the sum of the tests' fio wall times from the result document (the runs
kept, `elapsed_s`: a test's pooled windows, or its run at full length), "discarded" the fio wall
time of the runs not kept (`discarded_s`: a first window measured again or left out as still
settling, windows set aside for a run at full length, a run at once measured again; "n/a" for
a tree whose documents do not record it, whose "rest" then holds that time),
"prepare" the preparation step's time as the CLI's progress lines print it (whole seconds),
"rest" the remainder of the wall time (start-up, probe, workloads, grading, file creation and
removal). "without discarded" is the wall time less the discarded windows: what the run would
have taken had flashmark known in advance which first windows would not be enough, the least
adaptive lengths could reach with the same stop rule. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.emulation.flash.device import EmulatedFlash
from tests.emulation.flash.device import unavailable_reason as flash_unavailable_reason
from tests.emulation.flash.model import FlashModel
from tests.emulation.throttle import DeviceCaps, EmulatedDevice, unavailable_reason

REPOSITORY = Path(__file__).resolve().parent.parent
OLD_COMMIT = "b9d5891"  # main before adaptive lengths (2026-11-23)

# The targets: (card, target seconds). The 10 MB/s card is the A1 card of the recorded
# runs (tests/data/fio/record.py); the 60/30 MB/s card reads 60 MB/s and writes 30 MB/s.
TEN_MB_CARD = DeviceCaps("10 MB/s card", 1500, 500, 40_000_000, 10_000_000)
SIXTY_THIRTY_CARD = DeviceCaps("60/30 MB/s card", 4000, 2000, 60_000_000, 30_000_000)
TARGETS: dict[str, tuple[DeviceCaps, float]] = {
    "quick": (TEN_MB_CARD, 45.0),
    "a1": (TEN_MB_CARD, 40.0),
    "full": (SIXTY_THIRTY_CARD, 300.0),
}


def flash_model(caps: DeviceCaps) -> FlashModel:
    """An emulated flash card with `caps`: 4 KiB requests at the IOPS caps, large ones at the
    byte rates (each request costs a latency plus its bytes at the rate, model.py)."""
    assert caps.read_iops and caps.write_iops and caps.read_bps and caps.write_bps
    return FlashModel(
        4 * 2**30,
        name=caps.name,
        read_bps=caps.read_bps,
        read_latency_ns=round(1e9 / caps.read_iops - 4096 * 1e9 / caps.read_bps),
        write_bps=caps.write_bps,
        write_latency_ns=round(1e9 / caps.write_iops - 4096 * 1e9 / caps.write_bps),
    )


_STEP_RE = re.compile(r"\] prepare: (.*) \((?:(\d+)m)?(\d+)s\)$", re.MULTILINE)


@dataclass(frozen=True)
class Timing:
    wall_s: float
    prepare_s: float
    tests_s: float
    discarded_s: float | None  # None: the tree's documents do not record it
    verdicts: str
    windows: str  # each test's measured window, s (an extended test's added up)

    @property
    def rest_s(self) -> float:
        return self.wall_s - self.prepare_s - self.tests_s - (self.discarded_s or 0.0)

    @property
    def without_discarded_s(self) -> float | None:
        return None if self.discarded_s is None else self.wall_s - self.discarded_s


def run_profile(device: EmulatedDevice | EmulatedFlash, profile: str, source: Path) -> Timing:
    """One `flashmark run` of `profile` with the flashmark found in `source`/src."""
    argv = [sys.executable, "-m", "flashmark", "run"]
    if isinstance(device, EmulatedFlash):
        argv += [device.path, "--destructive", "--yes"]
    else:
        argv += [str(device.mount_point)]
    argv += ["--profile", profile, "--json", "--no-save"]
    env = {**os.environ, "PYTHONPATH": str(source / "src"), "CI": "true"}
    started = time.monotonic()
    if isinstance(device, EmulatedDevice):
        argv = device.command(argv)  # the flash device paces itself: no throttle group
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600, env=env)
    wall = time.monotonic() - started
    if done.returncode not in (0, 8):  # 8: a required grade failed (not asked for here)
        raise SystemExit(f"flashmark ({source}) failed: {done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    tests = sum(float(t.get("elapsed_s") or 0.0) for t in document["tests"])
    discarded = None
    if any("discarded_s" in t for t in document["tests"]):
        discarded = sum(float(t.get("discarded_s") or 0.0) for t in document["tests"])
    prepare = 0.0
    for match in _STEP_RE.finditer(done.stderr):
        prepare += 60 * int(match.group(2) or 0) + int(match.group(3))
    windows = " ".join(  # "+": extended or measured at full length (lengthened)
        f"{t['name']}={_window_s(t):g}{'+' if t.get('lengthened') else ''}"
        for t in document["tests"]
        if _window_s(t) is not None
    )
    return Timing(wall, prepare, tests, discarded, _verdicts(document), windows)


def _window_s(test: dict[str, Any]) -> float | None:
    direction = test.get("write") or test.get("read")
    return round(direction["runtime_ms"] / 1000, 1) if direction else None


def _verdicts(document: dict[str, Any]) -> str:
    grades = document.get("grades") or {}
    wanted = [name for name in ("A1", "A2", "U1", "U3") if name in grades]
    return ", ".join(
        f"{name} {grades[name].get('verdict') or ('pass' if grades[name]['pass'] else 'fail')}"
        for name in wanted
    )


def _card(kind: str, caps: DeviceCaps) -> EmulatedDevice | EmulatedFlash:
    if kind == "flash":
        return EmulatedFlash(flash_model(caps))
    return EmulatedDevice(caps, size_bytes=2 * 2**30)


def unpack_old(commit: str, destination: Path) -> Path:
    """The tree of `commit` as plain files (git archive): no worktree, no checkout touched."""
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", commit],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive, check=True)
    return destination


def spread(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def spread_or_na(values: list[float | None]) -> str:
    """`spread` of `values`, "n/a" when a run does not record them."""
    known = [value for value in values if value is not None]
    return spread(known) if len(known) == len(values) else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each variant")
    parser.add_argument("--profiles", nargs="*", default=["quick", "a1", "full"])
    parser.add_argument("--old-tree", type=Path, default=None, help="flashmark tree to compare")
    parser.add_argument(
        "--new-tree", type=Path, default=REPOSITORY, help="flashmark tree measured as new"
    )
    parser.add_argument("--new-only", action="store_true", help="skip the old tree")
    parser.add_argument("--cards", nargs="*", default=["throttle", "flash"])
    args = parser.parse_args()
    if (reason := unavailable_reason()) is not None:
        raise SystemExit(f"cannot emulate devices here: {reason}")
    if "flash" in args.cards and (reason := flash_unavailable_reason()) is not None:
        raise SystemExit(f"cannot emulate flash here: {reason}")
    with tempfile.TemporaryDirectory(prefix="flashmark-old-") as scratch:
        variants = [("new", args.new_tree)]
        if not args.new_only:
            old = args.old_tree or unpack_old(OLD_COMMIT, Path(scratch))
            variants.insert(0, ("old", old))
        rows: list[str] = []
        for profile, kind in itertools.product(args.profiles, args.cards):
            caps, target = TARGETS[profile]
            timings: dict[str, list[Timing]] = {name: [] for name, _ in variants}
            card = f"{caps.name}, {kind}"
            with _card(kind, caps) as device:
                for repetition in range(args.repeat):
                    for name, source in variants:
                        timing = run_profile(device, profile, source)
                        timings[name].append(timing)
                        print(
                            f"# {profile} {card} {name} run {repetition + 1}: "
                            f"{timing.wall_s:.1f} s (prepare {timing.prepare_s:.0f}, tests "
                            f"{timing.tests_s:.1f}, discarded {_seconds(timing.discarded_s)}) "
                            f"{timing.verdicts}; windows {timing.windows}",
                            file=sys.stderr,
                            flush=True,
                        )
            for name, _ in variants:
                runs = timings[name]
                walls = [t.wall_s for t in runs]
                met = "yes" if statistics.median(walls) <= target else "no"
                verdicts = sorted({t.verdicts for t in runs})
                rows.append(
                    f"| {profile} | {card} | {name} | {spread(walls)} | {target:.0f} s "
                    f"| {met} | {spread([t.prepare_s for t in runs])} | "
                    f"{spread([t.tests_s for t in runs])} | "
                    f"{spread_or_na([t.discarded_s for t in runs])} | "
                    f"{spread([t.rest_s for t in runs])} "
                    f"| {spread_or_na([t.without_discarded_s for t in runs])} "
                    f"| {len(runs)} | {'; '.join(verdicts)} |"
                )
    print(
        "| profile | card | code | wall s min / median / max | target | median met | "
        "prepare s | tests s | discarded s | rest s | without discarded s | runs | verdicts |"
    )
    print("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
