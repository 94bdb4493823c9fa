"""Verdicts of tests that stop once decided, on cards whose truth is known: how often the
reported 95% interval misses the truth at the stop, how often a verdict is wrong, how often a
card clear of every threshold gets a decisive one, and how long tests run.

    sudo python3 -m benchmarks.verdict_coverage [--seeds N] [--real] [--runtime-2 N]
                                                [--timing N]    (from the repository root)

Two kinds of rows, said in the tables' "source" column:
- sim: per-I/O completion streams of the emulated flash card's own model
  (tests.emulation.flash.FlashModel: each request busy for its latency plus its bytes at the
  rate, one at a time; garbage-collection stalls of gc_pause_ns every gc_every_bytes written;
  a write cache filled at its burst rate, drained only while idle), timestamps cut to fio's
  whole milliseconds after a host jitter (exponential, mean 50 us), written as fio's JSON and
  per-I/O logs and run through flashmark's own parsing, pooling, stop rule and grading
  (flashmark.bench.results, .lengths, .grading): the procedure of a test of the a1 profile
  (a 3 s first window after a 2 s ramp, extensions of 3 s after a 1 s follow ramp, up to 8 s;
  a run again at full length where its edges call for it). The card's state (bytes written,
  so the GC phase; the cache) carries on through ramps and windows, with 0.3 s idle between
  fio runs.
- fio: real `flashmark run --profile a1` on emulated cards (throttle: loop + cgroup block
  throttle; flash: the nbdkit model with stalls), their documents read back.

Truth (per test, whatever its length): the long-run rate of the card's model. Throttle: its
caps. Flash: requests of the test's size one at a time, GC stalls averaged in
(FlashModel.read_iops_at, .sustained_write_bps_at: busy time per request plus
gc_pause_ns x request / gc_every_bytes); the cache, filled during the ramp, is not in it
(a window that still writes into it is biased, and counts as a miss). A window of a few
seconds with a stall every 4 s on average is a draw around that long-run rate, so a miss is
counted against the long-run rate, never against the window's own.

Seeds: the stop rule's constants were chosen from real fio runs on the exact-A1 throttled card
(batch length, margin, alpha) and from the sim rows at seeds 1000 and up (the 8 MiB floor of a
write test); the sim rows here use seeds 5000 and up, not used for that.
Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashmark.bench.grading.classes import grade_results, undecided
from flashmark.bench.jobs import job_for_test
from flashmark.bench.lengths import (
    FIRST_WINDOW_S,
    extension_s,
    full_length,
    still_settling,
)
from flashmark.bench.model import DirectionResult, TestResult, TestSpec
from flashmark.bench.plan import FOLLOW_RAMP_S, default_settings
from flashmark.bench.profiles import (
    PROFILES,
    RAND_READ_4K,
    RAND_READ_4K_Q32,
    RAND_WRITE_4K,
    RAND_WRITE_4K_Q32,
    SEQ_WRITE,
)
from flashmark.bench.results import ParsedRun, parse_run, pooled_result, written_window
from flashmark.bench.slow_moments import SlowMoments, pauses_of_writes
from flashmark.fio.job import FioJob
from flashmark.fio.runner import FioOutput
from flashmark.units import MB, MiB
from tests.emulation.flash.device import EmulatedFlash
from tests.emulation.flash.model import FlashModel
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

PROFILE = PROFILES["a1"]
RUNTIME_S = PROFILE.default_runtime_s
RAMP_S = PROFILE.default_ramp_s
IDLE_BETWEEN_RUNS_NS = 300_000_000
HOST_JITTER_NS = 50_000
SIM_SEEDS_FROM = 5000
REPOSITORY_PYTHON = sys.executable

# (test, metric, threshold): every threshold a class reads a figure of (grading/classes.py).
THRESHOLDS = (
    (RAND_READ_4K, "read_iops", 1500.0),
    (RAND_WRITE_4K, "write_iops", 500.0),
    (RAND_READ_4K_Q32, "read_iops", 4000.0),
    (RAND_WRITE_4K_Q32, "write_iops", 2000.0),
    (SEQ_WRITE, "write_bw_bytes", 10.0),
    # U3/V30's 30 MB/s: cards past the ~27 MB/s at which a1's 128 MiB area leaves seq-write
    # less than a first window after its ramp, so it is measured again (measure.py).
    (SEQ_WRITE, "write_bw_bytes", 30.0),
)
FACTORS = (0.9, 0.97, 1.0, 1.03, 1.1)
CLEAR_FACTORS = (0.6, 0.85, 1.2, 2.0)  # >= 10% from the threshold (and from every other)


# -- the cards of the simulation ----------------------------------------------------------------
@dataclass(frozen=True)
class Kind:
    """How a simulated card behaves besides its rate."""

    name: str
    gc_pause_ns: int = 0
    gc_every_bytes: int = 0
    cache_bytes: int = 0
    cache_speedup: float = 1.0  # burst rate over the sustained one


KINDS = (
    Kind("flat"),
    Kind("stalling", gc_pause_ns=120_000_000, gc_every_bytes=8 * MiB),
    # A stall rarer than the floor: every 32 MiB, 64 s apart at 500 4K IOPS.
    Kind("rare stalls", gc_pause_ns=250_000_000, gc_every_bytes=32 * MiB),
    Kind("cached", cache_bytes=2 * MiB, cache_speedup=4.0),
)


def model_for(spec: TestSpec, truth_per_s: float, kind: Kind) -> FlashModel:
    """A flash model whose long-run rate for `spec` is `truth_per_s` (IOPS, or MB/s for the
    sequential write), with `kind`'s stalls and cache: the request's busy time solved from it."""
    size = spec.block_size_bytes
    requests_per_s = truth_per_s * MB / size if spec.name == SEQ_WRITE.name else truth_per_s
    busy_ns = 1e9 / requests_per_s
    if spec.pattern.writes:
        busy_ns -= kind.gc_pause_ns * size / kind.gc_every_bytes if kind.gc_every_bytes else 0
        write_bps = size * 1e9 / busy_ns
        return FlashModel(
            4 * 2**30,
            name=kind.name,
            write_bps=round(write_bps),
            gc_pause_ns=kind.gc_pause_ns,
            gc_every_bytes=kind.gc_every_bytes,
            cache_bytes=kind.cache_bytes,
            cache_write_bps=round(write_bps * kind.cache_speedup) if kind.cache_bytes else None,
            cache_drain_bps=round(write_bps) if kind.cache_bytes else 0,
        )
    return FlashModel(4 * 2**30, name=kind.name, read_bps=round(size * 1e9 / busy_ns))


def model_truth(spec: TestSpec, model: FlashModel) -> float:
    """The long-run rate of `spec` on `model` in its check's unit (see the top)."""
    size = spec.block_size_bytes
    writes = spec.pattern.writes
    rate = model.sustained_write_bps_at(size) if writes else model.read_bps_at(size)
    assert rate is not None
    return rate / MB if spec.name == SEQ_WRITE.name else rate / size


class SimulatedCard:
    """The model's device clock: one request at a time, its state carried on (see the top)."""

    def __init__(self, model: FlashModel, rng: random.Random) -> None:
        self.model = model
        self.rng = rng
        self.now_ns = 0.0
        # Written before the test: somewhere in a GC cycle.
        every = model.gc_every_bytes
        self.written = rng.randrange(every) if every else 0
        self.cache_fill = 0.0  # rested: the cache empty

    def idle(self, ns: float) -> None:
        self.now_ns += ns
        self.cache_fill = self.model.cache_after_idle(self.cache_fill, ns)

    def serve(self, write: bool, size: int) -> float:
        """One request from now; its completion time."""
        model = self.model
        if not write:
            busy = model.read_ns(size)
        else:
            room = max(0.0, model.cache_bytes - self.cache_fill)
            cached = int(min(size, room))
            self.cache_fill += cached
            busy = model.write_ns(size, cached=cached)
            busy += model.gc_pauses_for(self.written, size) * model.gc_pause_ns
            self.written += size
        self.now_ns += busy
        return self.now_ns

    def run(
        self, spec: TestSpec, ramp_s: int, window_s: int, size_bytes: int | None = None
    ) -> tuple[list[float], float]:
        """A fio run: the ramp, the window, the requests in flight at its close; completion
        times (ns) since the ramp's end, and the window's start in the device's clock. With
        `size_bytes`, it also ends once that much is written, the ramp's writes included (a
        job that is not time_based, bench/jobs.py `until_written`)."""
        start = self.now_ns + ramp_s * 1e9
        close = start + window_s * 1e9
        times = []
        write = spec.pattern.writes
        served = 0
        while self.now_ns < close and (size_bytes is None or served < size_bytes):
            done = self.serve(write, spec.block_size_bytes)
            served += spec.block_size_bytes
            if done >= start:
                times.append(done - start)
        for _ in range(spec.iodepth - 1):  # fio's drain of the queue
            times.append(self.serve(write, spec.block_size_bytes) - start)
        return times, start


def fio_output(
    spec: TestSpec, job_name: str, times_ns: list[float], rng: random.Random, window_ms: int
) -> FioOutput:
    """fio's JSON and per-I/O log of a run whose completions (since the ramp's end) are
    `times_ns`: times after a host jitter, cut to whole milliseconds, as fio logs them."""
    ddir = 1 if spec.pattern.writes else 0
    size = spec.block_size_bytes
    logged = sorted(int((t + rng.expovariate(1 / HOST_JITTER_NS)) / 1e6) for t in times_ns)
    log = "".join(f"{ms}, 1, {ddir}, {size}, 0, 0\n" for ms in logged)
    fsync_ms = 1 if spec.pattern.writes else 0
    runtime_ms = max(window_ms, (logged[-1] if logged else 0) + 1 + fsync_ms)
    gaps = [b - a for a, b in zip([0.0, *times_ns], times_ns, strict=False)] or [0.0]
    lat = {
        "min": min(gaps),
        "max": max(gaps),
        "mean": statistics.fmean(gaps),
        "stddev": statistics.pstdev(gaps),
        "N": len(times_ns),
        "percentile": {
            key: statistics.quantiles(gaps, n=1000)[min(998, int(float(key) * 10) - 1)]
            if len(gaps) > 1
            else gaps[0]
            for key in ("50.000000", "90.000000", "99.000000", "99.900000", "99.990000")
        },
    }
    section = {
        "io_bytes": size * len(logged),
        "total_ios": len(logged),
        "runtime": runtime_ms,
        "lat_ns": lat,
    }
    document = {
        "jobs": [{"jobname": job_name, "error": 0, "read" if ddir == 0 else "write": section}]
    }
    return FioOutput(
        job_name=job_name,
        argv=("fio",),
        returncode=0,
        json_text=json.dumps(document),
        stderr="",
        logs={f"{job_name}_iops.1.log": log},
        elapsed_s=(runtime_ms + 300) / 1000,
    )


@dataclass(frozen=True)
class Stopped:
    """One simulated or real test, stopped by the rule (or of fixed length)."""

    source: str
    kind: str
    test: str
    factor: float  # truth over the threshold
    truth: float
    result: TestResult
    measured_s: float  # the windows pooled
    took_s: float  # the test's whole time: ramps, windows, discarded runs

    @property
    def direction(self) -> DirectionResult:
        found = self.result.write if self.result.spec.pattern.writes else self.result.read
        assert found is not None
        return found

    def interval(self, decision: bool = False) -> tuple[float, float] | None:
        d = self.direction
        if self.test == SEQ_WRITE.name:
            chosen = d.bw_decision if decision else d.bw_ci95
            scale = 1 / MB
        else:
            chosen = d.iops_decision if decision else d.iops_ci95
            scale = 1.0
        if chosen is None:
            return None
        return chosen.low * scale, chosen.high * scale

    def missed(self, decision: bool = False) -> bool:
        bounds = self.interval(decision)
        # For a write the figure is the durable rate; the truth is the card's, the host's
        # window with the fsync left out: the interval's high end at the accepted rate counts.
        factor = 1.0
        d = self.direction
        if d.accepted_iops and d.iops:
            factor = d.accepted_iops / d.iops
        return bounds is None or not bounds[0] <= self.truth <= bounds[1] * factor

    def verdicts(self) -> list[tuple[float, str]]:
        """(threshold, verdict) of each A1/A2 check that reads this test (the a1 profile also
        grades the speed classes on seq-write: not counted here)."""
        served = {threshold for spec, _, threshold in THRESHOLDS if spec.name == self.test}
        found = []
        for grade in grade_results((self.result,)):
            for check in grade.checks:
                if (
                    check.test == self.test
                    and check.verdict is not None
                    and check.threshold in served
                ):
                    found.append((check.threshold, check.verdict.value))
        return sorted(set(found))

    def wrong(self) -> int:
        """Checks decided on the wrong side of their threshold (a truth within 1e-6 of it, the
        rounding of the model's rates, meets it)."""
        return sum(
            (verdict == "fail" and self.truth >= threshold * (1 - 1e-6))
            or (verdict == "pass" and self.truth < threshold * (1 - 1e-6))
            for threshold, verdict in self.verdicts()
        )

    def decisive(self) -> bool:
        return all(verdict != "uncertain" for _, verdict in self.verdicts())


def simulate(
    spec: TestSpec,
    model: FlashModel,
    seed: int,
    *,
    fixed_s: int | None = None,
    slow: SlowMoments | None = None,
) -> tuple[TestResult, float, float]:
    """The test `spec` on `model` as the a1 profile measures it (measure.py, for a test that
    stops on its verdict, after writes that paused as `slow`), or one run of `fixed_s`
    (--runtime); the result, the seconds of windows pooled and the test's whole time."""
    rng = random.Random(seed)
    card = SimulatedCard(model, rng)
    settings = default_settings(
        PROFILE, size_bytes=None, runtime_s=fixed_s, buffered=False, destructive=True
    )
    took = 0.0

    def fio_run(
        window_s: int,
        ramp_s: int,
        extension: int = 0,
        again: bool = False,
        until_written: bool = False,
    ) -> tuple[FioJob, FioOutput]:
        nonlocal took
        job = job_for_test(
            spec,
            settings,
            "/dev/sim",
            readonly=False,
            log_folder="/sim",
            window_s=window_s,
            ramp_s=ramp_s,
            extension=extension,
            again=again,
            until_written=until_written,
        )
        if took:
            card.idle(IDLE_BETWEEN_RUNS_NS)
        area = settings.size_bytes if until_written else None
        times, start = card.run(spec, ramp_s, window_s, area)
        # Ended once written: fio's runtime is what it measured after the ramp.
        measured_ms = window_s * 1000 if area is None else 0
        took += (card.now_ns - start) / 1e9 + ramp_s + IDLE_BETWEEN_RUNS_NS / 1e9
        return job, fio_output(spec, job.name, times, rng, measured_ms)

    def run(window_s: int, ramp_s: int, extension: int = 0, again: bool = False) -> ParsedRun:
        return parse_run(spec, *fio_run(window_s, ramp_s, extension, again))

    if fixed_s is not None:
        return pooled_result(spec, [run(fixed_s, RAMP_S)]), fixed_s, took
    if spec.name == SEQ_WRITE.name:
        # The leading sequential write as measure.py _until_written measures it: until the
        # area is written, at most its full length; again for a first window where its window
        # was shorter (unjudged), and once more at full length while a threshold is undecided.
        job, output = fio_run(RUNTIME_S, RAMP_S, until_written=True)
        window = written_window(output, job)
        measured = RUNTIME_S if window.capped else window.ms / 1000
        if measured >= FIRST_WINDOW_S:
            result = pooled_result(spec, [parse_run(spec, job, output)], decision=True)
        else:
            measured = FIRST_WINDOW_S
            result = pooled_result(
                spec, [run(FIRST_WINDOW_S, FOLLOW_RAMP_S, again=True)], decision=True
            )
        if undecided(result) and measured < RUNTIME_S:
            measured = RUNTIME_S
            result = pooled_result(spec, [run(RUNTIME_S, FOLLOW_RAMP_S, again=True)], decision=True)
        return result, measured, took
    first = run(FIRST_WINDOW_S, RAMP_S)
    runs = [first]
    result = pooled_result(spec, runs, sequential=True, slow=slow)
    longer = full_length(result, RUNTIME_S, undecided(result))
    measured = float(FIRST_WINDOW_S)
    if longer is None:
        return result, measured, took
    if longer.extendable:
        extensions = 0
        while (step := extension_s(RUNTIME_S, measured)) is not None:
            extensions += 1
            parsed = run(step, FOLLOW_RAMP_S, extension=extensions)
            runs.append(parsed)
            measured += step
            if extensions == 1 and still_settling(
                result, pooled_result(spec, [parsed], sequential=True)
            ):
                runs = runs[1:]
                measured -= FIRST_WINDOW_S
            result = pooled_result(spec, runs, sequential=True, slow=slow)
            now = full_length(result, RUNTIME_S, undecided(result))
            if now is None:
                return result, measured, took
            if not now.extendable:
                break
        else:
            return result, measured, took
    # Measured again at full length.
    again = run(RUNTIME_S, FOLLOW_RAMP_S, again=True)
    result = pooled_result(spec, [again], sequential=True, slow=slow)
    return result, float(RUNTIME_S), took


def earlier_writes(kind: Kind, factor: float, seed: int) -> SlowMoments:
    """The pauses of the a1 profile's leading sequential write (its full length) on a card of
    `kind` whose sequential rate is `factor` times its threshold: what the run knows of the
    card's slow moments when its random-write tests start."""
    model = model_for(SEQ_WRITE, 10.0 * factor, kind)
    rng = random.Random(seed)
    times, _ = SimulatedCard(model, rng).run(SEQ_WRITE, RAMP_S, RUNTIME_S)
    output = fio_output(SEQ_WRITE, "earlier", times, rng, RUNTIME_S * 1000)
    return SlowMoments().seen(pauses_of_writes(output.logs))


def simulated(seeds: int) -> Iterator[Stopped]:
    """Every threshold at FACTORS and CLEAR_FACTORS of it, on each kind of card (reads: flat
    only, the model stalls only writes), `seeds` streams each."""
    for spec, _, threshold in THRESHOLDS:
        kinds = KINDS if spec.pattern.writes else KINDS[:1]
        for kind in kinds:
            for factor in (*FACTORS, *CLEAR_FACTORS):
                model = model_for(spec, threshold * factor, kind)
                truth = model_truth(spec, model)
                for k in range(seeds):
                    key = f"{spec.name} {kind.name} {factor} {k}".encode()
                    seed = SIM_SEEDS_FROM + zlib.crc32(key) % 10**6
                    slow = None
                    if spec.pattern.writes and spec.name != SEQ_WRITE.name:
                        slow = earlier_writes(kind, factor, seed + 1)
                    result, measured, took = simulate(spec, model, seed, slow=slow)
                    yield Stopped(
                        "sim", kind.name, spec.name, factor, truth, result, measured, took
                    )


# -- real fio -------------------------------------------------------------------------------
# Throttled cards (ext4 folder, tests.emulation.throttle) at and around the A1 and A2
# thresholds, and clear of them: (name, read IOPS, write IOPS, read MB/s, write MB/s), the
# IOPS caps multiples of 10 (the throttle's 100 ms slice).
REAL_CARDS = (
    DeviceCaps("A1 x0.9", 1350, 450, 40 * MB, 9 * MB),
    DeviceCaps("A1 x0.97", 1450, 480, 40 * MB, 9_700_000),
    DeviceCaps("A1 x1.0", 1500, 500, 40 * MB, 10 * MB),
    DeviceCaps("A1 x1.03", 1550, 520, 40 * MB, 10_300_000),
    DeviceCaps("A1 x1.1", 1650, 550, 40 * MB, 11 * MB),
    DeviceCaps("A2 x0.97", 3880, 1940, 90 * MB, 20 * MB),
    DeviceCaps("A2 x1.03", 4120, 2060, 90 * MB, 20 * MB),
    # Seed 002's SanDisk Extreme A1: >= 10% from every A1/A2 threshold.
    DeviceCaps("Extreme A1 (clear)", 3200, 1480, 66 * MB, 59 * MB),
    DeviceCaps("clear fail", 1200, 300, 40 * MB, 8 * MB),
)
EXACT_A1 = DeviceCaps("exact A1 (seed 002 average card's reads)", 1920, 500, 43 * MB, 10 * MB)
CLEAR_A1 = REAL_CARDS[7]
# The stalling card: a card completing one request at a time (the nbdkit flash model) whose
# writes stall 120 ms every 8 MiB, as real flash collects garbage; its rand-write-4k runs
# about 764 IOPS, its seq-write 15.6 MB/s, GC averaged in.
STALLING = FlashModel(
    4 * 2**30,
    name="stalling card",
    read_bps=43 * MB,
    read_latency_ns=round(1e9 / 3200 - 4096 * 1e9 / (43 * MB)),
    write_bps=20 * MB,
    write_latency_ns=round(1e9 / 800 - 4096 * 1e9 / (20 * MB)),
    gc_pause_ns=120_000_000,
    gc_every_bytes=8 * MiB,
)
METRICS = {  # test -> (direction, the check's unit from caps)
    SEQ_WRITE.name: "write",
    RAND_READ_4K.name: "read",
    RAND_WRITE_4K.name: "write",
    RAND_READ_4K_Q32.name: "read",
    RAND_WRITE_4K_Q32.name: "write",
}


def caps_truth(caps: DeviceCaps, test: str) -> float:
    """A throttled card's true rate for `test`, in its check's unit: the tighter of its caps."""
    direction = METRICS[test]
    iops = caps.effective_iops(caps.read_iops if direction == "read" else caps.write_iops)
    bps = caps.read_bps if direction == "read" else caps.write_bps
    assert bps is not None
    if test == SEQ_WRITE.name:
        return bps / MB
    return min(float(iops or math.inf), bps / 4096)


def flashmark_run(
    command: list[str], target: str, *args: str, device: bool = False
) -> tuple[dict[str, Any], float]:
    """`flashmark run TARGET --json --no-save ARGS` through `command` (a throttle group);
    the document and the wall time."""
    argv = [REPOSITORY_PYTHON, "-m", "flashmark", "run", target, "--json", "--no-save", *args]
    if device:
        argv += ["--destructive", "--yes"]
    started = time.monotonic()
    done = subprocess.run([*command, *argv], capture_output=True, text=True, timeout=1200)
    took = time.monotonic() - started
    if not done.stdout.strip():
        raise SystemExit(f"flashmark failed ({done.returncode}): {done.stderr[-1500:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document, took


def on_throttled_card(caps: DeviceCaps, *args: str) -> tuple[dict[str, Any], float]:
    with EmulatedDevice(caps, size_bytes=512 * MiB) as card:
        assert card.mount_point is not None
        return flashmark_run(card.command([]), str(card.mount_point), "--profile", "a1", *args)


def real_stops(document: dict[str, Any], caps: DeviceCaps, took: float) -> list[Stopped]:
    """The document's tests as stops, with their truth from `caps`."""
    from flashmark.bench.document import document_to_run

    run = document_to_run(document)
    stops = []
    for result in run.tests:
        test = result.spec.name
        truth = caps_truth(caps, test)
        threshold = next(t for spec, _, t in THRESHOLDS if spec.name == test)
        direction = result.write if result.spec.pattern.writes else result.read
        assert direction is not None
        measured = direction.runtime_ms / 1000
        stops.append(
            Stopped(
                "fio",
                "throttle",
                test,
                round(truth / threshold, 2),
                truth,
                result,
                measured,
                result.elapsed_s + result.discarded_s,
            )
        )
    return stops


def real(repeat: int) -> list[Stopped]:
    """`flashmark run --profile a1` on every REAL_CARDS card, `repeat` times, two at a time."""
    stops: list[Stopped] = []
    jobs = [caps for _ in range(repeat) for caps in REAL_CARDS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        for caps, (document, took) in zip(jobs, pool.map(on_throttled_card, jobs), strict=True):
            stops += real_stops(document, caps, took)
            print(
                f"  {caps.name}: A1 {document['grades']['A1']['verdict']}, "
                f"A2 {document['grades']['A2']['verdict']}, {took:.0f} s",
                flush=True,
            )
    return stops


def runtime_2(repeat: int) -> None:
    """--runtime 2 on the exact-A1 card and the clearly A1 one: A1 verdicts."""
    rows = []
    for caps in (EXACT_A1, CLEAR_A1):
        jobs = [caps] * repeat
        with ThreadPoolExecutor(max_workers=2) as pool:
            found = list(pool.map(lambda c: on_throttled_card(c, "--runtime", "2"), jobs))
        verdicts = [document["grades"]["A1"]["verdict"] for document, _ in found]
        rows.append(
            (
                caps.name,
                repeat,
                verdicts.count("pass"),
                verdicts.count("fail"),
                verdicts.count("uncertain"),
                _spread([t for _, t in found]),
            )
        )
    table(
        "--runtime 2 (below the floor: every figure +-10% at least), A1 verdicts",
        ("card", "runs", "pass", "fail", "uncertain", "wall s min/median/max"),
        rows,
    )


def sdtest_pass(card: EmulatedFlash) -> float:
    """One pass of Raspberry Pi's sdtest (benchmarks.peers) in an ext4 on the card: its time."""
    from benchmarks.peers import sdtest_job_file

    with tempfile.TemporaryDirectory(prefix="flashmark-sdtest-") as workdir:
        mount = Path(workdir) / "mnt"
        mount.mkdir()
        subprocess.run(
            ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", card.path],
            check=True,
        )
        subprocess.run(["mount", card.path, str(mount)], check=True)
        try:
            job = Path(workdir) / "sd_bench.fio"
            job.write_text(sdtest_job_file(mount))
            started = time.monotonic()
            subprocess.run(
                ["fio", "--output-format=terse", str(job)],
                check=True,
                capture_output=True,
            )
            return time.monotonic() - started
        finally:
            subprocess.run(["umount", str(mount)], check=True)


def timing(repeat: int) -> None:
    """a1 on the stalling card beside one pass of sdtest on it, interleaved; quick on the
    clearly A1 card."""
    a1: list[float] = []
    sdtest: list[float] = []
    ratios: list[float] = []
    with EmulatedFlash(STALLING) as card:
        for _ in range(repeat):
            took_sdtest = sdtest_pass(card)
            document, took_a1 = flashmark_run([], card.path, "--profile", "a1", device=True)
            a1.append(took_a1)
            sdtest.append(took_sdtest)
            ratios.append(took_a1 / took_sdtest)
            print(
                f"  sdtest {took_sdtest:.1f} s, a1 {took_a1:.1f} s "
                f"(A1 {document['grades']['A1']['verdict']})",
                flush=True,
            )
    quick: list[float] = []
    with EmulatedDevice(CLEAR_A1, size_bytes=512 * MiB) as throttled:
        assert throttled.mount_point is not None
        for _ in range(repeat):
            document, took = flashmark_run(
                throttled.command([]), str(throttled.mount_point), "--profile", "quick"
            )
            quick.append(took)
            print(f"  quick {took:.1f} s (A1 {document['grades']['A1']['verdict']})", flush=True)
    table(
        "Time to verdict (wall s, min / median / max)",
        ("what", "card", "runs", "wall s", "target"),
        [
            ("sdtest, one pass", STALLING.name, repeat, _spread(sdtest), ""),
            ("flashmark a1", STALLING.name, repeat, _spread(a1), ""),
            ("a1 / sdtest, same repetition", STALLING.name, repeat, _spread(ratios, 3), "<= 0.4"),
            ("flashmark quick", CLEAR_A1.name, repeat, _spread(quick), "<= 35"),
        ],
    )


# -- tables ---------------------------------------------------------------------------------
def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def summary_tables(stops: Sequence[Stopped]) -> None:
    groups: dict[tuple[str, str, str], list[Stopped]] = {}
    for stop in stops:
        groups.setdefault((stop.source, stop.kind, stop.test), []).append(stop)
    rows: list[tuple[Any, ...]] = []
    for (source, kind, test), group in sorted(groups.items()):
        near = [s for s in group if s.factor in FACTORS]
        clear = [s for s in group if s.factor not in FACTORS]
        rows.append(
            (
                source,
                kind,
                test,
                len(group),
                _share(sum(s.missed() for s in group), len(group)),
                sum(s.missed(decision=True) for s in group),
                sum(s.wrong() for s in group),
                f"{sum(s.decisive() for s in clear)}/{len(clear)}",
                f"{sum(s.decisive() for s in near)}/{len(near)}",
                _spread([s.measured_s for s in group]),
            )
        )
    total = len(stops)
    missed = sum(s.missed() for s in stops)
    clear = [s for s in stops if s.factor not in FACTORS]
    rows.append(
        (
            "all",
            "",
            "",
            total,
            f"{missed} ({_pct(missed, total)})",
            sum(s.missed(decision=True) for s in stops),
            sum(s.wrong() for s in stops),
            _share(sum(s.decisive() for s in clear), len(clear), of=True),
            f"{sum(s.decisive() for s in stops if s.factor in FACTORS)}/{len(stops) - len(clear)}",
            _spread([s.measured_s for s in stops]),
        )
    )
    table(
        "Stopped tests: the reported 95% interval against the truth; verdicts",
        (
            "source",
            "card",
            "test",
            "stops",
            "95% misses",
            "99.5% misses",
            "wrong verdicts",
            "decisive, >= 10% off",
            "decisive, within 10%",
            "windows s min/median/max",
        ),
        rows,
    )
    by_factor: dict[tuple[str, float], list[Stopped]] = {}
    for stop in stops:
        by_factor.setdefault((stop.source, stop.factor), []).append(stop)
    rows = []
    for (source, factor), group in sorted(by_factor.items()):
        counts = {"pass": 0, "fail": 0, "uncertain": 0}
        for stop in group:
            for _, verdict in stop.verdicts():
                counts[verdict] += 1
        rows.append(
            (
                source,
                f"{factor:g}x",
                len(group),
                counts["pass"],
                counts["fail"],
                counts["uncertain"],
                sum(s.wrong() for s in group),
                _spread([s.measured_s for s in group]),
                _spread([s.took_s for s in group]),
            )
        )
    table(
        "By truth over threshold",
        (
            "source",
            "truth",
            "stops",
            "pass",
            "fail",
            "uncertain",
            "wrong",
            "windows s",
            "test s (ramps too)",
        ),
        rows,
    )


def _share(part: int, whole: int, *, of: bool = False) -> str:
    """ "3 (1.2%)", or with `of` "3/250 (1.2%)"."""
    return f"{part}{f'/{whole}' if of else ''} ({_pct(part, whole)})"


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _spread(values: Sequence[float], digits: int = 1) -> str:
    if not values:
        return "n/a"
    low, middle, high = min(values), statistics.median(values), max(values)
    return f"{low:.{digits}f} / {middle:.{digits}f} / {high:.{digits}f}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=4, help="sim streams per card and truth")
    parser.add_argument("--real", type=int, default=0, help="a1 runs per real card (fio)")
    parser.add_argument("--runtime-2", type=int, default=0, help="--runtime 2 runs per card")
    parser.add_argument("--timing", type=int, default=0, help="repetitions of the time table")
    arguments = parser.parse_args(argv)
    started = time.monotonic()
    stops = list(simulated(arguments.seeds))
    if arguments.real:
        stops += real(arguments.real)
    summary_tables(stops)
    print(f"\n({len(stops)} stops in {time.monotonic() - started:.0f} s)")
    if arguments.runtime_2:
        runtime_2(arguments.runtime_2)
    if arguments.timing:
        timing(arguments.timing)


if __name__ == "__main__":
    main()
