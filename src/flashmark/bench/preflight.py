"""What a run needs after its first test, checked before it, so that no measured test is lost
to a later step that could not have worked: fio's work folder in the temporary folder (room
for the largest job's output; a full /tmp is said as such, exit 3) and the workloads' bytes
and inodes in the measured folder (exit 4 with a scale that fits). A step that still fails
later keeps what was measured; `full_temporary_folder` tells a full /tmp from a full target.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from flashmark.bench.plan import Plan
from flashmark.errors import EnvironmentProblem
from flashmark.fio.runner import fio_work_parent
from flashmark.system.leftovers import temporary_work_folder
from flashmark.units import format_size
from flashmark.workloads.needs import check_room

# One log line of about 40 bytes per I/O: 800,000 I/Os, 8 s at 100,000 IOPS.
FIO_OUTPUT_BYTES = 32 * 1024 * 1024
FIO_OUTPUT_INODES = 64  # a job file, a JSON result and up to two logs per job, and some more
_FULL_BYTES = 1024 * 1024  # below this, a temporary folder that failed a job was full
_FULL_INODES = 8
_FREE_SOME = "free some, or set TMPDIR to another folder"  # what each full folder's error asks


@contextlib.contextmanager
def fio_work_folder(*, check_room_for_output: bool = True) -> Iterator[Path]:
    """fio's work folder in the temporary folder, removed afterwards; EnvironmentProblem in
    one line when no temporary folder can hold it."""
    try:
        parent = Path(fio_work_parent())
    except FileNotFoundError as error:  # tempfile.gettempdir found no writable folder
        raise EnvironmentProblem(
            f"no usable temporary folder ({error.strerror or error}): set TMPDIR to a "
            "writable folder with free space"
        ) from None
    with contextlib.ExitStack() as stack:
        try:
            folder = stack.enter_context(temporary_work_folder("fio", parent))
        except OSError as error:
            raise EnvironmentProblem(
                f"cannot create fio's work folder in the temporary folder {parent}: "
                f"{_reason(error, parent)}; {_FREE_SOME}"
            ) from None
        if check_room_for_output:
            check_fio_output_room(folder)
        yield folder


def check_fio_output_room(folder: Path) -> None:
    """EnvironmentProblem when `folder`'s filesystem cannot hold fio's output (module doc)."""
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    if free < FIO_OUTPUT_BYTES:
        raise EnvironmentProblem(
            f"the temporary folder {folder.parent} has {format_size(free)} free; fio's results "
            f"and per-I/O logs need {format_size(FIO_OUTPUT_BYTES)} there: {_FREE_SOME}"
        )
    if stats.f_files and stats.f_favail < FIO_OUTPUT_INODES:
        raise EnvironmentProblem(
            f"the temporary folder {folder.parent} has {stats.f_favail} free inodes; fio's "
            f"results and logs need {FIO_OUTPUT_INODES}: {_FREE_SOME}"
        )


def check_plan(plan: Plan) -> None:
    """The workloads' room in the measured folder (module doc); NotEnoughSpace if short."""
    if plan.workloads and plan.target.folder is not None:
        check_room(
            Path(plan.target.folder),
            plan.workloads,
            plan.settings.workload_scale,
            option="--workload-scale",
        )


def full_temporary_folder(log_folder: str) -> EnvironmentProblem | None:
    """After a failed fio job: the one-line error when fio's work folder's filesystem is full
    (so fio could not write its results), else None."""
    stats = _statvfs(Path(log_folder))
    if stats is None:
        return None
    free = stats.f_bavail * stats.f_frsize
    out_of_inodes = bool(stats.f_files) and stats.f_favail < _FULL_INODES
    if free >= _FULL_BYTES and not out_of_inodes:
        return None
    what = "out of inodes" if out_of_inodes else f"full ({format_size(free)} free)"
    parent = Path(log_folder).parent
    return EnvironmentProblem(
        f"the temporary folder {parent} is {what}: fio could not write its results and logs "
        f"there (the target is not the problem); {_FREE_SOME}"
    )


def _reason(error: OSError, folder: Path) -> str:
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        stats = _statvfs(folder)
        if stats is not None and stats.f_files and stats.f_favail == 0:
            return "no free inodes"
        return "no space left"
    return error.strerror or str(error)


def _statvfs(folder: Path) -> os.statvfs_result | None:
    try:
        return os.statvfs(folder)
    except OSError:
        return None
