"""`flashmark monitor [DEVICE] [-- COMMAND ...]`: an iostat for one device, or for one command.

Without a command it prints a line per interval until Ctrl-C (or --count intervals), like
`iostat -x DEVICE 1`. With a command it runs it, records what the device did meanwhile,
summarises it (seed 002's reading of its iostat tables: how much was read and written, at
which request size and IOPS, and whether the device looks bound by random writes), saves it
to the history and exits with the command's exit status.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TextIO

import click

from flashmark.cli import db_option, debug_option
from flashmark.cli.output import quiet_option, stderr_console
from flashmark.cli.params import COUNT, INTERVAL, TIMEOUT
from flashmark.cli.tail import (
    finish,
    history_to_save,
)
from flashmark.errors import FlashmarkError, Interrupted, UsageError
from flashmark.history.store import History
from flashmark.monitor import (
    DiskMonitor,
    MonitorSample,
    device_for_path,
)
from flashmark.monitor.command import run_supervised
from flashmark.monitor.document import SCHEMA, recording
from flashmark.monitor.kind import MONITOR
from flashmark.monitor.render import format_sample_line
from flashmark.system.signals import signals_raise
from flashmark.system.sysroot import SystemRoots


class MonitoredCommandTimedOut(FlashmarkError):
    """The command given to `flashmark monitor` ran longer than --timeout."""


class _SplitAtDoubleDash(click.Command):
    """Everything after the first `--` is the command to run, kept verbatim.

    click would otherwise fold it into the positional arguments, and `monitor -- sleep 1`
    could not be told from `monitor sleep 1` (a device named sleep).
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            index = args.index("--")
            ctx.meta["flashmark.monitor.command"] = tuple(args[index + 1 :])
            args = args[:index]
        return super().parse_args(ctx, args)


@click.command("monitor", cls=_SplitAtDoubleDash)
@click.argument("device", required=False, metavar="[DEVICE]")
@click.option(
    "--interval",
    "interval_s",
    type=INTERVAL,
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between two readings of /proc/diskstats.",
)
@click.option(
    "--count",
    type=COUNT,
    help="Without a command: stop after this many intervals (default: until Ctrl-C).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=TIMEOUT,
    metavar="SECONDS",
    help="With a command: stop it after this many seconds (default: let it finish).",
)
@click.option(
    "--json", "as_json", is_flag=True, help=f"Print a {SCHEMA} document on stdout."
)
@quiet_option
@db_option
@click.option("--no-save", is_flag=True, help="Do not save a command's recording.")
@debug_option
@click.pass_context
def monitor_command(
    ctx: click.Context,
    device: str | None,
    interval_s: float,
    count: int | None,
    timeout_s: float | None,
    as_json: bool,
    quiet: bool,
    db_path: Path | None,
    no_save: bool,
    debug: bool,
) -> None:
    """Watch a device's I/O, or record it while COMMAND runs.

    \b
    DEVICE is a name from /proc/diskstats or a device node (mmcblk0, /dev/sda); by default
    the device holding the current folder.
    \b
    Examples:
        flashmark monitor mmcblk0                    # a line per second until Ctrl-C
        flashmark monitor mmcblk0 -- apt-get install -y xfce4
        flashmark monitor --json -- tar xf big.tar   # summary + samples as JSON
    With a command the recording is saved to the history (unless --no-save) and flashmark
    exits with the command's exit status (128 + N when a signal N killed it). The command
    runs as a process group of its own: --timeout, Ctrl-C on flashmark and flashmark's own
    death (SIGKILL included) stop the whole group; a daemon that left it is named. The
    history is checked before the command runs (exit 6 if it cannot take the recording); if
    saving still fails, the recording is kept in a recovery file (exit 7; `flashmark import
    FILE` adds it later).
    """
    command: tuple[str, ...] = ctx.meta.get("flashmark.monitor.command", ())
    roots = SystemRoots.from_environment()
    name = device or device_for_path(Path.cwd(), roots)
    if name is None:
        raise UsageError(
            "the current folder is not on a block device (tmpfs, overlay or network): "
            "name the device, e.g. `flashmark monitor mmcblk0`"
        )
    if command:
        # Checked before the command runs: its recording could not be saved otherwise.
        history = history_to_save(db_path, no_save)
        status = _monitor_command(
            name, roots, interval_s, command, timeout_s, as_json, quiet, history
        )
        if status != 0:
            ctx.exit(status)
    else:
        _live(name, roots, interval_s, count, as_json, quiet)


# -- live view -------------------------------------------------------------------------------
class _LinePrinter:
    """iostat-like lines, printed from the sampler thread."""

    HEADER = (
        f"{'Device':<12}{'tps':>9}{'r/s':>9}{'w/s':>9}{'kB_read/s':>12}{'kB_wrtn/s':>12}"
        f"{'kB_read':>10}{'kB_wrtn':>10}{'areq-sz':>9}{'aqu-sz':>8}{'%util':>7}"
    )

    def __init__(self, device: str, stream: TextIO, *, silent: bool = False) -> None:
        self.device = device
        self.stream = stream
        self.silent = silent  # --quiet: counts the lines, prints none
        self.lines = 0
        self.done = threading.Event()
        self.limit: int | None = None
        self._lock = threading.Lock()

    def header(self) -> None:
        if not self.silent:
            print(self.HEADER, file=self.stream, flush=True)

    def __call__(self, sample: MonitorSample) -> None:
        with self._lock:
            if not self.silent:
                print(format_sample_line(self.device, sample), file=self.stream, flush=True)
            self.lines += 1
            if self.limit is not None and self.lines >= self.limit:
                self.done.set()


def _live(
    device: str,
    roots: SystemRoots,
    interval_s: float,
    count: int | None,
    as_json: bool,
    quiet: bool,
) -> None:
    printer = _LinePrinter(device, sys.stderr if as_json else sys.stdout, silent=quiet)
    printer.limit = count
    started = time.time()
    monitor = DiskMonitor(device, roots, interval_s, on_sample=printer)
    printer.header()
    stopped_by: Interrupted | None = None
    with signals_raise():
        monitor.start()
        try:
            while not printer.done.wait(0.2):
                pass
        except Interrupted as signal_stop:  # Ctrl-C is how a live view normally ends
            stopped_by = signal_stop
        finally:
            monitor.stop()
    series = monitor.series()
    result = recording(series, (), None, started, time.time())
    finish(MONITOR, result, None, as_json=as_json, quiet=quiet)
    if stopped_by is not None and stopped_by.signal_name != "SIGINT":
        raise stopped_by


# -- monitoring a command --------------------------------------------------------------------
def _monitor_command(
    device: str,
    roots: SystemRoots,
    interval_s: float,
    command: tuple[str, ...],
    timeout_s: float | None,
    as_json: bool,
    quiet: bool,
    history: History | None,
) -> int:
    on_sample = None
    if sys.stderr.isatty() and not quiet:  # a live view while it runs; logs get the summary only
        on_sample = _LinePrinter(device, sys.stderr)
        on_sample.header()
    started = time.time()
    with signals_raise(), DiskMonitor(device, roots, interval_s, on_sample=on_sample) as monitor:
        # The command's output must not mix with the JSON document on stdout.
        ran = run_supervised(command, timeout_s=timeout_s, output_to_stderr=as_json)
    status, timed_out = ran.status, ran.timed_out
    series = monitor.series()
    result = recording(series, command, status, started, time.time(), timed_out)
    finished = finish(
        MONITOR, result, None if timed_out else history, as_json=as_json, quiet=quiet
    )
    # Before the command's own status: a script must learn that nothing was saved.
    finished.raise_problem()
    left = f"; left running: {', '.join(ran.left_running)}" if ran.left_running else ""
    if timed_out:
        raise MonitoredCommandTimedOut(
            f"{command[0]} ran longer than --timeout {timeout_s:g} s and was stopped with "
            f"everything in its process group; the recording was not saved{left}"
        )
    if ran.left_running:
        stderr_console().print(
            f"flashmark: note: {command[0]} ended; still running: {', '.join(ran.left_running)}",
            highlight=False,
        )
    return ran.exit_status
