"""`flashmark capacity` against emulated cards whose real capacity is known exactly.

    sudo python3 -m benchmarks.capacity [--repeat N] [--quick]

For each case (genuine cards, and fakes that wrap, return zeros or 0xFF beyond real sizes from
1/2 to 1/64 of the claim, some not a whole number of blocks) it runs the command as a user does
(`flashmark capacity DEVICE --json --no-save`, non-destructive: backup, probe, restore) N times
on a fresh emulated device (nbdkit + nbdfuse + direct-I/O loop, docs/emulated-flash.md) and
prints truth, measured real size, whether it is exact to the stated granularity, the verdicts,
and the wall time min/median/max. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.emulation.flash.device import EmulatedFlash, unavailable_reason
from tests.emulation.flash.model import FakeMode, FlashModel

MiB, GiB = 1 << 20, 1 << 30


def _fake(claimed: int, fraction: int, mode: FakeMode, extra: int = 0) -> FlashModel:
    real = claimed // fraction // 512 * 512 + extra
    return FlashModel(claimed, real_bytes=real, fake=mode)


CASES: dict[str, FlashModel] = {
    "genuine 1 GiB": FlashModel(1 * GiB),
    "genuine 64 GiB": FlashModel(64 * GiB),
    **{
        f"wrap 64 GiB, real 1/{f}": _fake(64 * GiB, f, FakeMode.WRAP) for f in (2, 4, 8, 16, 32, 64)
    },
    **{
        f"zeros 64 GiB, real 1/{f}": _fake(64 * GiB, f, FakeMode.ZEROS)
        for f in (2, 4, 8, 16, 32, 64)
    },
    **{f"erased 64 GiB, real 1/{f}": _fake(64 * GiB, f, FakeMode.ERASED) for f in (2, 8, 64)},
    "wrap 8 GiB, real 1/3 (not whole blocks)": _fake(8 * GiB, 3, FakeMode.WRAP),
    "zeros 8 GiB, real 1/5 + 1 sector": _fake(8 * GiB, 5, FakeMode.ZEROS, 512),
}
QUICK = [
    "genuine 64 GiB",
    "wrap 64 GiB, real 1/64",
    "zeros 64 GiB, real 1/2",
    "erased 64 GiB, real 1/8",
]


def run_once(model: FlashModel, state: Path) -> tuple[dict[str, object], float]:
    with EmulatedFlash(model) as device:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "flashmark", "capacity", device.path, "--json", "--no-save"],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "XDG_STATE_HOME": str(state)},
        )
        took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"flashmark capacity failed ({done.returncode}): {done.stderr[-2000:]}")
    document: dict[str, object] = json.loads(done.stdout)
    return document, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help=f"only: {', '.join(QUICK)}")
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot run: {reason}")
    names = QUICK if args.quick else list(CASES)
    print(f"{args.repeat} repetitions per case; time = wall time of the command (min / median /"
          " max), including Python start-up, backup, probe, restore and check")  # fmt: skip
    print()
    print("| case | truth (bytes) | measured (bytes) | granularity | exact | verdicts | time (s) |")
    print("| --- | ---: | ---: | ---: | --- | --- | ---: |")
    with tempfile.TemporaryDirectory(prefix="flashmark-bench-capacity-") as state:
        for name in names:
            model = CASES[name]
            results = [run_once(model, Path(state)) for _ in range(args.repeat)]
            measured = Counter(str(doc["real_bytes"]) for doc, _ in results)
            verdicts = Counter(str(doc["verdict"]) for doc, _ in results)
            exact = all(_exact(doc, model) for doc, _ in results)
            times = sorted(took for _, took in results)
            granularity = {int(str(doc["granularity_bytes"])) for doc, _ in results}
            print(
                f"| {name} | {model.real_capacity:,} | "
                f"{', '.join(f'{m} x{n}' if n > 1 else m for m, n in measured.items())} | "
                f"{', '.join(map(str, sorted(granularity)))} | {'yes' if exact else 'NO'} | "
                f"{', '.join(f'{v} x{n}' for v, n in verdicts.items())} | "
                f"{times[0]:.1f} / {statistics.median(times):.1f} / {times[-1]:.1f} |",
                flush=True,
            )


def _exact(document: dict[str, object], model: FlashModel) -> bool:
    real, granularity = document["real_bytes"], document["granularity_bytes"]
    if not isinstance(real, int) or not isinstance(granularity, int):
        return False
    expected = "fake" if model.is_fake else "genuine"
    return document["verdict"] == expected and real <= model.real_capacity < real + granularity


if __name__ == "__main__":
    main()
