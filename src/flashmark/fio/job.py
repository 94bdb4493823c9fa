"""One fio invocation (FioJob), and the names a job file may hold.

fio's job-file parser cuts a line at the first ';' or '#' (fio-3.33 parse.c, strip_blank_end),
strips blanks and control characters at both ends, expands `${VAR}` and the reserved
`$pagesize`, `$mb_memory`, `$ncpus` (HOWTO "Environment variables", "Reserved keywords"), and
`filename=` splits on ':' (HOWTO "filename"). So a job file names only what these patterns
allow: a generated file name relative to fio's working directory, the kernel's `/dev/NAME`,
and an absolute folder of plain characters for the logs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What a job file may name (see the module doc): characters fio's parser takes literally.
_RELATIVE_NAME = re.compile(r"\.?[A-Za-z0-9][A-Za-z0-9._-]*")  # a test file in fio's cwd


_DEVICE_NODE = re.compile(r"/dev/[A-Za-z0-9][A-Za-z0-9._-]*")  # the kernel's name of a device


_FOLDER = re.compile(r"(/[A-Za-z0-9._+-]+)+")  # an absolute folder (fio's logs)


def is_fio_literal_folder(path: str) -> bool:
    """True when fio's job parser reads `path` (an absolute folder) exactly as it is."""
    return _FOLDER.fullmatch(path) is not None


def is_fio_literal_device(path: str) -> bool:
    """True when `path` is a /dev node name fio's job parser reads exactly as it is."""
    return _DEVICE_NODE.fullmatch(path) is not None


@dataclass(frozen=True)
class FioJob:
    """One fio invocation: the job file text and what the runner needs to know about it."""

    name: str
    text: str
    writes: bool
    # Pass fio's --readonly: it refuses any write (device runs without --destructive).
    readonly: bool
    expected_s: float | None  # known for time-based jobs; None for the size-based preparation
    window_s: float | None  # the measuring window (runtime after the ramp) of time-based jobs
    timeout_s: float  # the runner kills fio after this long
    # Size-based tests (sustained-write): the io_size it stops at, to tell that stop from the
    # steady rule's (flashmark.bench.results); None for the others.
    size_limit_bytes: int | None = None
    # Seconds fio runs before the window opens (ramp_time); 0: the window opens with the I/O.
    ramp_s: int = 0
    # Bytes per request (bs=): how long one may take on a slow card (flashmark.system.watchdog).
    block_bytes: int = 0
    # A timed job that also ends once it has written its size, ramp included (not time_based):
    # its window is what is left after the ramp, up to `window_s` (flashmark.bench.jobs).
    ends_when_written: bool = False


def is_fio_literal_file(name: str) -> bool:
    """True when `name` is a file fio's job parser reads exactly as it is: a plain name relative
    to fio's working directory, or the kernel's /dev/NAME of a device."""
    return _RELATIVE_NAME.fullmatch(name) is not None or _DEVICE_NODE.fullmatch(name) is not None
