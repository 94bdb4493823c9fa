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
from pathlib import Path
from typing import TextIO

import click

from flashmark.cli import debug_option, json_option
from flashmark.cli.output import is_quiet, saving_options, stderr_console
from flashmark.cli.params import COUNT, TIMEOUT, interval_option
from flashmark.cli.tail import (
    finish,
    history_to_save,
)
from flashmark.errors import FlashmarkError
from flashmark.history.store import History
from flashmark.monitor.document import SCHEMA
from flashmark.monitor.kind import MONITOR
from flashmark.monitor.series import MonitorSample
from flashmark.monitor.view import SAMPLE_HEADER, format_sample_line
from flashmark.monitor.watch import MonitorRequest, monitor_live, monitored_device, record_command
from flashmark.system.signals import signals_raise


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
@interval_option("/proc/diskstats")
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
@json_option(f"Print a {SCHEMA} document on stdout.")
@saving_options("Do not save a command's recording.")
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
    name = monitored_device(device)
    request = MonitorRequest(
        name,
        interval_s=interval_s,
        count=count,
        command=command,
        timeout_s=timeout_s,
        output_to_stderr=as_json,  # the command's output must not mix with the JSON document
    )
    if command:
        # Checked before the command runs: its recording could not be saved otherwise.
        history = history_to_save(db_path, no_save)
        status = _monitor_command(request, as_json, history)
        if status != 0:
            ctx.exit(status)
    else:
        _live(request, as_json)


# -- live view -------------------------------------------------------------------------------
class _LinePrinter:
    """iostat-like lines, printed from the sampler thread."""

    def __init__(self, device: str, stream: TextIO, *, silent: bool = False) -> None:
        self.device = device
        self.stream = stream
        self.silent = silent  # --quiet: prints no line, only the answer at the end
        self._lock = threading.Lock()

    def header(self) -> None:
        if not self.silent:
            print(SAMPLE_HEADER, file=self.stream, flush=True)

    def __call__(self, sample: MonitorSample) -> None:
        if self.silent:
            return
        with self._lock:
            print(format_sample_line(self.device, sample), file=self.stream, flush=True)


def _live(request: MonitorRequest, as_json: bool) -> None:
    printer = _LinePrinter(request.device, sys.stderr if as_json else sys.stdout, silent=is_quiet())
    printer.header()
    with signals_raise():
        live = monitor_live(request, on_sample=printer)
    finish(MONITOR, live.recording, None, as_json=as_json)
    if live.stopped_by is not None and live.stopped_by.signal_name != "SIGINT":
        raise live.stopped_by


# -- monitoring a command --------------------------------------------------------------------
def _monitor_command(request: MonitorRequest, as_json: bool, history: History | None) -> int:
    on_sample = None
    if (
        sys.stderr.isatty() and not is_quiet()
    ):  # a live view while it runs; logs get the summary only
        on_sample = _LinePrinter(request.device, sys.stderr)
        on_sample.header()
    with signals_raise():
        ran = record_command(request, on_sample=on_sample)
    outcome, command, timeout_s = ran.outcome, request.command, request.timeout_s
    finished = finish(
        MONITOR,
        ran.recording,
        None if outcome.timed_out else history,
        as_json=as_json,
    )
    # Before the command's own status: a script must learn that nothing was saved.
    finished.raise_problem()
    left = f"; left running: {', '.join(outcome.left_running)}" if outcome.left_running else ""
    if outcome.timed_out:
        assert timeout_s is not None
        raise MonitoredCommandTimedOut(
            f"{command[0]} ran longer than --timeout {timeout_s:g} s and was stopped with "
            f"everything in its process group; the recording was not saved{left}"
        )
    if outcome.left_running:
        stderr_console().print(
            f"flashmark: note: {command[0]} ended; still running: {', '.join(outcome.left_running)}"
        )
    return outcome.exit_status
