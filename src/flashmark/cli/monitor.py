"""`flashmark monitor [DEVICE] [-- COMMAND ...]`: an iostat for one device, or for one command.

Without a command it prints a line per interval until Ctrl-C (or --count intervals), like
`iostat -x DEVICE 1`. With a command it runs it, records what the device did meanwhile,
summarises it (seed 002's reading of its iostat tables: how much was read and written, at
which request size and IOPS, and whether the device looks bound by random writes), saves it
to the history and exits with the command's exit status.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

import click
from rich.table import Table

from flashmark.cli import db_option, debug_option
from flashmark.cli.output import print_json, stderr_console, stdout_console
from flashmark.cli.params import COUNT, INTERVAL, TIMEOUT
from flashmark.cli.saving import history_to_save, print_only_copy, printing_result, save_result
from flashmark.documents import schemas
from flashmark.documents.monitor import monitor_document
from flashmark.errors import FlashmarkError, Interrupted, UsageError
from flashmark.monitor import (
    DiskMonitor,
    MonitorSample,
    MonitorSummary,
    device_for_path,
)
from flashmark.monitor.command import run_supervised
from flashmark.signals import signals_raise
from flashmark.store import History
from flashmark.sysroot import SystemRoots
from flashmark.units import format_rate, format_size


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
    "--json", "as_json", is_flag=True, help=f"Print a {schemas.MONITOR} document on stdout."
)
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
        status = _monitor_command(name, roots, interval_s, command, timeout_s, as_json, history)
        if status != 0:
            ctx.exit(status)
    else:
        _live(name, roots, interval_s, count, as_json)


# -- live view -------------------------------------------------------------------------------
class _LinePrinter:
    """iostat-like lines, printed from the sampler thread."""

    HEADER = (
        f"{'Device':<12}{'tps':>9}{'r/s':>9}{'w/s':>9}{'kB_read/s':>12}{'kB_wrtn/s':>12}"
        f"{'kB_read':>10}{'kB_wrtn':>10}{'areq-sz':>9}{'aqu-sz':>8}{'%util':>7}"
    )

    def __init__(self, device: str, stream: TextIO) -> None:
        self.device = device
        self.stream = stream
        self.lines = 0
        self.done = threading.Event()
        self.limit: int | None = None
        self._lock = threading.Lock()

    def header(self) -> None:
        print(self.HEADER, file=self.stream, flush=True)

    def __call__(self, sample: MonitorSample) -> None:
        with self._lock:
            print(format_sample_line(self.device, sample), file=self.stream, flush=True)
            self.lines += 1
            if self.limit is not None and self.lines >= self.limit:
                self.done.set()


def format_sample_line(device: str, s: MonitorSample) -> str:
    """One interval as `iostat -x` shows it (kB = 1024 bytes, areq-sz in kB)."""
    request = "" if s.avg_request_bytes is None else f"{s.avg_request_bytes / 1024:.1f}"
    queue = "" if s.avg_queue is None else f"{s.avg_queue:.2f}"
    util = "" if s.util_pct is None else f"{s.util_pct:.1f}"
    return (
        f"{device:<12}{s.iops:>9.2f}{s.read_iops:>9.2f}{s.write_iops:>9.2f}"
        f"{s.read_bps / 1024:>12.2f}{s.write_bps / 1024:>12.2f}"
        f"{s.read_bytes // 1024:>10}{s.write_bytes // 1024:>10}"
        f"{request:>9}{queue:>8}{util:>7}"
    )


def _live(
    device: str, roots: SystemRoots, interval_s: float, count: int | None, as_json: bool
) -> None:
    printer = _LinePrinter(device, sys.stderr if as_json else sys.stdout)
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
    document = monitor_document(series, (), None, started, time.time())
    if as_json:
        print_json(document)
    else:
        render_summary(series.summary(), device, ())
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
    history: History | None,
) -> int:
    on_sample = None
    if sys.stderr.isatty():  # a live view while it runs; logs get the summary only
        on_sample = _LinePrinter(device, sys.stderr)
        on_sample.header()
    started = time.time()
    with signals_raise(), DiskMonitor(device, roots, interval_s, on_sample=on_sample) as monitor:
        # The command's output must not mix with the JSON document on stdout.
        ran = run_supervised(command, timeout_s=timeout_s, output_to_stderr=as_json)
    status, timed_out = ran.status, ran.timed_out
    series = monitor.series()
    document = monitor_document(series, command, status, started, time.time())
    document["timed_out"] = timed_out
    outcome = None if history is None or timed_out else save_result(history, document)
    if outcome is not None and outcome.id is not None:
        document["id"] = outcome.id
    with printing_result(document, outcome):
        if as_json:
            print_json(document)
        else:
            render_summary(series.summary(), device, command, status, document.get("id"))
        print_only_copy(outcome, document, json_on_stdout=as_json)
    if outcome is not None and outcome.problem:
        # Before the command's own status: a script must learn that nothing was saved.
        raise outcome.problem
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


def render_summary(
    summary: MonitorSummary,
    device: str,
    command: tuple[str, ...],
    exit_status: int | None = None,
    saved_id: int | None = None,
) -> None:
    console = stdout_console()
    what = f"while `{' '.join(command)}` ran" if command else "while monitored"
    # The title is a line of its own: as the table's title rich wraps it to the table's width,
    # which the figures set, so a long command was cut at a different place on every run.
    console.print(f"{device} {what} ({summary.seconds:.1f} s)", soft_wrap=True, highlight=False)
    table = Table()
    table.add_column("", justify="left")
    table.add_column("read", justify="right")
    table.add_column("write", justify="right")
    table.add_row("data", format_size(summary.read_bytes), format_size(summary.write_bytes))
    table.add_row("requests", f"{summary.read_ios}", f"{summary.write_ios}")
    table.add_row("IOPS (mean)", f"{summary.read_iops:.1f}", f"{summary.write_iops:.1f}")
    table.add_row(
        "IOPS (busiest interval)",
        _maybe(summary.peak_read_iops, "{:.1f}"),
        _maybe(summary.peak_write_iops, "{:.1f}"),
    )
    table.add_row("rate (mean)", format_rate(summary.read_bps), format_rate(summary.write_bps))
    table.add_row(
        "mean request",
        _maybe(summary.avg_read_request_bytes, "{:.1f} KiB", 1024),
        _maybe(summary.avg_write_request_bytes, "{:.1f} KiB", 1024),
    )
    console.print(table)
    if summary.write_share_ops is not None:
        busy = _maybe(summary.util_pct, "{:.0f}%")
        queue = _maybe(summary.avg_queue, "{:.2f}")
        console.print(
            f"Mix: {summary.write_share_ops:.0%} of requests and "
            f"{summary.write_share_bytes or 0:.0%} of bytes were writes; device busy {busy}, "
            f"mean queue {queue}."
        )
    console.print(f"Verdict: {summary.verdict}.")
    if exit_status is not None:
        console.print(_status_sentence(exit_status))
    if saved_id is not None:
        console.print(f"Saved to the history as {saved_id} (`flashmark show {saved_id}`).")


def _maybe(value: float | None, pattern: str, divisor: float = 1.0) -> str:
    return "-" if value is None else pattern.format(value / divisor)


def _status_sentence(status: int) -> str:
    """How the command ended; a signal as a shell reports it (128 + its number)."""
    if status >= 0:
        return f"The command exited with status {status}."
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = f"signal {-status}"
    return f"The command was killed by {name} (flashmark exits {128 - status}, as a shell does)."
