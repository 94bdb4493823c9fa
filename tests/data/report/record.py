"""Re-record the result documents the report tests (tests/report/) read.

    python tests/data/report/record.py

Runs `flashmark run --json` twice on replayed fio outputs (no fio, no root, nothing written
to a device), saving both into one fresh history so they get ids 1 and 2:

- quick-a1-card.json: tests/data/fio/quick-a1-card under the recorded Raspberry Pi 5 tree
  (tests/data/probe/rpi5_a2), so the result carries the card's claims and the findings;
- standard-fast-card.json: tests/data/fio/standard-fast-card with the standard profile, so it
  carries the mixed and deep-queue tests and the real workloads (measured on this machine).

full-vm-disk.json is not re-recorded by this script: it is a real fio run of the full profile
(`flashmark run DIR --profile full --runtime 1 --size 32M --workload-scale 0.02 --json`, id set
to 3) on a VM's virtio disk, so it holds the block-size sweep and the device activity the HTML
report draws (tests/report/html/test_publishable.py); replayed runs record no activity.

The documents keep this machine's timestamps, paths and device activity; the golden files are
then made from them (FLASHMARK_UPDATE_GOLDEN=1, see tests/report/test_golden.py), so re-record
only when the result schema changes, and regenerate the goldens afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
PROBE = DATA / "probe" / "rpi5_a2"


def record(name: str, replay: str, args: list[str], env: dict[str, str], work: Path) -> None:
    folder = work / name
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "flashmark", "run", str(folder), *args, "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "FLASHMARK_FIO_REPLAY": str(DATA / "fio" / replay)},
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        sys.exit(f"{name}: flashmark exited with {done.returncode}:\n{done.stderr}")
    (HERE / f"{name}.json").write_text(done.stdout, encoding="utf-8")
    print(f"wrote {HERE / f'{name}.json'}")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="flashmark-report-") as work_dir:
        work = Path(work_dir)
        history = {"FLASHMARK_DB": str(work / "history.sqlite3")}
        probe = {
            "FLASHMARK_SYSFS_ROOT": str(PROBE / "sys"),
            "FLASHMARK_PROCFS_ROOT": str(PROBE / "proc"),
            "FLASHMARK_DEBUGFS_ROOT": str(PROBE / "debug"),
        }
        record("quick-a1-card", "quick-a1-card", [], {**history, **probe}, work)
        record(
            "standard-fast-card",
            "standard-fast-card",
            ["--profile", "standard", "--runtime", "3", "--size", "64M"],
            history,
            work,
        )


if __name__ == "__main__":
    main()
