"""fio output -> TestResult. Pure; loud on surprises (the message quotes what it found).

Reads fio's JSON output (never the terse format, whose field positions changed between fio
versions and broke other tools) and the per-second bandwidth logs. Field meanings are from the
fio HOWTO ("Interpreting the output", "Log File Formats"):
- read/write: iops, bw_bytes (bytes/s), io_bytes, total_ios, runtime (ms);
- lat_ns: total latency; with lat_percentiles=1 its "percentile" keys are "50.000000" etc.;
  fio_runtime_ms: measured, see `_direction` for why the rates divide by the window instead;
- bw log lines: "time (ms), value (KiB/s), data direction (0 read, 1 write, 2 trim), block
  size, offset[, priority]".
"""

from __future__ import annotations

import errno
import json
import math
import os
import signal
import statistics
from collections.abc import Mapping
from typing import Any

from flashmark.errors import (
    DeviceFailed,
    DirectIONotSupported,
    FioFailed,
    FioOutputError,
    NotEnoughSpace,
    ReadOnlyTarget,
    TargetPermissionDenied,
)
from flashmark.fio.jobs import BW_LOG_INTERVAL_MS, FioJob
from flashmark.fio.runner import FioOutput
from flashmark.model import BandwidthSeries, DirectionResult, LatencyNs, TestResult, TestSpec
from flashmark.units import KiB

_PERCENTILE_KEYS = {
    "p50": "50.000000",
    "p90": "90.000000",
    "p99": "99.000000",
    "p99_9": "99.900000",
    "p99_99": "99.990000",
}
# errno values fio reports in a job's "error" field that mean the device itself failed.
_DEVICE_ERRNOS = {errno.EIO, errno.ENXIO, errno.ENODEV, errno.ENOMEDIUM, errno.EREMOTEIO}


def parse_test_output(spec: TestSpec, job: FioJob, output: FioOutput) -> TestResult:
    """The result of one test, or a typed error if fio failed."""
    fio_job = _single_job(output)
    read = _direction(output, job, fio_job, "read", 0) if spec.pattern.reads else None
    write = _direction(output, job, fio_job, "write", 1) if spec.pattern.writes else None
    return TestResult(
        spec=spec, read=read, write=write, job_file=job.text, elapsed_s=output.elapsed_s
    )


def parse_prepare_output(output: FioOutput, expected_bytes: int, time_limit_s: int) -> float:
    """Check the preparation wrote the whole area; return its write rate in bytes/s."""
    fio_job = _single_job(output)
    write = _section(fio_job, "write")
    written = int(_number(write, "io_bytes"))
    if written < expected_bytes:
        raise FioFailed(
            f"preparing the test area wrote {written} of {expected_bytes} bytes within "
            f"{time_limit_s} s: the device is very slow; choose a smaller --size"
        )
    return _number(write, "bw_bytes")


def _single_job(output: FioOutput) -> Mapping[str, Any]:
    """fio's one job (group_reporting), after turning any failure into a typed error."""
    document = _load(output)
    if output.returncode < 0 and document is None:
        name = signal.Signals(-output.returncode).name
        raise FioFailed(
            f"fio was killed by {name} during {output.job_name!r}{_stderr_tail(output)}"
        )
    jobs = document.get("jobs") if document is not None else None
    job_error = 0
    if isinstance(jobs, list) and len(jobs) == 1 and isinstance(jobs[0], Mapping):
        job_error = int(jobs[0].get("error", 0) or 0)
    if output.returncode != 0 or job_error != 0:
        _raise_failure(output, job_error)
    if document is None:
        raise FioOutputError(f"fio wrote no JSON for {output.job_name!r}{_stderr_tail(output)}")
    if not isinstance(jobs, list) or len(jobs) != 1 or not isinstance(jobs[0], Mapping):
        raise FioOutputError(
            f"fio JSON for {output.job_name!r} should hold exactly one job, found: {_quote(jobs)}"
        )
    return jobs[0]


def _load(output: FioOutput) -> Mapping[str, Any] | None:
    text = output.json_text.strip()
    if not text:
        return None
    # fio may print notes ("fio: ...") before the JSON object in the same file.
    start = text.find("{")
    try:
        document = json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError as error:
        raise FioOutputError(
            f"fio JSON for {output.job_name!r} does not parse ({error}): {_quote(text)}"
        ) from None
    if document is not None and not isinstance(document, Mapping):
        raise FioOutputError(f"fio JSON for {output.job_name!r} is not an object: {_quote(text)}")
    return document


def _raise_failure(output: FioOutput, job_error: int) -> None:
    stderr = output.stderr.lower()
    code = job_error or _errno_in(stderr)
    where = f" during {output.job_name!r}{_stderr_tail(output)}"
    if code in _DEVICE_ERRNOS or "no such device" in stderr or "input/output error" in stderr:
        raise DeviceFailed(f"the device failed or disappeared ({_errno_name(code)}){where}")
    if code == errno.ENOSPC:
        raise NotEnoughSpace(f"the filesystem ran out of space{where}; choose a smaller --size")
    if code == errno.EROFS:
        raise ReadOnlyTarget(f"the filesystem is read-only{where}")
    if code in (errno.EACCES, errno.EPERM):
        raise TargetPermissionDenied(
            f"permission denied{where}; run as root or pick a folder you can write"
        )
    if code == errno.EINVAL and "direct" in stderr:
        raise DirectIONotSupported(
            f"the target refused direct I/O{where}; --buffered runs "
            "with the page cache (results labelled buffered)"
        )
    if output.returncode < 0:
        name = signal.Signals(-output.returncode).name
        raise FioFailed(f"fio was killed by {name}{where}")
    raise FioFailed(f"fio failed (exit {output.returncode}, {_errno_name(code)}){where}")


def _errno_in(stderr: str) -> int:
    """fio's messages end in "...: <strerror>"; map the known texts back to errno values."""
    for code in (
        errno.EIO,
        errno.ENXIO,
        errno.ENODEV,
        errno.ENOSPC,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.EINVAL,
    ):
        if os.strerror(code).lower() in stderr:
            return code
    return 0


def _errno_name(code: int) -> str:
    return errno.errorcode.get(code, "no errno") if code else "no errno"


def _stderr_tail(output: FioOutput) -> str:
    lines = [line.strip() for line in output.stderr.splitlines() if line.strip()]
    return f": {lines[-1]}" if lines else ""


def _direction(
    output: FioOutput, job: FioJob, fio_job: Mapping[str, Any], key: str, ddir: int
) -> DirectionResult:
    """One direction's figures; rates are per second of the measuring window.

    fio counts the I/Os completed within the window, but its runtime runs on until the I/Os
    still queued when the window closed have completed (and the end_fsync is done), and it
    divides by that. At 30 IOPS and queue depth 32 the queue alone takes a second: fio 3.33
    measured 240 I/Os in 8 s (its per-second IOPS log read 30 each second) yet reported a
    runtime of 9.1 s and 26.5 IOPS. A slow card at a deep queue is exactly what flashmark is
    for, so the rates divide by the window; fio's runtime is kept as fio_runtime_ms. A job that
    ended early (an error) is measured over the time it ran.
    """
    section = _section(fio_job, key)
    lat = _section(section, "lat_ns")
    percentiles = lat.get("percentile")
    if not isinstance(percentiles, Mapping):
        raise FioOutputError(
            f"fio JSON {key}.lat_ns has no percentiles (is lat_percentiles=1 set, and fio >= "
            f"3.11?): {_quote(lat)}"
        )
    values = {name: _number(percentiles, raw) for name, raw in _PERCENTILE_KEYS.items()}
    latency = LatencyNs(
        min=_number(lat, "min"),
        mean=_number(lat, "mean"),
        max=_number(lat, "max"),
        stddev=_number(lat, "stddev"),
        **values,
    )
    fio_runtime_ms = int(_number(section, "runtime"))
    window_ms = fio_runtime_ms
    if job.window_s is not None:
        window_ms = min(fio_runtime_ms, round(job.window_s * 1000))
    io_bytes = int(_number(section, "io_bytes"))
    total_ios = int(_number(section, "total_ios"))
    return DirectionResult(
        iops=total_ios * 1000 / window_ms if window_ms else 0.0,
        bw_bytes=io_bytes * 1000 / window_ms if window_ms else 0.0,
        io_bytes=io_bytes,
        total_ios=total_ios,
        runtime_ms=window_ms,
        fio_runtime_ms=fio_runtime_ms,
        lat_ns=latency,
        bw_per_second=bandwidth_series(output.bw_logs, ddir),
    )


def bandwidth_series(logs: Mapping[str, str], ddir: int) -> BandwidthSeries | None:
    """Per-interval bandwidth of one direction from fio's bw logs (values in KiB/s)."""
    samples: list[float] = []
    for name, text in logs.items():
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            fields = [field.strip() for field in line.split(",")]
            try:
                direction = int(fields[2])
                value_kib_s = float(fields[1])
            except (IndexError, ValueError):
                raise FioOutputError(
                    f"fio bandwidth log {name} line {number} is not 'time, value, direction, "
                    f"...': {line!r}"
                ) from None
            if direction == ddir:
                samples.append(value_kib_s * KiB)
    if not samples:
        return None
    return BandwidthSeries(
        interval_ms=BW_LOG_INTERVAL_MS,
        samples_bps=tuple(samples),
        min_bps=min(samples),
        max_bps=max(samples),
        mean_bps=statistics.fmean(samples),
        stddev_bps=statistics.stdev(samples) if len(samples) > 1 else 0.0,
    )


def _section(parent: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = parent.get(key)
    if not isinstance(value, Mapping):
        raise FioOutputError(f"fio JSON has no {key!r} object where expected: {_quote(parent)}")
    return value


def _number(parent: Mapping[str, Any], key: str) -> float:
    value = parent.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FioOutputError(f"fio JSON field {key!r} is not a number: {_quote(parent)}")
    return float(value)


def _quote(value: object, limit: int = 300) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + "..."
