"""What starting flashmark costs: CPU time of short commands, beside `fio --version`.

A user on a Raspberry Pi types `flashmark --help` or `flashmark history` and waits for every
module flashmark imports; the target is under 150 ms of CPU on this machine, with `fio --version`
as the reference of a tool that starts at once. Each command runs as the console script runs it
(the script pip generates for `flashmark = flashmark.entry:main`), from this checkout's src/
folder, with an empty history in a temporary folder. Repetitions are interleaved (a, b, c, a, b, c,
...) so that a busy moment of the machine is shared out rather than landing on one command. CPU
time is the child's user + system time (os.wait4).

    python benchmarks/startup.py [--repeat 15]

Prints a table; never asserts (benchmarks print, tests assert).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_MS = 150.0
# The commands the target is for; `run --help` loads the whole run (measure, probe,
# saving) and is shown beside them, as is fio.
TARGETED = ("flashmark --help", "flashmark history")
SOURCE = Path(__file__).resolve().parent.parent / "src"

# What pip writes for a console script (pip 23, distlib's template), pointed at the entry.
CONSOLE_SCRIPT = """\
import re
import sys
from flashmark.entry import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def cpu_ms(argv: list[str], env: dict[str, str]) -> float:
    """CPU milliseconds (user + system) of one run of argv, its output thrown away."""
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {process.returncode}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs of each command")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="flashmark-startup-") as folder:
        script = Path(folder) / "flashmark"
        script.write_text(CONSOLE_SCRIPT)
        env = {
            **os.environ,
            "PYTHONPATH": str(SOURCE),
            "FLASHMARK_DB": str(Path(folder) / "history.sqlite3"),
            "LC_ALL": "C",
        }
        flashmark = [sys.executable, str(script)]
        commands: dict[str, list[str]] = {
            "flashmark --help": [*flashmark, "--help"],
            "flashmark history": [*flashmark, "history"],
            "flashmark run --help": [*flashmark, "run", "--help"],
        }
        fio = shutil.which("fio")
        if fio is not None:
            commands["fio --version (reference)"] = [fio, "--version"]
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, argv in commands.items():
                samples[name].append(cpu_ms(argv, env))

    print(f"CPU time per start, {args.repeat} interleaved runs each, on {os.cpu_count()} cores")
    print(f"Python {sys.version.split()[0]} ({sys.executable})")
    if fio is None:
        print("fio not found: no reference row")
    width = max(len(name) for name in commands)
    print(f"{'command':<{width}}  {'min ms':>7}  {'median':>7}  {'max ms':>7}  target")
    for name, values in samples.items():
        median = statistics.median(values)
        target = ""
        if name in TARGETED:
            target = f"{TARGET_MS:.0f} {'ok' if median < TARGET_MS else 'OVER'}"
        print(
            f"{name:<{width}}  {min(values):>7.0f}  {median:>7.0f}  {max(values):>7.0f}  {target}"
        )


if __name__ == "__main__":
    main()
