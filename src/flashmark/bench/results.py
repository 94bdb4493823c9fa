"""fio output -> TestResult. Pure; loud on surprises (the message quotes what it found).

fio's JSON output (never the terse format, whose fields moved between versions) and its
per-I/O logs, as the fio HOWTO defines them ("Interpreting the output", "Log File Formats");
the rates come from the logs (flashmark.fio.window), never from fio's iops and bw_bytes.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flashmark.bench.jobs import PERCENTILES, SAMPLE_INTERVAL_MS
from flashmark.bench.lengths import below_floor
from flashmark.bench.model import (
    STOPPED_SIZE_LIMIT,
    STOPPED_STEADY,
    STOPPED_TIME_LIMIT,
    BandwidthSeries,
    DirectionResult,
    LatencyNs,
    SustainedWrite,
    TestResult,
    TestSpec,
)
from flashmark.bench.slow_moments import METHOD as SLOW_MOMENTS_METHOD
from flashmark.bench.slow_moments import Pauses, SlowMoments, pauses_in
from flashmark.bench.speed_class_rate import SUB_UNIT_BYTES, sub_unit_rates
from flashmark.bench.sustained import SUSTAINED_WRITE_NAME
from flashmark.errors import (
    FioFailed,
    FioOutputError,
)
from flashmark.fio.job import FioJob
from flashmark.fio.output import json_number, json_section, quoted, single_job
from flashmark.fio.runner import FioOutput
from flashmark.fio.window import (
    LOG_RESOLUTION_MS,
    Completion,
    Headline,
    count_window,
    read_completions,
    read_latencies_ns,
    surer_rate,
)
from flashmark.stats import (
    CONFIDENCE,
    DECISION_ALPHA,
    EDGE_METHOD,
    WHOLE_BURSTS_METHOD,
    MeanInterval,
    confidence_sequence,
    interval_of_mean,
)
from flashmark.surface.cache import estimate_cache

# The batches a window's interval rests on (flashmark.stats): rates over half a second each, 6 in
# a 3 s first window. Long enough that a device's short periodic pauses average within a batch
# or two (a throttle's 100 ms slices: 5 a batch, where a quarter second held 2 or 3 and put the
# batches 20% apart; a GC stall every 8 MiB at 10 MB/s, every 0.84 s), short enough for df 5 in
# a first window where whole seconds gave df 2 (t 2.57, not 4.30). Longer where half a second
# holds fewer than MIN_BATCH_TRANSFERS transfers (16 MiB writes at 30 MB/s: 2.2 s), so a
# batch's rate is not just which transfers fell in it.
BATCH_MS = 500
MIN_BATCH_TRANSFERS = 4

# The percentiles the jobs ask fio for (percentile_list), by LatencyNs field: fio's JSON keys.
_PERCENTILE_KEYS = {f"p{p.replace('.', '_')}": f"{float(p):.6f}" for p in PERCENTILES}


def parse_run(spec: TestSpec, job: FioJob, output: FioOutput) -> ParsedRun:
    """One fio run of `spec`, its per-I/O logs read once, ready to pool with the runs
    extending it; or a typed error if fio failed."""
    fio_job = single_job(output)
    return ParsedRun(
        job_text=job.text,
        elapsed_s=output.elapsed_s,
        read=_window(output, job, spec, fio_job, "read") if spec.pattern.reads else None,
        write=_window(output, job, spec, fio_job, "write") if spec.pattern.writes else None,
    )


@dataclass(frozen=True)
class WrittenWindow:
    """What a job that ends once it has written its size (jobs.py `until_written`) measured
    after its ramp: until its last logged write (`ms`, without the end_fsync that fio's
    runtime holds too; 0 when it wrote its size within the ramp: fio then never reset its
    figures, its runtime and io_bytes are the ramp's, and logged nothing: fio 3.33 time.c
    ramp_time_over, checked with fio 3.33); `capped` when fio stopped it on the clock (its
    runtime reached the window) rather than at its size."""

    ms: float
    capped: bool


def written_window(output: FioOutput, job: FioJob) -> WrittenWindow:
    completions = read_completions(output.logs, 1)
    if not completions:
        return WrittenWindow(0.0, capped=False)
    runtime_ms = json_number(json_section(single_job(output), "write"), "runtime")
    capped = job.window_s is not None and runtime_ms >= job.window_s * 1000
    return WrittenWindow(last_completion_ms(completions), capped)


def last_completion_ms(completions: Sequence[Completion]) -> float:
    """When the last of `completions` was logged, counted to the end of the log's resolution."""
    return max(c.time_ms for c in completions) + LOG_RESOLUTION_MS


def pooled_result(
    spec: TestSpec,
    runs: Sequence[ParsedRun],
    *,
    sequential: bool = False,
    decision: bool = False,
    slow: SlowMoments | None = None,
) -> TestResult:
    """The result of one test over the windows of `runs` in a row (one, or a first window and
    its extensions): the windows' bytes over their time together, the interval from all their
    rates (`_pooled`). `sequential`: the test stops once its verdict is decided
    (flashmark.bench.lengths), so its intervals are anytime-valid and it carries the decision
    interval its checks are judged on. `decision`: the test is judged on a decision interval
    but measured its full length at once (nothing stopped on it), so it is the fixed-length
    99.5% one. Either way its writes' intervals reach down by the `slow` moments of the run's
    earlier writes that its windows did not meet (flashmark.bench.slow_moments)."""
    if not runs:
        raise ValueError("no runs to pool")
    reads = [run.read for run in runs if run.read is not None]
    writes = [run.write for run in runs if run.write is not None]
    job_file = runs[0].job_text + "".join(
        f"\n# then, pooled with the window above (flashmark.bench.lengths):\n{run.job_text}"
        for run in runs[1:]
    )
    return TestResult(
        spec=spec,
        read=_pooled(reads, sequential, decision) if reads else None,
        write=_pooled(writes, sequential, decision, slow) if writes else None,
        job_file=job_file,
        elapsed_s=sum(run.elapsed_s for run in runs),
    )


def parse_prepare_output(output: FioOutput, expected_bytes: int, time_limit_s: int) -> float:
    """Check the preparation wrote the whole area; return its write rate in bytes/s."""
    fio_job = single_job(output)
    write = json_section(fio_job, "write")
    written = int(json_number(write, "io_bytes"))
    if written < expected_bytes:
        raise FioFailed(
            f"preparing the test area wrote {written} of {expected_bytes} bytes within "
            f"{time_limit_s} s: the device is very slow; choose a smaller --size"
        )
    return json_number(write, "bw_bytes")


@dataclass(frozen=True)
class _Window:
    """One direction of one run's measuring window, before windows are pooled."""

    headline: Headline  # its rate, and what its edges may put it off by (_window, below)
    window_ms: int
    fio_runtime_ms: int
    io_bytes: int
    total_ios: int
    latency: LatencyNs
    latency_count: int  # the I/Os `latency` is of (fio's lat_ns "N")
    per_interval_bps: tuple[float, ...]
    interval_ms: int
    interval_samples: tuple[float, ...]  # the batch rates its 95% interval rests on
    batch_ms: float  # about how long each of them is
    fsync_ms: float | None  # writes: the end_fsync's time
    sustained: SustainedWrite | None
    pauses: Pauses | None  # writes: the slow moments among its completions


@dataclass(frozen=True)
class ParsedRun:
    """One fio run of a test, parsed (`parse_run`): each direction's window, before windows
    are pooled (`pooled_result`)."""

    job_text: str
    elapsed_s: float
    read: _Window | None
    write: _Window | None


def _window(
    output: FioOutput, job: FioJob, spec: TestSpec, fio_job: Mapping[str, Any], key: str
) -> _Window:
    """One direction's window, counted from fio's per-I/O log (flashmark.fio.window): fio's
    own rates divide by a runtime that includes draining the queue and count the drained I/Os
    (docs/methodology.md, "Exact windows"). Writes count the durable rate (`_pooled`). A job that
    ended early (an error) is measured over the time it ran."""
    ddir = 0 if key == "read" else 1  # fio's data direction numbers in its logs
    section = json_section(fio_job, key)
    lat = json_section(section, "lat_ns")
    percentiles = lat.get("percentile")
    if not isinstance(percentiles, Mapping):
        raise FioOutputError(
            f"fio JSON {key}.lat_ns has no percentiles (is lat_percentiles=1 set, and fio >= "
            f"3.11?): {quoted(lat)}"
        )
    values = {name: json_number(percentiles, raw) for name, raw in _PERCENTILE_KEYS.items()}
    latency = LatencyNs(
        min=json_number(lat, "min"),
        mean=json_number(lat, "mean"),
        max=json_number(lat, "max"),
        stddev=json_number(lat, "stddev"),
        **values,
    )
    fio_runtime_ms = int(json_number(section, "runtime"))
    window_ms = fio_runtime_ms
    if job.window_s is not None:
        window_ms = min(fio_runtime_ms, round(job.window_s * 1000))
    io_bytes = int(json_number(section, "io_bytes"))
    total_ios = int(json_number(section, "total_ios"))
    completions = read_completions(output.logs, ddir)
    # io_bytes counts what completed after the ramp, as the log does; total_ios counts what was
    # issued after it. fio 3.33 counts, but does not log, what completes in the moment between
    # the ramp's end and its switch to the running state (time.c ramp_time_over sets TD_RAMP;
    # io_u.c should_account wants TD_RUNNING): I/Os in flight at the window start, at most the
    # queue depth of them. They are added at time 0.
    missing = io_bytes - sum(c.bytes for c in completions)
    if missing and not (0 < missing <= spec.iodepth * spec.block_size_bytes):
        raise FioOutputError(
            f"fio's per-I/O log of {output.job_name!r} holds {io_bytes - missing} bytes of "
            f"{key}s, its JSON io_bytes {io_bytes} (logs: {sorted(output.logs) or 'none'}; is "
            "write_iops_log set, without log_avg_msec?)"
        )
    if missing:
        size = spec.block_size_bytes
        unlogged = [Completion(0.5, size) for _ in range(missing // size)]
        if missing % size:
            unlogged.append(Completion(0.5, missing % size))
        completions = unlogged + completions
    if job.ends_when_written and completions:
        # Its window is its writes: fio's runtime also holds the end_fsync, which the durable
        # rate counts on its own (fsync_ms below), as for a window that ends on the clock.
        window_ms = min(window_ms, math.ceil(last_completion_ms(completions)))
    inside = sum(1 for c in completions if c.time_ms < window_ms)
    batch_ms = max(float(BATCH_MS), MIN_BATCH_TRANSFERS * window_ms / max(1, inside))
    count = count_window(
        completions,
        window_ms,
        SAMPLE_INTERVAL_MS,
        spec.iodepth,
        ramped=job.ramp_s > 0,
        batch_ms=batch_ms,
    )
    fsync_ms = None
    if ddir == 1 and count.last_completion_ms is not None:
        # The end_fsync ran from the last write's completion until fio's runtime ended.
        fsync_ms = max(0.0, fio_runtime_ms - count.last_completion_ms)
    sustained = None
    if ddir == 1 and spec.name == SUSTAINED_WRITE_NAME:
        sustained = sustained_write(
            completions,
            steady=_steady_attained(fio_job),
            size_limit_bytes=job.size_limit_bytes,
            latencies_ns=read_latencies_ns(output.latency_logs, ddir) or None,
        )
    rates = count.interval_rates_bps
    return _Window(
        # The window's count, or the rate between whole bursts where the window's edges leave
        # the count less sure than that (a device completing in bursts: fio/window.py
        # WholeBursts); each is uncertain by what its edges may be off by, which widens its
        # interval.
        headline=surer_rate(count, completions),
        window_ms=window_ms,
        fio_runtime_ms=fio_runtime_ms,
        io_bytes=io_bytes,
        total_ios=total_ios,
        latency=latency,
        latency_count=int(lat["N"]) if isinstance(lat.get("N"), int) else total_ios,
        per_interval_bps=rates,
        interval_ms=count.interval_ms,
        # The interval rests on rates between burst ends (fio/window.py steady_rates), which
        # the window's edges do not skew; the per-second rates when there are too few bursts.
        interval_samples=count.steady_rates_bps or rates,
        batch_ms=batch_ms if count.steady_rates_bps else float(count.interval_ms),
        fsync_ms=fsync_ms,
        sustained=sustained,
        pauses=pauses_in(completions) if ddir == 1 else None,
    )


def _pooled(
    windows: Sequence[_Window],
    sequential: bool = False,
    judged: bool = False,
    slow: SlowMoments | None = None,
) -> DirectionResult:
    """One direction's result over `windows` in a row (one, or a first window and its
    extensions, flashmark.bench.lengths): each window's exact rate weighted by its length, which is
    the bytes of all over their time together; the 95% interval from all their batch rates
    (flashmark.stats: Student t, or the confidence sequence of a `sequential` test, which also
    gets its decision interval), centred there and widened by what their edges may put it off
    by (weighted alike). Each batch is known to the log's millisecond; a test below its floor
    (flashmark.bench.lengths) is at least +-10% wide.

    Writes: the durable rate, the windows' bytes over their time plus the time their
    end_fsyncs took to put them on the device; the accepted rate beside it. Latency: minimum,
    maximum, mean and standard deviation of all I/Os; the percentiles, which fio reports per
    run and which cannot be merged exactly, of the window with the most I/Os. A `sequential`
    or `judged` test (`pooled_result`'s `decision`) has a decision interval, and its writes'
    intervals reach down to the rate with the `slow` moments they did not meet."""
    window_ms = sum(w.window_ms for w in windows)
    weights = [w.window_ms / window_ms if window_ms > 0 else 1 / len(windows) for w in windows]
    iops = sum(w.headline.iops * k for w, k in zip(windows, weights, strict=True))
    bw_bytes = sum(w.headline.bw_bytes * k for w, k in zip(windows, weights, strict=True))
    edge_bps = sum(w.headline.uncertain_bps * k for w, k in zip(windows, weights, strict=True))
    why = WHOLE_BURSTS_METHOD if any(w.headline.between_bursts for w in windows) else EDGE_METHOD
    samples = [x for w in windows for x in w.interval_samples]
    batch_ms = sum(w.batch_ms * len(w.interval_samples) for w in windows) / max(1, len(samples))
    floor_sd = bw_bytes * LOG_RESOLUTION_MS / batch_ms if batch_ms > 0 else 0.0
    short = below_floor(window_ms, iops * window_ms / 1000)
    decision: MeanInterval | None = None
    if sequential:
        tightest = max(1, len(windows[0].interval_samples))

        def sequence(alpha: float) -> MeanInterval | None:
            return confidence_sequence(
                samples, bw_bytes, alpha=alpha, tightest=tightest, floor_sd=floor_sd, short=short
            )

        bw_interval = sequence(1 - CONFIDENCE)
        decision = sequence(DECISION_ALPHA)
    else:
        bw_interval = interval_of_mean(samples, mean=bw_bytes, floor_sd=floor_sd, short=short)
        if judged:
            decision = interval_of_mean(
                samples, bw_bytes, floor_sd=floor_sd, short=short, confidence=1 - DECISION_ALPHA
            )
    if edge_bps > 0:
        bw_interval = bw_interval and bw_interval.widened(edge_bps, why)
        decision = decision and decision.widened(edge_bps, why)
    unmet_s = _unmet_pauses_s(windows, slow) if sequential or judged else 0.0
    if unmet_s > 0:
        met = bw_bytes * window_ms / (window_ms + unmet_s * 1000)
        bw_interval = bw_interval and bw_interval.reaching(met, SLOW_MOMENTS_METHOD)
        decision = decision and decision.reaching(met, SLOW_MOMENTS_METHOD)
    accepted_iops = accepted_bw = fsync_ms = None
    fsyncs = [w.fsync_ms for w in windows if w.fsync_ms is not None]
    if fsyncs:  # writes: durable is the headline
        accepted_iops, accepted_bw = iops, bw_bytes
        fsync_ms = sum(fsyncs)
        durable = window_ms / (window_ms + fsync_ms)
        iops, bw_bytes = iops * durable, bw_bytes * durable
        bw_interval = bw_interval and bw_interval.scaled(durable)
        decision = decision and decision.scaled(durable)
    per_byte = iops / bw_bytes if bw_bytes > 0 else 0.0
    iops_interval = bw_interval.scaled(per_byte) if bw_interval and bw_bytes > 0 else None
    iops_decision = decision.scaled(per_byte) if decision and bw_bytes > 0 else None
    rates = [x for w in windows for x in w.per_interval_bps]
    return DirectionResult(
        iops=iops,
        bw_bytes=bw_bytes,
        io_bytes=sum(w.io_bytes for w in windows),
        total_ios=sum(w.total_ios for w in windows),
        runtime_ms=window_ms,
        fio_runtime_ms=sum(w.fio_runtime_ms for w in windows),
        lat_ns=_pooled_latency(windows),
        bw_per_second=bandwidth_series(rates, windows[0].interval_ms),
        accepted_iops=accepted_iops,
        accepted_bw_bytes=accepted_bw,
        fsync_ms=fsync_ms,
        bw_ci95=bw_interval,
        iops_ci95=iops_interval,
        bw_decision=decision,
        iops_decision=iops_decision,
        sustained=windows[0].sustained if len(windows) == 1 else None,
    )


def _unmet_pauses_s(windows: Sequence[_Window], slow: SlowMoments | None) -> float:
    """The time the `slow` moments of the run's earlier writes call for in `windows` beyond
    the pauses they met (flashmark.bench.slow_moments); 0 for reads or without any."""
    found = [w.pauses for w in windows if w.pauses is not None]
    if slow is None or not found:
        return 0.0
    return slow.unmet_s(functools.reduce(SlowMoments.seen, found, SlowMoments()))


def _pooled_latency(windows: Sequence[_Window]) -> LatencyNs:
    """The latency of all the windows' I/Os (see `_pooled`); one window's as fio gave it."""
    if len(windows) == 1:
        return windows[0].latency
    counts = [w.latency_count for w in windows]
    total = sum(counts)
    if total < 2:
        return windows[0].latency
    mean = sum(w.latency.mean * n for w, n in zip(windows, counts, strict=True)) / total
    # fio's stddev is the sample one (stat.c calc_lat: sqrt(S / (n - 1))): pooled, each
    # window's sum of squares about its own mean plus its I/Os times its mean's distance from
    # the pooled one, over N - 1.
    squares = sum(
        (n - 1) * w.latency.stddev**2 + n * (w.latency.mean - mean) ** 2
        for w, n in zip(windows, counts, strict=True)
    )
    busiest = max(windows, key=lambda w: w.latency_count).latency
    return dataclasses.replace(
        busiest,
        min=min(w.latency.min for w in windows),
        max=max(w.latency.max for w in windows),
        mean=mean,
        stddev=math.sqrt(squares / (total - 1)),
    )


def sustained_write(
    completions: Sequence[Completion],
    *,
    steady: bool,
    size_limit_bytes: int | None,
    latencies_ns: Sequence[int] | None = None,
) -> SustainedWrite | None:
    """The cache and the rates either side of it, from a sustained write's completions:
    (bytes written so far, completion time) after each request, fed to estimate_cache; why the
    test stopped (`steady`: fio's steady-state rule held); whether the cache was exceeded; and
    the rates per 4 MiB sub-unit after it, as the SD speed classes are measured
    (flashmark.bench.speed_class_rate). None when there are too few completions to say anything."""
    points = [(0, 0)]
    written = 0
    for completion in completions:
        written += completion.bytes
        points.append((written, round(completion.time_ms * 1_000_000)))
    estimate = estimate_cache(points)
    if estimate is None or estimate.sustained_bw_bytes is None:
        return None
    if steady:
        stopped_by = STOPPED_STEADY
    elif size_limit_bytes is not None and written >= size_limit_bytes:
        stopped_by = STOPPED_SIZE_LIMIT
    else:
        stopped_by = STOPPED_TIME_LIMIT
    if estimate.found and estimate.bytes is not None:
        exceeded: bool | None = True
        graded_from = estimate.bytes
    else:
        # No fall-off: a steady rate is taken as a device without a cache; a stop at a limit
        # leaves open that the cache is larger than what was written.
        exceeded = None if steady else False
        graded_from = SUB_UNIT_BYTES  # all but the first sub-unit (the card's preparation)
    return SustainedWrite(
        cache_bytes=estimate.bytes if estimate.found else None,
        burst_bw_bytes=estimate.burst_bw_bytes if estimate.found else None,
        sustained_bw_bytes=estimate.sustained_bw_bytes,
        written_bytes=written,
        stopped_by=stopped_by,
        cache_exceeded=exceeded,
        sub_units=sub_unit_rates(completions, graded_from, latencies_ns),
    )


def _steady_attained(fio_job: Mapping[str, Any]) -> bool:
    """Whether fio's steady-state rule ended the job: its JSON "steadystate" object's
    "attained" (fio 3.33 stat.c, json output of ss_state & FIO_SS_ATTAINED); absent without
    the rule."""
    section = fio_job.get("steadystate")
    return isinstance(section, Mapping) and bool(section.get("attained"))


def bandwidth_series(rates_bps: Sequence[float], interval_ms: int) -> BandwidthSeries | None:
    """The per-interval rates of the window (bytes/s) and their spread; None when empty."""
    if not rates_bps:
        return None
    return BandwidthSeries(
        interval_ms=interval_ms,
        samples_bps=tuple(rates_bps),
        min_bps=min(rates_bps),
        max_bps=max(rates_bps),
        mean_bps=statistics.fmean(rates_bps),
        stddev_bps=statistics.stdev(rates_bps) if len(rates_bps) > 1 else 0.0,
    )
