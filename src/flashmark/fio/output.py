"""fio's JSON output of one run: its one job, or the typed error that fio's exit status, its
JSON or its stderr names (a failed device, a full or read-only filesystem, refused direct I/O).

Read from fio's JSON output, never the terse format whose field positions changed between fio
versions (fio HOWTO, "Interpreting the output").
"""

from __future__ import annotations

import errno
import json
import math
import os
import signal
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
from flashmark.fio.runner import FioOutput

# errno values fio reports in a job's "error" field that mean the device itself failed.
_DEVICE_ERRNOS = {errno.EIO, errno.ENXIO, errno.ENODEV, errno.ENOMEDIUM, errno.EREMOTEIO}


def single_job(output: FioOutput) -> Mapping[str, Any]:
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
            f"fio JSON for {output.job_name!r} should hold exactly one job, found: {quoted(jobs)}"
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
            f"fio JSON for {output.job_name!r} does not parse ({error}): {quoted(text)}"
        ) from None
    if document is not None and not isinstance(document, Mapping):
        raise FioOutputError(f"fio JSON for {output.job_name!r} is not an object: {quoted(text)}")
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


def json_section(parent: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = parent.get(key)
    if not isinstance(value, Mapping):
        raise FioOutputError(f"fio JSON has no {key!r} object where expected: {quoted(parent)}")
    return value


def json_number(parent: Mapping[str, Any], key: str) -> float:
    value = parent.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FioOutputError(f"fio JSON field {key!r} is not a number: {quoted(parent)}")
    return float(value)


def quoted(value: object, limit: int = 300) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + "..."
