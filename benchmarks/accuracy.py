"""Accuracy of `flashmark run --profile quick` against emulated devices whose speed is known.

    sudo python3 -m benchmarks.accuracy [--runtime S] [--only NAME ...] [--exact-only]
                                        [--repeat N]       (from the repository root)

For each emulated device (a loop device capped by the kernel block throttle, with ext4 on it)
it runs the real CLI, then the same tests as plain fio commands in the style of the seeds
(`fio --name=x --filename=F --rw=... --bs=... --direct=1 --ioengine=libaio --iodepth=N
--size=... --runtime=... --time_based`, no ramp, no preparation), and prints per headline:
truth, flashmark's figure before exact windows (the old parse: fio's io_bytes or total_ios over
the window, from the same run), flashmark's figure and error, plain fio's figure and error, and
the ratio flashmark/fio; per device: the A1/A2 verdicts against the truth, and wall time.

Then the exact-window cases: slow devices (5 MB/s, a 6 MB/s USB stick, 10 write
IOPS), a 2 s window and the full profile's 16 MiB transfers, each one test run as `flashmark
run` builds and parses it, printed as truth, before (old parse), after (the window's rate; for
writes what the host accepted), the durable rate, and the 95% interval. Prints tables; asserts
nothing.
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

from flashmark.bench.grading.classes import GRADE_RULES
from flashmark.bench.model import DirectionResult, Settings
from flashmark.bench.profiles import PROFILES
from tests.emulation.runs import run_test_in_device
from tests.emulation.throttle import DeviceCaps, EmulatedDevice, unavailable_reason

MiB = 2**20

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

# Exact windows: (label, caps, test of the full profile, runtime s, truth in units/s, unit).
EXACT_CASES = (
    ("5 MB/s card", DeviceCaps("5", write_bps=5_000_000), "seq-write", 8, 5e6, "bytes"),
    ("6 MB/s USB stick", DeviceCaps("6", read_bps=6_000_000), "seq-read", 8, 6e6, "bytes"),
    ("10 write IOPS card", DeviceCaps("10", write_iops=10), "rand-write-4k", 8, 10, "ios"),
    ("10 MB/s, --runtime 2", DeviceCaps("10", write_bps=10_000_000), "seq-write", 2, 1e7, "bytes"),
    ("10 MB/s, 16M", DeviceCaps("10", write_bps=10_000_000), "seq-write-16M", 10, 1e7, "bytes"),
    ("16 MiB/s, 16M", DeviceCaps("16", read_bps=16 * MiB), "rand-read-16M", 10, 16 * MiB, "bytes"),
    ("30 MB/s, 16M", DeviceCaps("30", read_bps=30_000_000), "seq-read-16M", 10, 3e7, "bytes"),
)

HEADLINES = (  # test, direction, metric, cap attribute, fio rw, block size, iodepth
    ("seq-write", "write", "bw_bytes", "write_bps", "write", "1M", 1),
    ("seq-read", "read", "bw_bytes", "read_bps", "read", "1M", 1),
    ("rand-read-4k", "read", "iops", "read_iops", "randread", "4k", 1),
    ("rand-write-4k", "write", "iops", "write_iops", "randwrite", "4k", 1),
    ("rand-read-4k-q32", "read", "iops", "read_iops", "randread", "4k", 32),
    ("rand-write-4k-q32", "write", "iops", "write_iops", "randwrite", "4k", 32),
)


def run_flashmark(
    device: EmulatedDevice, runtime: int | None, profile: str = "quick"
) -> tuple[dict[str, Any], float]:
    """`flashmark run --profile PROFILE --json` on the device: (the result document, wall s)."""
    argv = [
        sys.executable,
        "-m",
        "flashmark",
        "run",
        str(device.mount_point),
        "--json",
        "--no-save",
        "--profile",
        profile,
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
    parser.add_argument("--exact-only", action="store_true", help="only the exact-window cases")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each exact-window case")
    args = parser.parse_args()
    if (reason := unavailable_reason()) is not None:
        raise SystemExit(f"cannot emulate devices here: {reason}")
    if not args.exact_only:
        profile_table(args)
    exact_table(args.repeat)


def profile_table(args: argparse.Namespace) -> None:
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
                key = "io_bytes" if metric == "bw_bytes" else "total_ios"
                before = entry[direction][key] * 1000 / entry[direction]["runtime_ms"]
                # The window's own rate; for writes, what the host accepted before the fsync.
                window = entry[direction].get(f"accepted_{metric}") or measured
                plain = run_plain_fio(device, rw, bs, depth, runtime, direction, metric)
                error = (measured - truth) / truth * 100
                window_error = (window - truth) / truth * 100
                errors.append(abs(window_error))
                scale, unit = (1e6, "MB/s") if metric == "bw_bytes" else (1, "IOPS")
                rows.append(
                    f"| {caps.name} | {test} | {truth / scale:,.1f} {unit} | "
                    f"{before / scale:,.1f} | {(before - truth) / truth * 100:+.2f}% | "
                    f"{window / scale:,.1f} | {window_error:+.2f}% | "
                    f"{measured / scale:,.1f} | {error:+.2f}% | {plain / scale:,.1f} | "
                    f"{(plain - truth) / truth * 100:+.2f}% | {measured / plain:.3f} |"
                )
            fio_wall = time.monotonic() - fio_started
        verdicts = []
        for grade in ("A1", "A2"):
            entry = document["grades"][grade]
            verdict = entry.get("verdict") or ("pass" if entry["pass"] else "fail")
            expected = "pass" if truth_verdict(caps, grade) else "fail"
            # "uncertain" is never wrong: the interval holds the threshold
            judged = "right" if verdict == expected else "uncertain"
            if verdict not in (expected, "uncertain"):
                judged = "WRONG"
            verdicts.append(f"{grade} {verdict} ({judged})")
        summary.append(f"| {caps.name} | {', '.join(verdicts)} | {wall:.1f} s | {fio_wall:.1f} s |")

    print(
        "| device | test | truth | before | error | window | error | flashmark (writes "
        "durable) | error | plain fio | error | flashmark/fio |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))
    print()
    print("| device | verdicts (vs truth) | flashmark wall time (quick) | plain fio, 6 jobs |")
    print("| --- | --- | ---: | ---: |")
    print("\n".join(summary))
    if errors:
        print(
            f"\nlargest |error| of the window's rate {max(errors):.2f}%, mean "
            f"{sum(errors) / len(errors):.2f}% over {len(errors)} headlines"
        )


def exact_table(repeat: int) -> None:
    """Slow devices, short windows, 16 MiB transfers: before vs after exact windows."""
    print(
        "\n| case | test | window | truth | before | error | after | error | durable | error "
        "| ci95 +- | fsync ms |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    befores: list[float] = []
    afters: list[float] = []
    for label, caps, test, runtime, truth, unit in EXACT_CASES:
        spec = next(t for t in PROFILES["full"].tests if t.name == test)
        size = max(32 * MiB, 4 * spec.block_size_bytes)
        settings = Settings("quick", size, runtime, 2, 2, direct=True, destructive=False)
        for _ in range(repeat):
            with (
                EmulatedDevice(caps, size_bytes=256 * MiB) as device,
                tempfile.TemporaryDirectory(prefix="flashmark-accuracy-") as workdir,
            ):
                result = run_test_in_device(device, spec, settings, Path(workdir))
            direction = result.write if spec.writes else result.read
            assert direction is not None
            before, after, durable = _figures(direction, unit)
            befores.append(abs(before / truth - 1) * 100)
            afters.append(abs(after / truth - 1) * 100)
            scale, shown = (1e6, "MB/s") if unit == "bytes" else (1.0, "IOPS")
            interval = direction.bw_ci95
            half = interval.half_width_pct if interval is not None else float("nan")
            fsync = f"{direction.fsync_ms:.1f}" if direction.fsync_ms is not None else ""
            durable_cells = (
                f"{durable / scale:,.3f} | {(durable / truth - 1) * 100:+.2f}%"
                if spec.writes
                else " | "
            )
            print(
                f"| {label} | {test} | {runtime} s | {truth / scale:,.3f} {shown} | "
                f"{before / scale:,.3f} | {(before / truth - 1) * 100:+.2f}% | "
                f"{after / scale:,.3f} | {(after / truth - 1) * 100:+.2f}% | {durable_cells} | "
                f"{half:.2f}% | {fsync} |"
            )
    if afters:
        print(
            f"\nlargest |error| before {max(befores):.2f}%, after {max(afters):.2f}% "
            f"(the window's rate) over {len(afters)} runs"
        )


def _figures(direction: DirectionResult, unit: str) -> tuple[float, float, float]:
    """(before: the old parse, fio's count over the window; after: the window's rate, for
    writes what the host accepted; the headline, for writes the durable rate)."""
    window_s = direction.runtime_ms / 1000
    if unit == "bytes":
        before = direction.io_bytes / window_s
        after = direction.accepted_bw_bytes or direction.bw_bytes
        return before, after, direction.bw_bytes
    before = direction.total_ios / window_s
    after = direction.accepted_iops or direction.iops
    return before, after, direction.iops


if __name__ == "__main__":
    main()
