"""Accuracy of `flashmark run --profile quick` against emulated devices whose speed is known.

    sudo python3 benchmarks/accuracy.py [--runtime S] [--only NAME ...]

For each emulated device (a loop device capped by the kernel block throttle, with ext4 on it)
it runs the real CLI, then the same tests as plain fio commands in the style of the seeds
(`fio --name=x --filename=F --rw=... --bs=... --direct=1 --ioengine=libaio --iodepth=N
--size=... --runtime=... --time_based`, no ramp, no preparation), and prints per headline:
truth, flashmark's figure and error, plain fio's figure and error, and the ratio flashmark/fio;
per device: the A1/A2 verdicts against the truth, and wall time. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flashmark.emulated import DeviceCaps, EmulatedDevice, unavailable_reason
from flashmark.grading import GRADE_RULES

DEVICES = (
    # Seed 002's "average" Class 4 card: 1926/33 4K IOPS, 43/10 MB/s (33 -> 30: the throttle
    # works in 10-IOPS steps).
    DeviceCaps("slow card (seed 002 Class 4)", 1920, 30, 43_000_000, 10_000_000),
    DeviceCaps("A1 borderline +3%", 1550, 520, 60_000_000, 10_300_000),
    DeviceCaps("A1 borderline -3%", 1450, 480, 60_000_000, 9_700_000),
    DeviceCaps("A2 borderline +3%", 4120, 2060, 90_000_000, 10_300_000),
    DeviceCaps("A2 borderline -3%", 3880, 1940, 90_000_000, 9_700_000),
    # Seed 002's eMMC module: 5083/1943 4K IOPS, 128/32 MB/s.
    DeviceCaps("eMMC-like (seed 002)", 5080, 1940, 128_000_000, 32_000_000),
)

HEADLINES = (  # test, direction, metric, cap attribute, fio rw, block size, iodepth
    ("seq-write", "write", "bw_bytes", "write_bps", "write", "1M", 1),
    ("seq-read", "read", "bw_bytes", "read_bps", "read", "1M", 1),
    ("rand-read-4k", "read", "iops", "read_iops", "randread", "4k", 1),
    ("rand-write-4k", "write", "iops", "write_iops", "randwrite", "4k", 1),
    ("rand-read-4k-q32", "read", "iops", "read_iops", "randread", "4k", 32),
    ("rand-write-4k-q32", "write", "iops", "write_iops", "randwrite", "4k", 32),
)


def run_flashmark(device: EmulatedDevice, runtime: int | None) -> tuple[dict[str, Any], float]:
    argv = [
        sys.executable,
        "-m",
        "flashmark",
        "run",
        str(device.mount_point),
        "--json",
        "--no-save",
        "--profile",
        "quick",
    ]
    if runtime:
        argv += ["--runtime", str(runtime)]
    started = time.monotonic()
    done = subprocess.run(device.command(argv), capture_output=True, text=True, timeout=900)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"flashmark failed: {done.stderr[-1500:]}")
    return json.loads(done.stdout), elapsed


def run_plain_fio(
    device: EmulatedDevice,
    rw: str,
    bs: str,
    iodepth: int,
    runtime: int,
    direction: str,
    metric: str,
) -> float:
    assert device.mount_point is not None
    with tempfile.TemporaryDirectory() as workdir:
        output = Path(workdir) / "out.json"
        argv = [
            "fio",
            "--name=plain",
            f"--filename={device.mount_point / 'plain.tmp'}",
            f"--rw={rw}",
            f"--bs={bs}",
            "--direct=1",
            "--ioengine=libaio",
            f"--iodepth={iodepth}",
            "--size=128M",
            f"--runtime={runtime}",
            "--time_based",
            "--output-format=json",
            f"--output={output}",
        ]
        subprocess.run(device.command(argv), check=True, capture_output=True, timeout=600)
        return float(json.loads(output.read_text())["jobs"][0][direction][metric])


def truth_verdict(caps: DeviceCaps, grade: str) -> bool:
    rule = next(r for r in GRADE_RULES if r.name == grade)
    values = {
        "read_iops": caps.read_iops,
        "write_iops": caps.write_iops,
        "write_bw_bytes": (caps.write_bps or 0) / 1e6,
    }
    return all((values[check.metric] or 0) >= check.threshold for check in rule.checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--runtime", type=int, default=None, help="seconds per test (default: the quick profile's)"
    )
    parser.add_argument("--only", nargs="*", default=None, help="device names to run")
    args = parser.parse_args()
    if (reason := unavailable_reason()) is not None:
        raise SystemExit(f"cannot emulate devices here: {reason}")

    rows: list[str] = []
    summary: list[str] = []
    errors: list[float] = []
    for caps in DEVICES:
        if args.only and not any(name in caps.name for name in args.only):
            continue
        with EmulatedDevice(caps, size_bytes=512 * 2**20) as device:
            document, wall = run_flashmark(device, args.runtime)
            runtime = document["settings"]["runtime_s"]
            fio_started = time.monotonic()
            for test, direction, metric, cap, rw, bs, depth in HEADLINES:
                truth = float(getattr(caps, cap))
                entry = next(t for t in document["tests"] if t["name"] == test)
                measured = float(entry[direction][metric])
                plain = run_plain_fio(device, rw, bs, depth, runtime, direction, metric)
                error = (measured - truth) / truth * 100
                errors.append(abs(error))
                scale, unit = (1e6, "MB/s") if metric == "bw_bytes" else (1, "IOPS")
                rows.append(
                    f"| {caps.name} | {test} | {truth / scale:,.1f} {unit} | "
                    f"{measured / scale:,.1f} | {error:+.2f}% | {plain / scale:,.1f} | "
                    f"{(plain - truth) / truth * 100:+.2f}% | {measured / plain:.3f} |"
                )
            fio_wall = time.monotonic() - fio_started
        verdicts = []
        for grade in ("A1", "A2"):
            measured_pass = document["grades"][grade]["pass"]
            expected = truth_verdict(caps, grade)
            verdicts.append(
                f"{grade} {'pass' if measured_pass else 'fail'} "
                f"({'right' if measured_pass == expected else 'WRONG'})"
            )
        summary.append(f"| {caps.name} | {', '.join(verdicts)} | {wall:.1f} s | {fio_wall:.1f} s |")

    print("| device | test | truth | flashmark | error | plain fio | error | flashmark/fio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))
    print()
    print("| device | verdicts (vs truth) | flashmark wall time (quick) | plain fio, 6 jobs |")
    print("| --- | --- | ---: | ---: |")
    print("\n".join(summary))
    if errors:
        print(
            f"\nlargest |error| {max(errors):.2f}%, mean |error| "
            f"{sum(errors) / len(errors):.2f}% over {len(errors)} headlines"
        )


if __name__ == "__main__":
    main()
