"""`flashmark surface TARGET`: the whole surface of a device (or a folder's free space), read,
or written and verified, with MB/s per slice, the cache cliff and a map of what is wrong."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from flashmark.cli import debug_option, destructive_option, json_option
from flashmark.cli.clean import say_cleaned_at_start
from flashmark.cli.confirm import ALLOW_SYSTEM_DISK, confirm_filling, confirm_overwrite
from flashmark.cli.output import saving_options, say_line, stderr_console
from flashmark.cli.params import SIZE, BoundedInt, stall_timeout_option
from flashmark.cli.progress import BarProgress, PlainProgress, progress_display
from flashmark.cli.tail import finish, history_to_save, stopped_error
from flashmark.errors import ExitStatus, FlashmarkError, Interrupted
from flashmark.surface.kind import SURFACE
from flashmark.surface.result import SURFACE_SCHEMA
from flashmark.surface.run import (
    DEFAULT_BLOCK,
    DEVICE,
    FOLDER,
    MAX_SLICES,
    MIN_SLICES,
    ScanStopped,
    SurfaceJob,
    SurfacePlan,
    SurfaceRequest,
    prepare_surface,
    run_surface,
)
from flashmark.system.signals import signal_of, signals_raise
from flashmark.system.watchdog import DeviceHung
from flashmark.units import format_duration, format_rate, format_size

_PLAIN_EVERY_S = 30.0  # without a terminal: a progress line this often


@click.command("surface")
@click.argument("target", metavar="TARGET")
@destructive_option(
    "Block devices: first write the whole device with a verifiable pattern, then read "
    "it back and verify it. ERASES EVERYTHING ON IT. Refused when anything in the device's "
    "stack is mounted or in use; asks to type the device path."
)
@click.option(
    ALLOW_SYSTEM_DISK,
    "allow_system_disk",
    is_flag=True,
    help="Folders: let the scan fill the free space of the filesystem the system runs from "
    "(/, /var, /home or any filesystem on their disk) or of a non-removable disk. Without it "
    "that is refused (no terminal) or asked to be typed; --yes does not count.",
)
@click.option(
    "--block-size",
    "block_bytes",
    type=SIZE,
    default=DEFAULT_BLOCK,
    metavar="SIZE",
    help="Request size of the sequential passes, 4K to 64M, a multiple of 4K [default: 1M].",
)
@click.option(
    "--slices",
    type=BoundedInt(MIN_SLICES, MAX_SLICES),
    default=MIN_SLICES,
    show_default=True,
    help="How many parts of the surface get a rate of their own, 256 to 65536.",
)
@click.option(
    "--size",
    "size_limit",
    type=SIZE,
    metavar="SIZE",
    help="Folders: write at most this much (default: all the free space less the reserve, "
    "max(5%, 1 GiB) of the filesystem).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue the last incomplete scan of TARGET saved in the history (stopped by "
    "Ctrl-C, SIGTERM, a device failure, a SIGKILL or a power cut) from its last durable "
    "point. Block devices only.",
)
@json_option(f"Print the result document ({SURFACE_SCHEMA}) on stdout; progress on stderr.")
@saving_options("Do not save the result to the history.")
@stall_timeout_option
@debug_option
def surface_command(
    yes: bool,
    allow_system_disk: bool,
    as_json: bool,
    db_path: Path | None,
    no_save: bool,
    **settings: Any,  # SurfaceRequest's fields, named as it names them
) -> None:
    """Scan the whole surface of TARGET: a block device, or a folder's free space.

    \b
    A block device is read from start to end in large blocks (O_DIRECT): MB/s for
    every slice of it, the slowest requests, and a map of unreadable ranges.
    With --destructive it is first written whole with a pattern in which every
    512-byte sector names its own offset and this run, then read back and compared:
    a fake card's aliased addresses ("holds the data written at X"), dropped writes
    (zeros, 0xFF, stale data) and corrupted sectors are each reported, and the
    write pass shows where the card's write cache runs out (burst, then sustained).
    A folder gets files over its free space, written, verified and always removed
    (like f3write + f3read), also on Ctrl-C and SIGTERM. It always leaves
    max(5%, 1 GiB) of the filesystem free and stops if something else fills it;
    filling the system's own filesystem or disk, or a non-removable disk, needs
    --allow-system-disk (or the filesystem's device typed at the prompt).

    \b
    Read errors do not stop the scan: like ddrescue, it skips ahead past a bad area,
    then comes back with smaller blocks down to the device's logical block, and maps
    what still fails. Ctrl-C keeps what was measured (saved, marked incomplete), and
    the scan is kept in the history as it goes, so that `--resume` continues it later,
    also after a SIGKILL or a power cut, from what the device holds durably.

    \b
    Examples:
      sudo flashmark surface /dev/sdb                     read the whole device
      sudo flashmark surface /dev/sdb --destructive       write + verify (erases it)
      flashmark surface /media/pi/CARD                    fill + verify the free space
      sudo flashmark surface /dev/sdb --destructive --resume   continue after Ctrl-C
    A device that completes no request for --stall-timeout (longer for big requests, or
    after slow ones) stops the scan with exit 5, the partial scan saved.
    Exit codes: README.md (5: the device stopped answering; the partial scan is saved).
    """
    request = SurfaceRequest(**settings)
    target, resume = request.target, request.resume
    # A resumed scan is read from the history; a new one checks it after the plan's refusals
    # and confirmations (still before measuring): a refused scan writes nothing, not even the
    # history a first command would create.
    history = history_to_save(db_path, no_save) if resume else None
    if not resume:
        say_cleaned_at_start(target)  # a killed folder scan's files may hold the space needed now
    job = prepare_surface(request, history=history)
    plan, previous = job.plan, job.previous
    if plan.kind == DEVICE and plan.write and (previous is None or previous.state.phase == "write"):
        what = f"This overwrites ALL of {plan.given}: every byte on it is lost."
        confirm_overwrite(plan.given, plan.given, what, yes=yes)
    if plan.fill_refusal is not None and plan.space is not None:
        fs = plan.space.filesystem
        answer_with = fs.device or fs.mount_point or plan.given
        confirm_filling(fs.label(), plan.fill_refusal, answer_with, allowed=allow_system_disk)
    if not resume:
        history = history_to_save(db_path, no_save)  # before measuring: a bad history is known now
    _announce(job)
    # A folder scan always writes (plan.write), a device scan with --destructive.
    phases = 1 + (plan.write and (previous is None or previous.state.phase == "write"))
    with signals_raise(), _progress(phases) as progress:
        outcome = run_surface(job, history=history, progress=progress, warn=_warn)
        if outcome.stopped is not None:
            progress.close("stopped")
    finished = finish(
        SURFACE,
        outcome.result,
        history,
        as_json=as_json,
        replacing=outcome.replacing,
    )
    if outcome.stopped is not None:
        raise _stopped_error(outcome.stopped, plan, finished.saved_id)
    finished.raise_problem()


def _warn(message: str) -> None:
    stderr_console().print(f"warning: {message}")


def _announce(job: SurfaceJob) -> None:
    plan, previous = job.plan, job.previous
    if previous is not None:
        what = (
            f"resuming scan {previous.id} in its {previous.state.phase} phase at offset "
            f"{previous.state.next_offset}"
        )
    elif plan.kind == FOLDER:
        size = format_size(plan.size_bytes or 0)
        what = f"writing {size} of files, then verifying them (the files are removed after)"
    elif plan.write:
        what = "writing the whole device, then reading it back and verifying it"
    else:
        what = "reading the whole device (nothing is written)"
    stderr_console().print(f"flashmark: surface of {plan.given}: {what}")
    if plan.space is not None:
        say_line(plan.space.line())


_STEPS = {"write": "write pass", "read": "read pass", "retry": "retrying errors"}


@contextmanager
def _progress(phases: int) -> Iterator[_PhaseProgress]:
    """A scan progress callback on top of cli/progress.py: a bar per phase with its ETA on a
    terminal; without one, a line every 30 s with the rate and the time left."""
    with progress_display() as display:
        adapter = _PhaseProgress(display, phases)
        try:
            yield adapter
        except BaseException:
            adapter.close("stopped")
            raise
        adapter.close()


class _PhaseProgress:
    def __init__(
        self,
        display: PlainProgress | BarProgress,
        phases: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._display = display
        self._clock = clock
        self._phases = phases  # the passes planned; the retries add one when there are errors
        self._phase: str | None = None
        self._number = 0
        self._began = 0.0
        self._last_update = 0.0
        self._last_line = 0.0
        self._first_done = 0

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = self._clock()
        if phase != self._phase:
            self.close()
            self._phase, self._number = phase, self._number + 1
            self._phases = max(self._phases, self._number)
            self._began = self._last_line = now
            self._first_done = done
            self._display.begin(_STEPS.get(phase, phase), self._number, self._phases, None)
        if now - self._last_update < 0.2 and done < total:
            return
        self._last_update = now
        elapsed = now - self._began
        moved = done - self._first_done
        rate = moved / elapsed if elapsed > 0 else 0.0
        left = (total - done) / rate if rate > 0 else None
        status = f"{format_size(done)} of {format_size(total)}"
        if phase != "retry" and rate > 0:
            status += f", {format_rate(rate)}"
        # The read pass after a write pass: its length is known only once it runs.
        then = _STEPS["read"] if phase == "write" and self._number < self._phases else ""
        self._display.update(done / total if total else 1.0, status, left_s=left, then=then)
        plain = isinstance(self._display, PlainProgress) and self._display.prints_lines
        if plain and now - self._last_line >= _PLAIN_EVERY_S:
            self._last_line = now
            eta = f", about {format_duration(left)} left" if left is not None else ""
            print(f"  {_STEPS.get(phase, phase)}: {status}{eta}", file=sys.stderr, flush=True)

    def close(self, how: str = "done") -> None:
        """End the running pass's step: "done", or "stopped" when the scan stopped in it."""
        if self._phase is not None:
            self._display.end(_STEPS.get(self._phase, self._phase), how)
            self._phase = None


def _stopped_error(stop: ScanStopped, plan: SurfacePlan, saved_id: int | None) -> FlashmarkError:
    """The cause, in one line that says what was kept and how to continue."""
    cause = stop.cause
    if saved_id is None:
        kept = "the partial scan was not saved (--no-save)"
    elif plan.kind == FOLDER and isinstance(cause, DeviceHung):  # its note says where they are
        kept = f"the partial scan is saved as result {saved_id}"
    elif plan.kind == FOLDER:
        kept = f"the partial scan is saved as result {saved_id}; the scan's files were removed"
    else:
        again = " --destructive" if stop.partial.state.phase == "write" else ""
        kept = (
            f"the partial scan is saved as result {saved_id}; "
            f"`flashmark surface {plan.given}{again} --resume` continues it"
        )
    signal_name = signal_of(cause)  # Ctrl-C outside signals_raise: a KeyboardInterrupt
    if signal_name is not None:
        stopped = Interrupted(signal_name, getattr(cause, "exit_status", ExitStatus.INTERRUPTED))
        stopped.args = (f"stopped by {signal_name}; {kept}",)
        return stopped
    return stopped_error(cause, kept)  # with what became of a stuck I/O process
