"""Re-record the result documents of every kind that the upload tests (tests/server/
test_upload_allowlist.py) build uploads from, or refuse (the kinds the service does not accept).

    sudo python tests/data/upload/record.py    (root, nbdkit, nbdfuse: an emulated fake card)

Each document is the --json output of a real flashmark command on this machine, in a fresh
history; nothing is typed in by hand:

- sd-card-run.json: `flashmark run` on the replayed fio outputs of tests/data/fio/
  quick-a1-card-adaptive under the recorded Raspberry Pi 5 tree (tests/data/probe/rpi5_a2),
  copied with the card's serial number set to 0x00001234: a serial that low is what
  counterfeit cards show (sbc-bench), so the card passport quotes it ("PSN 0x00001234").
- emmc-run.json: the same fio outputs under the recorded eMMC board (tests/data/probe/
  emmc_wear): an eMMC CID, whose serial lies elsewhere in the register than an SD card's.
- surface-fake.json: `flashmark surface --destructive` of an emulated fake card (256 MiB
  claimed, 64 MiB real, addresses wrapped: docs/emulated-flash.md), so that it maps ranges.
- capacity-fake.json: `flashmark capacity` of that card: the fake found, its evidence.
- monitor.json: `flashmark monitor` of that card's loop device while dd writes to it.
- workload.json: `flashmark workload pkg-install` at scale 0.01 in a folder of this machine.
- health-emmc.json: the second `flashmark health` reading of a copy of the recorded eMMC board
  given this machine's boot id (so that its write counter is read, and its boot id is kept);
  health-sd-vendor.json: of the recorded SanDisk industrial card, which answers its vendor's
  health command; health-nvme.json: of the recorded NVMe drive (tests/data/probe).

They keep this machine's paths, host name and devices: the tests inject identifiers into them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from flashmark.units import MiB
from tests.emulation.flash.device import EmulatedFlash, unavailable_reason
from tests.emulation.flash.model import FlashModel

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
LOW_SERIAL = "00001234"
# SD CID hex digits 18..25 hold the serial (PSN [55:24], SD Physical Layer Simplified
# Specification 5.2).
SD_PSN_DIGITS = slice(18, 26)


def flashmark(name: str, args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flashmark", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        sys.exit(f"{name}: flashmark exited with {done.returncode}:\n{done.stderr}")
    (HERE / f"{name}.json").write_text(done.stdout, encoding="utf-8")
    print(f"wrote {HERE / f'{name}.json'}")


def low_serial_tree(work: Path) -> Path:
    """A copy of the Raspberry Pi 5 tree whose card reports serial 0x00001234."""
    tree = work / "rpi5_low_serial"
    shutil.copytree(DATA / "probe" / "rpi5_a2", tree, symlinks=True)
    (card,) = [path.parent for path in (tree / "sys").rglob("cid") if path.is_file()]
    cid = (card / "cid").read_text().strip()
    digits = list(cid)
    digits[SD_PSN_DIGITS] = LOW_SERIAL
    (card / "cid").write_text("".join(digits) + "\n")
    (card / "serial").write_text(f"0x{LOW_SERIAL}\n")
    return tree


def probe_roots(tree: Path) -> dict[str, str]:
    return {
        "FLASHMARK_SYSFS_ROOT": str(tree / "sys"),
        "FLASHMARK_PROCFS_ROOT": str(tree / "proc"),
        "FLASHMARK_DEBUGFS_ROOT": str(tree / "debug"),
    }


def record_health(work: Path) -> None:
    """The health readings (the module's text): no root or emulated card needed."""
    emmc = work / "emmc_boot"
    shutil.copytree(DATA / "probe" / "emmc_wear", emmc, symlinks=True)
    boot_id = emmc / "proc" / "sys" / "kernel" / "random" / "boot_id"
    boot_id.parent.mkdir(parents=True)
    boot_id.write_text(Path("/proc/sys/kernel/random/boot_id").read_text())
    for name, tree, times in (
        ("health-emmc", emmc, 2),
        ("health-sd-vendor", DATA / "probe" / "sd_sandisk_industrial", 1),
        ("health-nvme", DATA / "probe" / "nvme_pcie", 1),
    ):
        env = {
            "FLASHMARK_DB": str(work / f"{name}.sqlite3"),
            "FLASHMARK_TOOLS_ROOT": str(tree / "tools"),
            **probe_roots(tree),
        }
        for _ in range(times):  # the last reading is kept
            flashmark(name, ["health", "/", "--json"], env)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="flashmark-upload-") as work_dir:
        record_health(Path(work_dir))
    reason = unavailable_reason()
    if reason is not None:
        sys.exit(f"cannot emulate the fake card: {reason}")
    with tempfile.TemporaryDirectory(prefix="flashmark-upload-") as work_dir:
        work = Path(work_dir)
        replay = {"FLASHMARK_FIO_REPLAY": str(DATA / "fio" / "quick-a1-card-adaptive")}
        for name, tree in (
            ("sd-card-run", low_serial_tree(work)),
            ("emmc-run", DATA / "probe" / "emmc_wear"),
        ):
            folder = work / name
            folder.mkdir()
            env = {"FLASHMARK_DB": str(work / f"{name}.sqlite3"), **replay, **probe_roots(tree)}
            flashmark(name, ["run", str(folder), "--json"], env)
        env = {"FLASHMARK_DB": str(work / "history.sqlite3")}
        folder = work / "card"
        folder.mkdir()
        flashmark(
            "workload", ["workload", "pkg-install", str(folder), "--scale", "0.01", "--json"], env
        )
        fake = FlashModel(claimed_bytes=256 * MiB, real_bytes=64 * MiB)
        with EmulatedFlash(fake, workdir=work) as card:
            flashmark(
                "surface-fake", ["surface", card.path, "--destructive", "--yes", "--json"], env
            )
            flashmark("capacity-fake", ["capacity", card.path, "--json"], env)
            write = f"dd if=/dev/zero of={card.path} bs=1M count=16 oflag=direct status=none"
            name = Path(card.path).name
            monitor = ["monitor", name, "--interval", "0.2", "--json", "--", "sh", "-c", write]
            flashmark("monitor", monitor, env)


if __name__ == "__main__":
    main()
