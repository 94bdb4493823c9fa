"""TestSpec + Settings -> fio job file. Pure: no I/O, so every job is testable and printable.

The job files are complete: `flashmark run --show-fio` prints them and anyone can re-run one
with plain `fio FILE --output-format=json`. Options and why they are set:

- direct=1: O_DIRECT, so the page cache does not flatter the device (seed 000 measured with
  direct=0 and its random writes are mostly page cache). direct=0 only with --buffered.
- refill_buffers=1: fresh random data for every I/O, so a compressing or deduplicating
  controller cannot shortcut the writes (fio HOWTO, "refill_buffers").
- randrepeat=0, norandommap=1: a new random sequence each run, and no map forcing every block
  to be hit exactly once (time-based random tests wrap around the area anyway).
- time_based + runtime + ramp_time: a fixed measuring window after a warm-up that is not
  counted, so a short burst into a card's cache does not decide the result. ramp_time=0
  (`--ramp 0`) is fio's default, no warm-up: in_ramp_time() and ramp_time_over() test
  `td->o.ramp_time` first (fio-3.33 time.c), so the stats are never reset and the window, its
  logs and the I/O start together at the job's epoch. It is written out all the same, so the
  printed job says what was run. The leading seq-write of a profile that grades is not
  time_based: fio ends it at its `size` (the area, the ramp's writes included) or at its
  runtime, whichever comes first (`until_written`).
- end_fsync=1 on writes: the data must be on the device before the clock stops.
- clocksource=clock_gettime: the kernel's monotonic clock (through the vDSO), the same on
  every architecture. Left to choose, fio first checks the CPU's cycle counter across every CPU
  at each start where the architecture calls it reliable (fio-3.33 gettime.c fio_clock_init,
  fio_monotonic_clocktest; skipped once a clock source is set), which cost about 65 ms per
  fio run on a 2-core x86 host; the per-I/O times need no finer clock than the kernel's (the
  logs hold whole milliseconds, the latencies nanoseconds either way).
- lat_percentiles=1: percentiles of the whole latency (submission + completion), what an
  application waits for; fio reports them in JSON since 3.11 (axboe/fio issue #691).
- write_iops_log without log_avg_msec: one log line per completed I/O, with its completion time
  in ms from the start of the measuring window (fio HOWTO, "write_iops_log", "log_avg_msec":
  without averaging every I/O is logged; "Log File Formats"). flashmark counts from it exactly
  the I/O completed inside the window, the per-second rates (spread, chart, confidence
  interval) and the durable write rate (fio/window.py). log_offset=0 (no offset column) and
  per_job_logs=1 (one file per job, `NAME_iops.1.log`) are fio's defaults, written out so the
  columns and the name cannot move (fio HOWTO, "log_offset", "per_job_logs"); sequential
  writes set log_offset=1 (a fifth column, the I/O's offset), which tells how far they wrote:
  the preparation then writes only the rest (plan.py). log_avg_msec
  applies to every log of a job, which is why no averaged bandwidth log is written beside it.
  The logs go to flashmark's work folder, never to the measured folder.
- thread=1: jobs run as threads of fio's one process instead of forked processes (fio HOWTO,
  "thread"). fio 3.33 puts forked job processes in sessions of their own, where a stopped or
  killed fio left them writing; as threads they live and die with the process flashmark
  supervises (fio/runner.py). The I/O path is the same: each job still submits from its own
  thread, one job per test.

Paths are data, never syntax. fio's job-file parser cuts a line at the first ';' or '#'
(fio-3.33 parse.c, strip_blank_end), strips blanks and control characters at both ends, expands
`${VAR}` and the reserved `$pagesize`, `$mb_memory`, `$ncpus` (HOWTO "Environment variables",
"Reserved keywords"), and `filename=` splits on ':' (HOWTO "filename"). A folder called
`notes#2024` became `notes`. So no user string ever goes in a job file: a folder's test file is
a generated name relative to fio's working directory (the runner starts fio inside the folder,
opened once and checked, target.py), a device is the kernel's `/dev/NAME`, and the log folder is
flashmark's own work folder; each must match the patterns below or building the job fails.
"""

from __future__ import annotations

from flashmark import __version__
from flashmark.bench.model import Pattern, Settings, TestSpec
from flashmark.bench.sustained import (
    SUSTAINED_SIZE_CAP_BYTES,
    SUSTAINED_STEADY_RAMP_S,
    SUSTAINED_STEADY_S,
    SUSTAINED_STEADY_SLOPE_PCT,
    SUSTAINED_WRITE_NAME,
)
from flashmark.fio.job import FioJob, is_fio_literal_file, is_fio_literal_folder
from flashmark.units import MiB

PERCENTILES = ("50", "90", "99", "99.9", "99.99")
# The per-interval rates (spread, chart, confidence interval) are per second of the window.
SAMPLE_INTERVAL_MS = 1000
PREPARE_JOB_NAME = "prepare"
# The preparation writes in 1 MiB blocks. fio writes no partial last block: the test area must
# be a whole number of them (plan.plan_area rounds it), or the preparation falls short.
PREPARE_BLOCK_BYTES = MiB
# A size-based preparation that has not finished after this long is stopped and reported:
# the device writes slower than 1 GiB per ~20 min, and the user should pick a smaller --size.
PREPARE_TIME_LIMIT_S = 1800


def job_for_test(
    spec: TestSpec,
    settings: Settings,
    filename: str,
    *,
    readonly: bool,
    log_folder: str,
    window_s: int | None = None,
    again: bool = False,
    ramp_s: int | None = None,
    extension: int = 0,
    until_written: bool = False,
) -> FioJob:
    """The fio job measuring one test of a profile against `filename`: a generated test-file
    name relative to fio's working directory, or a device's /dev/NAME. Its per-I/O log goes to
    `log_folder` (absolute). Both must be literal to fio's parser, else ValueError (a bug).
    `window_s` is the measuring window, the settings' runtime unless given (flashmark.bench.lengths:
    a short first window). `again` names the run of a test whose first window was not enough
    `NAME-full`, with its own output and log files (`NAME-again` when it is shorter than the
    runtime: a leading sequential write's window too short to judge); `extension` N > 0 names
    the Nth run extending its first window `NAME-moreN` (its window is pooled with the
    first's). `ramp_s`
    is the job's own warm-up, the settings' ramp unless given (plan.py: shorter after another
    timed test). `until_written`: a sequential write that also ends once it has written the
    area, its ramp's bytes included (not time_based: fio ends a job at `size` or `runtime`,
    whichever comes first, fio HOWTO "runtime"), so its window is what is left of the window
    after the ramp (plan.py: a leading sequential write in a profile that grades)."""
    if not is_fio_literal_folder(log_folder):
        raise ValueError(f"fio would not read this log folder literally: {log_folder!r}")
    if spec.name == SUSTAINED_WRITE_NAME:
        return sustained_job(spec, settings, filename, readonly=readonly, log_folder=log_folder)
    window = settings.runtime_s if window_s is None else window_s
    name = spec.name
    what = f"test {spec.name} ({spec.description}), profile {settings.profile}"
    if again and window < settings.runtime_s:  # a leading seq-write's window (measure.py)
        name = f"{spec.name}-again"
        what += f", measured again for {window} s: its first window was too short"
    elif again:
        name = f"{spec.name}-full"
        what += ", measured again at full length: its first window was not enough"
    if extension:
        name = f"{spec.name}-more{extension}"
        what += f", extension {extension} of its first window, which was not enough"
    if until_written:
        what += f", until it has written the area or measured {window} s"
    lines = _head(what, settings, filename)
    ramp = settings.ramp_s if ramp_s is None else ramp_s
    lines += [
        *([] if until_written else ["time_based=1"]),
        f"runtime={window}",
        f"ramp_time={ramp}",
        "randrepeat=0",
        "norandommap=1",
        "lat_percentiles=1",
        f"percentile_list={':'.join(PERCENTILES)}",
        f"write_iops_log={log_folder}/{name}",
        f"log_offset={1 if spec.pattern is Pattern.SEQ_WRITE else 0}",
        "per_job_logs=1",
        *_section(name, spec.pattern.value, spec.block_size_bytes, spec.iodepth),
    ]
    if spec.pattern is Pattern.RAND_MIXED:
        lines.append(f"rwmixread={spec.rwmix_read_pct}")
    if spec.writes:
        lines.append("end_fsync=1")
    if extension:
        # A result's job file holds its windows' job files in order (bench/results.py): fio runs a
        # file's jobs together unless each waits for those before it (fio HOWTO "stonewall").
        lines.append("stonewall")
    expected = float(window + ramp)
    return FioJob(
        name=name,
        text="\n".join(lines) + "\n",
        writes=spec.writes,
        readonly=readonly,
        expected_s=expected,
        window_s=float(window),
        # Generous: fsync at the end of a write test on a slow card can take long.
        timeout_s=max(120.0, 4 * expected),
        ramp_s=ramp,
        block_bytes=spec.block_size_bytes,
        ends_when_written=until_written,
    )


# The sustained write is size-based: a slow card may take this long before it stops.
SUSTAINED_TIME_LIMIT_S = 1800


def sustained_size_limit(settings: Settings) -> int:
    """How much the sustained write writes at most: the test area, capped."""
    return min(settings.size_bytes, SUSTAINED_SIZE_CAP_BYTES)


def sustained_job(
    spec: TestSpec, settings: Settings, filename: str, *, readonly: bool, log_folder: str
) -> FioJob:
    """The `sustained-write` test: sequential writes from the start of the area, not time-based,
    until `io_size` is written or fio's steady-state rule holds (fio HOWTO, "steadystate":
    bw_slope:P% ends the job when the slope of the per-second bandwidth over the last
    `steadystate_duration` seconds is under P% of its mean; `steadystate_ramp_time` seconds
    are not judged). No ramp: the first bytes are the cache's, and estimate_cache needs them.
    One log line per I/O, as in every test, from which the cache is estimated (bench/results.py),
    and a per-I/O latency log (write_lat_log: NAME_lat.1.log holds each I/O's total latency in
    ns, from its issue to its completion): the card's own time per write, without the host's
    gaps between writes, for the speed-class measurement (flashmark.bench.speed_class_rate)."""
    limit = sustained_size_limit(settings)
    what = f"test {spec.name} ({spec.description}), profile {settings.profile}"
    lines = _head(what, settings, filename)
    lines += [
        f"io_size={limit}",
        f"runtime={SUSTAINED_TIME_LIMIT_S}",
        f"steadystate=bw_slope:{SUSTAINED_STEADY_SLOPE_PCT}%",
        f"steadystate_duration={SUSTAINED_STEADY_S}",
        f"steadystate_ramp_time={SUSTAINED_STEADY_RAMP_S}",
        "lat_percentiles=1",
        f"percentile_list={':'.join(PERCENTILES)}",
        f"write_iops_log={log_folder}/{spec.name}",
        f"write_lat_log={log_folder}/{spec.name}",
        # Offsets: how far it wrote, so a preparation after it writes only the rest (plan.py).
        "log_offset=1",
        "per_job_logs=1",
    ]
    return _size_based_write(
        spec.name,
        lines,
        rw=spec.pattern.value,
        block_bytes=spec.block_size_bytes,
        iodepth=spec.iodepth,
        readonly=readonly,
        time_limit_s=SUSTAINED_TIME_LIMIT_S,
        size_limit_bytes=limit,
    )


def prepare_job(settings: Settings, filename: str, offset_bytes: int = 0) -> FioJob:
    """Write the test area once, so reads read written data (not holes or unwritten extents,
    which a filesystem answers without touching the device) and fio does not lay out the file
    itself. From `offset_bytes` on (a whole number of PREPARE_BLOCK_BYTES) when the sequential
    write tests before it wrote the start of the area (plan.py)."""
    if offset_bytes % PREPARE_BLOCK_BYTES or not 0 <= offset_bytes < settings.size_bytes:
        raise ValueError(f"preparation offset {offset_bytes} is not a block inside the area")
    if offset_bytes:
        what = f"prepare: write the test area from byte {offset_bytes} on (the rest is written)"
    else:
        what = "prepare: write the whole test area once before the tests"
    # fio does its I/O in [offset, offset + size) (fio HOWTO, "offset", "size").
    lines = _head(what, settings, filename, settings.size_bytes - offset_bytes)
    if offset_bytes:
        lines.append(f"offset={offset_bytes}")
    lines.append(f"runtime={PREPARE_TIME_LIMIT_S}")
    return _size_based_write(
        PREPARE_JOB_NAME,
        lines,
        rw="write",
        block_bytes=PREPARE_BLOCK_BYTES,
        iodepth=4,
        readonly=False,
        time_limit_s=PREPARE_TIME_LIMIT_S,
    )


def _size_based_write(
    name: str,
    lines: list[str],
    *,
    rw: str,
    block_bytes: int,
    iodepth: int,
    readonly: bool,
    time_limit_s: int,
    size_limit_bytes: int | None = None,
) -> FioJob:
    """A write job that ends when its bytes are written (fsynced at the end), not on a clock: no
    expected time, no window; fio stops it at `time_limit_s` (its runtime) and the runner gives
    fio 300 s more to end. `lines` are its header and global options."""
    lines = [
        *lines,
        *_section(name, rw, block_bytes, iodepth),
        "end_fsync=1",
    ]
    return FioJob(
        name=name,
        text="\n".join(lines) + "\n",
        writes=True,
        readonly=readonly,
        expected_s=None,
        window_s=None,
        timeout_s=time_limit_s + 300.0,
        size_limit_bytes=size_limit_bytes,
        block_bytes=block_bytes,
    )


def _section(name: str, rw: str, block_bytes: int, iodepth: int) -> list[str]:
    """The job's own section, after the global options: its name, pattern, block and depth."""
    return ["", f"[{name}]", f"rw={rw}", f"bs={block_bytes}", f"iodepth={iodepth}"]


def _head(what: str, settings: Settings, filename: str, size_bytes: int | None = None) -> list[str]:
    """A job file's header (`what` it runs, how to re-run it) and its global options."""
    if filename.startswith("/"):
        how = "; re-run with: fio THIS_FILE --output-format=json"
    else:
        how = (
            "; re-run from inside the measured folder (filename= is relative to it): "
            "fio THIS_FILE --output-format=json"
        )
    if not is_fio_literal_file(filename):
        raise ValueError(
            f"fio would not read this file name literally: {filename!r}; job files only name "
            "generated test files and /dev nodes"
        )
    head = [f"; flashmark {__version__}: {what}", how, "[global]"]
    return [
        *head,
        f"filename={filename}",
        f"size={settings.size_bytes if size_bytes is None else size_bytes}",
        f"ioengine={settings.ioengine}",
        f"direct={1 if settings.direct else 0}",
        "thread=1",
        "refill_buffers=1",
        "group_reporting=1",
        "clocksource=clock_gettime",
    ]
