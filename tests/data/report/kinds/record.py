"""Re-record the result documents of every kind but the benchmark run that the report tests
(tests/report/test_kinds.py) render as Markdown, CSV and HTML.

    sudo python tests/data/report/kinds/record.py    (root, nbdkit, nbdfuse: emulated cards)

Each document is the --json output of a real flashmark command on this machine, in one fresh
history (ids 1 to 5, in this order); nothing is typed in by hand:

- surface.json: `flashmark surface --destructive` of an emulated fake card (256 MiB claimed,
  64 MiB real, addresses wrapped, 40 MB/s of writes: docs/emulated-flash.md), so that it maps
  ranges;
- capacity.json: `flashmark capacity` of that card: the fake found, its evidence;
- monitor.json: `flashmark monitor` of that card's loop device while dd writes to it;
- workload.json: `flashmark workload pkg-install` at scale 0.01 in a folder of this machine;
- powercut.json: `flashmark powercut` of an honest emulated card, two cycles, its power cut
  by the card's own switch.

They keep this machine's paths and timestamps; the golden files (kind-*.md, kind-*.csv) are
made from them (FLASHMARK_UPDATE_GOLDEN=1, see tests/report/test_golden.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from flashmark.units import MiB
from tests.emulation.flash.device import EmulatedFlash, unavailable_reason
from tests.emulation.flash.model import Durability, FlashModel

HERE = Path(__file__).resolve().parent


def flashmark(name: str, args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flashmark", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
        timeout=900,
    )
    if done.returncode != 0:
        sys.exit(f"{name}: flashmark exited with {done.returncode}:\n{done.stderr}")
    (HERE / f"{name}.json").write_text(done.stdout, encoding="utf-8")
    print(f"wrote {HERE / f'{name}.json'}")


def main() -> None:
    reason = unavailable_reason()
    if reason is not None:
        sys.exit(f"cannot emulate the cards: {reason}")
    with tempfile.TemporaryDirectory(prefix="flashmark-kinds-") as work_dir:
        work = Path(work_dir)
        env = {"FLASHMARK_DB": str(work / "history.sqlite3"), "XDG_STATE_HOME": str(work)}
        # 40 MB/s of writes: dd's 16 MiB take about 0.4 s, two samples of the monitor at least
        fake = FlashModel(claimed_bytes=256 * MiB, real_bytes=64 * MiB, write_bps=40 * 10**6)
        with EmulatedFlash(fake, workdir=work) as card:
            flashmark("surface", ["surface", card.path, "--destructive", "--yes", "--json"], env)
            flashmark("capacity", ["capacity", card.path, "--json"], env)
            write = f"dd if=/dev/zero of={card.path} bs=1M count=16 oflag=direct status=none"
            name = Path(card.path).name
            monitor = ["monitor", name, "--interval", "0.2", "--json", "--", "sh", "-c", write]
            flashmark("monitor", monitor, env)
        folder = work / "card"
        folder.mkdir()
        flashmark(
            "workload", ["workload", "pkg-install", str(folder), "--scale", "0.01", "--json"], env
        )
        honest = FlashModel(
            claimed_bytes=64 * MiB,
            write_bps=20 * 10**6,
            write_latency_ns=200_000,
            durability=Durability.HONEST,
        )
        with EmulatedFlash(honest, workdir=work) as card:
            flashmark(
                "powercut",
                ["powercut", card.path, "--destructive", "--yes", "--cycles", "2",
                 "--cut-after", "0.3-0.6", "--off-command", card.power_command("off"),
                 "--on-command", card.power_command("on"), "--json"],
                env,
            )  # fmt: skip


if __name__ == "__main__":
    main()
