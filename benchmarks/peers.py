"""flashmark beside its peers' public test parameters, on emulated cards whose speed is known.

    sudo python3 -m benchmarks.peers [--repeat N] [--only NAME ...] [--kdiskmark-interval S]
                                                                   (from the repository root)

On each card of benchmarks/accuracy.py's DEVICES and on benchmarks/loaded_host.py's card
exactly at the A1 line (a loop device capped by the kernel block throttle, ext4 on it, 1.5 GiB
so that KDiskMark's 1 GiB test file fits) it runs, interleaved
(the order rotates with each repetition, one fresh card per repetition):

- `flashmark run --profile quick` (the figures, and its A1 grade) and `--profile a1` (the grade);
- Raspberry Pi's SD Card Speed Test, agnostics' `sdtest.sh` with its `sd_bench.fio`, both from
  github.com/raspberrypi-ui/agnostics at commit 7098461f895bdf0114d4c6888b39d9efb6c5e484
  (data/sd_bench.fio last changed in 6764c8a25f9aef2dfe055ee28d5f2376511ac94b, "update to
  exercise A2 cards more effectively", 2024-07-12; data/sdtest.sh in
  719604e297250e0ac76b9f9acc2f533b897bf4df, "Fix for random test failures", 2024-07-19).
  Reproduced as data below (SDTEST_*), pointed at the card instead of /var/tmp;
- KDiskMark's default tests (github.com/JonMagon/KDiskMark at commit
  e78d3c759d54d30f17d1861cd80257cc638496f3), as the fio commands its helper builds, with its
  default settings (KDISKMARK_*), parsed and averaged the way it does.

and prints per card: each headline's truth beside each tool's figure and error (min / median /
max over the repetitions), each tool's pass/fail against the truth's A1 verdict, and wall time
per tool. Prints tables; asserts nothing.

Units: every MB/s here is 10^6 bytes/s, and errors compare bytes with bytes. sdtest reads fio's
terse bandwidth, which is KiB/s, prints it as "KB/sec" and compares it with 10000: its
sequential-write threshold is 10.24 MB/s, 2.4% above A1's 10 MB/s. KDiskMark divides fio's
JSON `bw` (KiB/s) by 1000 and shows it as "MB/s" (src/benchmark.cpp, parseResult), although
its own text export says "MB/s = 1,000,000 bytes/s" (src/mainwindow.cpp): what it shows is
2.34% below the bytes fio measured. The tables convert both to bytes (the error of the
measurement) and give KDiskMark's shown figure's error in its own column.

Deviations, on purpose: KDiskMark drops the page cache (`echo 1 > /proc/sys/vm/drop_caches`)
before every loop; with its default direct I/O the cache is bypassed anyway, so this benchmark
leaves the shared host's cache alone. Everything else is as the peers' sources say.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.accuracy import DEVICES, run_flashmark, truth_verdict
from benchmarks.loaded_host import EXACT_A1
from flashmark.units import KiB, MiB
from tests.emulation.throttle import DeviceCaps, EmulatedDevice, unavailable_reason

MB = 1_000_000
# The exact-A1 card (10 MB/s, 500 write IOPS) meets A1 but not sdtest's 10000 KiB/s.
CARDS = (*DEVICES, EXACT_A1)
CARD_SIZE_BYTES = 1536 * MiB  # KDiskMark's 1 GiB file + ext4 + flashmark's 128 MiB area

# -- Raspberry Pi's sdtest (agnostics) -------------------------------------------------------
# data/sd_bench.fio: a [global] section and five stonewalled jobs, in this order. Its comment:
# "emulate the Apps Class A1 performance test ... good enough as a sniff test".
SDTEST_GLOBAL = (
    ("ioengine", "libaio"),
    ("iodepth", "32"),
    ("size", "256m"),
    ("direct", "1"),
    ("end_fsync", "1"),
    ("filename", "sd.test.file"),
    # directory=/var/tmp in the original: replaced by the card's mount point.
)
SDTEST_JOBS = (  # (job name, options); every job also has `stonewall`
    ("prepare-file", (("rw", "write"), ("bs", "512k"))),
    ("seq-write", (("rw", "write"), ("bs", "4m"))),
    ("seq-read", (("rw", "read"), ("bs", "4m"))),
    ("rand-4k-write", (("rw", "randwrite"), ("bs", "4k"), ("runtime", "10"))),
    ("rand-4k-read", (("rw", "randread"), ("bs", "4k"), ("runtime", "10"))),
)
# data/sdtest.sh: `fio --output-format=terse --max-jobs=4 sd_bench.fio | cut -f 3,7,8,48,49
# -d";"`, i.e. (fio's terse format v3, 1-based) job name, read KiB/s, read IOPS, write KiB/s,
# write IOPS; then swri = line 2's write KiB/s, rwri = line 4's write IOPS, rrea = line 5's
# read IOPS, and srea = line 3's 4th cut field, which is seq-read's *write* KiB/s (0; the
# script never uses it). Up to 3 runs; it stops at the first run that passes.
SDTEST_MAX_JOBS = 4
SDTEST_RUNS = 3
TERSE_NAME, TERSE_READ_KIB_S, TERSE_READ_IOPS, TERSE_WRITE_KIB_S, TERSE_WRITE_IOPS = (
    3,
    7,
    8,
    48,
    49,
)
SDTEST_SEQ_WRITE_MIN_KIB_S = 10000  # `[ "$swri" -lt 10000 ]` fails
SDTEST_RAND_WRITE_MIN_IOPS = 500  # `[ "$rwri" -lt 500 ]`
SDTEST_RAND_READ_MIN_IOPS = 1500  # `[ "$rrea" -lt 1500 ]`

# -- KDiskMark's defaults ----------------------------------------------------------------------
# src/appsettings.cpp: defaultLoopsCount 5, defaultFileSize 1024 (MiB), defaultMeasuringTime 5
# (s), defaultIntervalTime 5 (s), defaultRandomReadPercentage 70, defaultCacheBypassState true
# (direct=1), defaultContinuousGenerationState false (refill_buffers=0), defaultBenchmarkTestData
# Random (zero_buffers=0), defaultPerformanceProfile Default, defaultBenchmarkMode ReadWriteMix.
KDISKMARK_LOOPS = 5
KDISKMARK_FILE_MIB = 1024
KDISKMARK_MEASURING_S = 5
KDISKMARK_INTERVAL_S = 5
KDISKMARK_RANDOM_READ_PCT = 70


@dataclass(frozen=True)
class KdmTest:
    """One of KDiskMark's four test buttons (Global::BenchmarkParams)."""

    label: str
    random: bool
    block_kib: int
    queues: int
    threads: int

    def rw(self, direction: str) -> str:
        # src/global.cpp: getRWSequentialRead "read", ..., getRWRandomWrite "randwrite".
        return ("rand" if self.random else "") + direction


# src/appsettings.cpp defaultBenchmarkParams, profile Default, preset Standard.
KDISKMARK_TESTS = (
    KdmTest("SEQ1M Q8T1", False, 1024, 8, 1),
    KdmTest("SEQ1M Q1T1", False, 1024, 1, 1),
    KdmTest("RND4K Q32T1", True, 4, 32, 1),
    KdmTest("RND4K Q1T1", True, 4, 1, 1),
)


def kdiskmark_prepare_argv(path: Path) -> list[str]:
    """src/helper.cpp, Helper::prepareBenchmarkFile (fillZeros false by default)."""
    return [
        "fio",
        "--output-format=json",
        "--create_only=1",
        f"--filename={path}",
        f"--size={KDISKMARK_FILE_MIB}m",
        "--zero_buffers=0",
        "--name=prepare",
    ]


def kdiskmark_test_argv(path: Path, test: KdmTest, direction: str) -> list[str]:
    """src/helper.cpp, Helper::startBenchmarkTest with the default settings (no time_based:
    a test ends after the measuring time or the whole file, whichever comes first)."""
    rw = test.rw(direction)
    return [
        "fio",
        "--output-format=json",
        "--ioengine=libaio",
        "--randrepeat=0",
        "--refill_buffers=0",
        "--end_fsync=1",
        "--direct=1",
        f"--rwmixread={KDISKMARK_RANDOM_READ_PCT}",
        f"--filename={path}",
        f"--name={rw}",
        f"--size={KDISKMARK_FILE_MIB}m",
        "--zero_buffers=0",
        f"--bs={test.block_kib}k",
        f"--runtime={KDISKMARK_MEASURING_S}",
        f"--rw={rw}",
        f"--iodepth={test.queues}",
        f"--numjobs={test.threads}",
        "--group_reporting",
    ]


# -- headlines -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Headline:
    """One row: a figure with a truth, and where each tool measures it (None: it does not)."""

    name: str
    cap: str  # DeviceCaps attribute holding the truth
    flashmark: str | None = None  # quick profile test name
    sdtest: str | None = None  # SdtestRun field
    kdiskmark: str | None = None  # KDiskMark test label

    @property
    def bytes_per_s(self) -> bool:
        return self.cap.endswith("_bps")

    @property
    def direction(self) -> str:
        return "read" if self.cap.startswith("read") else "write"

    def truth(self, caps: DeviceCaps) -> float:
        value: int | None = getattr(caps, self.cap)
        if not self.bytes_per_s:
            value = caps.effective_iops(value)
        if value is None:
            raise ValueError(f"{caps.name} has no {self.cap}: no truth for {self.name}")
        return float(value)


HEADLINES = (
    Headline("seq write MB/s, QD1", "write_bps", "seq-write", None, "SEQ1M Q1T1"),
    Headline("seq write MB/s, deep queue", "write_bps", None, "seq_write", "SEQ1M Q8T1"),
    Headline("seq read MB/s, QD1", "read_bps", "seq-read", None, "SEQ1M Q1T1"),
    Headline("seq read MB/s, deep queue", "read_bps", None, "seq_read", "SEQ1M Q8T1"),
    Headline("4K random read IOPS, QD1", "read_iops", "rand-read-4k", None, "RND4K Q1T1"),
    Headline(
        "4K random read IOPS, QD32", "read_iops", "rand-read-4k-q32", "rand_read", "RND4K Q32T1"
    ),
    Headline("4K random write IOPS, QD1", "write_iops", "rand-write-4k", None, "RND4K Q1T1"),
    Headline(
        "4K random write IOPS, QD32", "write_iops", "rand-write-4k-q32", "rand_write", "RND4K Q32T1"
    ),
)


# -- sdtest ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SdtestRun:
    """One pass of sdtest.sh's loop: the figures as the script reads them, in its units."""

    seq_write_kib_s: int  # swri
    seq_read_kib_s: int  # seq-read's read KiB/s, as fio echoes it (the script's srea is 0)
    rand_write_iops: int  # rwri
    rand_read_iops: int  # rrea

    @property
    def passed(self) -> bool:
        return (
            self.seq_write_kib_s >= SDTEST_SEQ_WRITE_MIN_KIB_S
            and self.rand_write_iops >= SDTEST_RAND_WRITE_MIN_IOPS
            and self.rand_read_iops >= SDTEST_RAND_READ_MIN_IOPS
        )

    def figure(self, name: str) -> float:
        """A Headline.sdtest name's figure in the truth's units: bytes/s (from KiB/s) or IOPS."""
        figures = {
            "seq_write": float(self.seq_write_kib_s * KiB),
            "seq_read": float(self.seq_read_kib_s * KiB),
            "rand_write": float(self.rand_write_iops),
            "rand_read": float(self.rand_read_iops),
        }
        return figures[name]


def sdtest_job_file(directory: Path) -> str:
    lines = ["[global]", *(f"{key}={value}" for key, value in SDTEST_GLOBAL)]
    lines.append(f"directory={directory}")
    for name, options in SDTEST_JOBS:
        lines += ["", f"[{name}]", *(f"{key}={value}" for key, value in options), "stonewall"]
    return "\n".join(lines) + "\n"


def parse_sdtest_terse(output: str) -> SdtestRun:
    """What sdtest.sh reads from fio's terse lines (one per job, in job order)."""
    rows = [line.split(";") for line in output.splitlines() if line.startswith("3;")]
    names = [row[TERSE_NAME - 1] for row in rows]
    if names != [name for name, _ in SDTEST_JOBS]:
        raise SystemExit(f"sdtest: unexpected fio terse output (jobs {names}):\n{output[-1500:]}")

    def cell(line: int, column: int) -> int:
        return int(rows[line - 1][column - 1])

    return SdtestRun(
        seq_write_kib_s=cell(2, TERSE_WRITE_KIB_S),
        seq_read_kib_s=cell(3, TERSE_READ_KIB_S),
        rand_write_iops=cell(4, TERSE_WRITE_IOPS),
        rand_read_iops=cell(5, TERSE_READ_IOPS),
    )


@dataclass(frozen=True)
class SdtestResult:
    runs: tuple[SdtestRun, ...]  # the script's loop: up to 3, stopping at the first pass

    @property
    def passed(self) -> bool:
        return self.runs[-1].passed


def run_sdtest(device: EmulatedDevice) -> SdtestResult:
    assert device.mount_point is not None
    runs: list[SdtestRun] = []
    with tempfile.TemporaryDirectory(prefix="flashmark-sdtest-") as workdir:
        job_file = Path(workdir) / "sd_bench.fio"
        job_file.write_text(sdtest_job_file(device.mount_point))
        for _ in range(SDTEST_RUNS):
            argv = ["fio", "--output-format=terse", f"--max-jobs={SDTEST_MAX_JOBS}", str(job_file)]
            done = subprocess.run(
                device.command(argv), capture_output=True, text=True, timeout=1800, check=False
            )
            if done.returncode != 0:
                raise SystemExit(f"sdtest's fio failed: {done.stderr[-1500:]}")
            (device.mount_point / "sd.test.file").unlink(missing_ok=True)  # `rm -f`
            runs.append(parse_sdtest_terse(done.stdout))
            if runs[-1].passed:
                break
    return SdtestResult(tuple(runs))


# -- KDiskMark -------------------------------------------------------------------------------
@dataclass(frozen=True)
class KdmFigure:
    """One test and direction, averaged over the loops as KDiskMark's Default profile does
    (sum of the loops' results / loops, src/benchmark.cpp startTest and sendResult)."""

    shown_mb_s: float  # fio's bw (KiB/s) / 1000, labelled MB/s
    iops: float

    @property
    def bytes_per_s(self) -> float:
        return self.shown_mb_s * 1000 * KiB


def run_kdiskmark(device: EmulatedDevice, interval_s: float) -> dict[tuple[str, str], KdmFigure]:
    """The "All" button: every read test, then every write test (src/mainwindow.cpp), with
    the interval between tests (src/benchmark.cpp runBenchmark)."""
    assert device.mount_point is not None
    handle, name = tempfile.mkstemp(prefix="kdiskmark-", suffix=".tmp", dir=device.mount_point)
    os.close(handle)
    path = Path(name)
    figures: dict[tuple[str, str], KdmFigure] = {}
    try:
        _fio_json(device, kdiskmark_prepare_argv(path))
        order = [(test, d) for d in ("read", "write") for test in KDISKMARK_TESTS]
        for index, (test, direction) in enumerate(order):
            bandwidths: list[float] = []
            iops: list[float] = []
            for _ in range(KDISKMARK_LOOPS):
                job = _fio_json(device, kdiskmark_test_argv(path, test, direction))["jobs"][0]
                if job["error"] != 0:
                    raise SystemExit(f"KDiskMark's fio job failed: error {job['error']}")
                bandwidths.append(int(job[direction]["bw"]) / 1000.0)
                iops.append(float(job[direction]["iops"]))
            figures[(test.label, direction)] = KdmFigure(
                sum(bandwidths) / len(bandwidths), sum(iops) / len(iops)
            )
            if index < len(order) - 1:
                time.sleep(interval_s)
    finally:
        path.unlink(missing_ok=True)
    return figures


def _fio_json(device: EmulatedDevice, argv: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        device.command(argv), capture_output=True, text=True, timeout=1800, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"fio failed: {' '.join(argv)}\n{done.stderr[-1500:]}")
    document: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{") :])
    return document


# -- one card --------------------------------------------------------------------------------
TOOLS = ("flashmark quick", "flashmark a1", "sdtest", "KDiskMark")


@dataclass
class CardResults:
    caps: DeviceCaps
    figures: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (tool, headline)
    kdm_shown: dict[str, list[float]] = field(default_factory=dict)  # headline -> bytes/s shown
    verdicts: dict[str, list[str]] = field(default_factory=dict)  # tool -> A1 verdicts
    seconds: dict[str, list[float]] = field(default_factory=dict)

    def add(self, tool: str, headline: str, value: float) -> None:
        self.figures.setdefault((tool, headline), []).append(value)


def run_card(caps: DeviceCaps, repetition: int, results: CardResults, interval_s: float) -> None:
    order = TOOLS[repetition % len(TOOLS) :] + TOOLS[: repetition % len(TOOLS)]
    with EmulatedDevice(caps, size_bytes=CARD_SIZE_BYTES) as device:
        for tool in order:
            started = time.monotonic()
            record = RECORDERS[tool]
            verdict = record(device, results, interval_s)
            results.seconds.setdefault(tool, []).append(time.monotonic() - started)
            if verdict is not None:
                results.verdicts.setdefault(tool, []).append(verdict)
            print(f"  {caps.name}, repetition {repetition + 1}: {tool} done", flush=True)


def _grade(document: dict[str, Any]) -> str:
    grade = document["grades"]["A1"]
    verdict = grade.get("verdict")
    return str(verdict) if verdict else ("pass" if grade["pass"] else "fail")


def _record_quick(device: EmulatedDevice, results: CardResults, _interval: float) -> str:
    document, _ = run_flashmark(device, None, "quick")
    for headline in HEADLINES:
        if headline.flashmark is None:
            continue
        entry = next(t for t in document["tests"] if t["name"] == headline.flashmark)
        metric = "bw_bytes" if headline.bytes_per_s else "iops"
        results.add("flashmark quick", headline.name, float(entry[headline.direction][metric]))
    return _grade(document)


def _record_a1(device: EmulatedDevice, _results: CardResults, _interval: float) -> str:
    document, _ = run_flashmark(device, None, "a1")
    return _grade(document)


def _record_sdtest(device: EmulatedDevice, results: CardResults, _interval: float) -> str:
    outcome = run_sdtest(device)
    first = outcome.runs[0]  # the unbiased measurement; the verdict may come from a rerun
    for headline in HEADLINES:
        if headline.sdtest is not None:
            results.add("sdtest", headline.name, first.figure(headline.sdtest))
    verdict = "pass" if outcome.passed else "fail"
    return f"{verdict} (run {len(outcome.runs)})" if len(outcome.runs) > 1 else verdict


def _record_kdiskmark(device: EmulatedDevice, results: CardResults, interval: float) -> None:
    figures = run_kdiskmark(device, interval)
    for headline in HEADLINES:
        if headline.kdiskmark is None:
            continue
        figure = figures[(headline.kdiskmark, headline.direction)]
        if headline.bytes_per_s:
            results.add("KDiskMark", headline.name, figure.bytes_per_s)
            results.kdm_shown.setdefault(headline.name, []).append(figure.shown_mb_s * MB)
        else:
            results.add("KDiskMark", headline.name, figure.iops)


RECORDERS: dict[str, Callable[[EmulatedDevice, CardResults, float], str | None]] = {
    "flashmark quick": _record_quick,
    "flashmark a1": _record_a1,
    "sdtest": _record_sdtest,
    "KDiskMark": _record_kdiskmark,
}


# -- tables ----------------------------------------------------------------------------------
def _spread(values: Sequence[float], scale: float, digits: int) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    if len(values) == 1:
        return f"{mid / scale:,.{digits}f}"
    return f"{mid / scale:,.{digits}f} [{low / scale:,.{digits}f}-{high / scale:,.{digits}f}]"


def _errors(values: Sequence[float], truth: float) -> str:
    errors = [(value - truth) / truth * 100 for value in values]
    mid = statistics.median(errors)
    if len(errors) == 1:
        return f"{mid:+.2f}%"
    return f"{mid:+.2f}% [{min(errors):+.2f}..{max(errors):+.2f}]"


def render_card(results: CardResults) -> str:
    caps = results.caps
    lines = [
        f"### {caps.name}: {caps.read_iops}/{caps.write_iops} 4K IOPS, "
        f"{(caps.read_bps or 0) / MB:g}/{(caps.write_bps or 0) / MB:g} MB/s read/write",
        "",
        "median [min-max] over the repetitions; MB/s = 10^6 bytes/s; errors compare bytes "
        "with bytes (sdtest's KiB/s and KDiskMark's KiB/s / 1000 converted); last column: "
        "the error of the figure KDiskMark shows as 'MB/s'",
        "",
        "| headline | truth | flashmark quick | error | sdtest | error | KDiskMark | error "
        "| KDiskMark as shown |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for headline in HEADLINES:
        truth = headline.truth(caps)
        scale, digits = (MB, 2) if headline.bytes_per_s else (1.0, 0)
        cells = [headline.name, f"{truth / scale:,.{digits}f}"]
        for tool in ("flashmark quick", "sdtest", "KDiskMark"):
            values = results.figures.get((tool, headline.name))
            cells += (
                [_spread(values, scale, digits), _errors(values, truth)] if values else ["", ""]
            )
        shown = results.kdm_shown.get(headline.name)
        cells.append(_errors(shown, truth) if shown else "")
        lines.append("| " + " | ".join(cells) + " |")
    expected = "pass" if truth_verdict(caps, "A1") else "fail"
    lines += [
        "",
        f"truth: A1 {expected} (A1: >= 1500 read IOPS, >= 500 write IOPS, >= 10 MB/s); sdtest "
        f"passes at >= {SDTEST_SEQ_WRITE_MIN_KIB_S} KiB/s (10.24 MB/s) sequential 4M QD32 write, "
        f">= {SDTEST_RAND_WRITE_MIN_IOPS} random 4K QD32 write IOPS, "
        f">= {SDTEST_RAND_READ_MIN_IOPS} random 4K QD32 read IOPS, best of up to "
        f"{SDTEST_RUNS} runs",
        "",
        "| tool | A1 verdict per repetition | right (uncertain is not wrong) | wall time s, "
        "median [min-max] |",
        "| --- | --- | ---: | ---: |",
    ]
    for tool in TOOLS:
        verdicts = results.verdicts.get(tool, [])
        words = [verdict.split()[0] for verdict in verdicts]
        right, uncertain = words.count(expected), words.count("uncertain")
        shown_verdicts = ", ".join(verdicts) if verdicts else "(gives none)"
        score = f"{right}/{len(verdicts)}" if verdicts else "-"
        if uncertain:
            score += f" ({uncertain} uncertain)"
        seconds = results.seconds.get(tool, [])
        wall = _spread(seconds, 1.0, 1) if seconds else ""
        lines.append(f"| {tool} | {shown_verdicts} | {score} | {wall} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions per card")
    parser.add_argument("--only", nargs="*", default=None, help="device names (substrings)")
    parser.add_argument(
        "--kdiskmark-interval",
        type=float,
        default=KDISKMARK_INTERVAL_S,
        help=f"KDiskMark's pause between tests, s (its default: {KDISKMARK_INTERVAL_S})",
    )
    args = parser.parse_args()
    if (reason := unavailable_reason()) is not None:
        raise SystemExit(f"cannot emulate devices here: {reason}")
    fio = subprocess.run(["fio", "--version"], capture_output=True, text=True, check=True)
    print(f"{fio.stdout.strip()}; KDiskMark interval {args.kdiskmark_interval:g} s", flush=True)
    tables: list[str] = []
    for caps in CARDS:
        if args.only and not any(name in caps.name for name in args.only):
            continue
        results = CardResults(caps)
        for repetition in range(args.repeat):
            run_card(caps, repetition, results, args.kdiskmark_interval)
            # After every repetition, so that an interrupted run still leaves its tables.
            print(f"\n{render_card(results)}\n", flush=True)
        tables.append(render_card(results))
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
