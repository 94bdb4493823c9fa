"""`flashmark powercut DEVICE`: does the device keep what it acknowledged when the power goes?
And `powercut record` (the flush recorder ssh runs on another machine), `powercut verify`
(after a cut that took the host down too)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flashmark.cli import debug_option, destructive_option, json_option
from flashmark.cli.confirm import confirm_overwrite
from flashmark.cli.output import saving_options, say_line, stderr_console
from flashmark.cli.params import SIZE, BoundedFloat, BoundedInt
from flashmark.cli.tail import finish, history_to_save, stopped_error
from flashmark.errors import Interrupted, UsageError
from flashmark.powercut.hostdown import run_host_down_cycle, verify_powercut
from flashmark.powercut.kind import POWERCUT
from flashmark.powercut.plan import DEFAULT_AREA_BYTES, FILESYSTEMS, PowercutRequest, plan_powercut
from flashmark.powercut.remote import SSH_ENV, remote_spec
from flashmark.powercut.result import POWERCUT_SCHEMA, RAW, PowercutResult
from flashmark.powercut.run import PowercutEvent, PowercutStopped, run_powercut
from flashmark.powercut.store import SSH_ORIGINAL_COMMAND, RunStore, forced_request, keep_entries
from flashmark.system.signals import signals_raise
from flashmark.units import format_size

if TYPE_CHECKING:
    _RangeType = click.ParamType[tuple[float, float]]
else:
    _RangeType = click.ParamType

MAX_CYCLES = 100_000
_SECONDS = BoundedFloat(0.0, 86_400.0, min_open=True, unit="seconds")


class CutRange(_RangeType):
    """MIN-MAX seconds (or one number for a fixed moment)."""

    name = "MIN-MAX"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[float, float]:
        if isinstance(value, tuple):
            return value
        low, _, high = str(value).partition("-")
        first = _SECONDS.convert(low, param, ctx)
        second = _SECONDS.convert(high, param, ctx) if high else first
        if second < first:
            self.fail(f"{value!r}: MIN must not be above MAX", param, ctx)
        return first, second


class PowercutGroup(click.Group):
    """`powercut DEVICE ...` runs the test; `powercut record` and `powercut verify` serve a
    run whose cuts take the host down too."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(
    "powercut",
    cls=PowercutGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
def powercut_command() -> None:
    """Does DEVICE keep what it acknowledged when the power goes? Cuts its power again and
    again while it writes, and checks every record it said was flushed.

    \b
    flashmark powercut DEVICE --destructive --cycles 6 --off-command CMD --on-command CMD
        the test (see `flashmark powercut run --help`)
    flashmark powercut DEVICE --host-down --record-to HOST ...
        a board whose cut takes it down too: ssh keeps the flush points on HOST
    flashmark powercut verify DEVICE --record-to HOST
        after that board's reboot: check the last cut
    Power commands for relays, USB hubs and smart plugs: docs/powercut.md.
    """


@powercut_command.command("run")
@click.argument("device", metavar="DEVICE")
@destructive_option(
    "Required: the test overwrites the device (its first GiB, or all of it with a "
    "fresh filesystem). Asks to type the device path."
)
@click.option(
    "--cycles",
    type=BoundedInt(1, MAX_CYCLES),
    default=6,
    show_default=True,
    help="Power cuts to make (a pass needs 5 cuts after an acknowledged flush); with "
    "--host-down, the cycles of the run, one per boot.",
)
@click.option("--off-command", metavar="CMD", help="Shell command that cuts the power.")
@click.option("--on-command", metavar="CMD", help="Shell command that switches it back on.")
@click.option(
    "--filesystem",
    type=click.Choice(FILESYSTEMS),
    help="Write fsync'd files on a fresh filesystem instead of a raw journal; fsck after "
    "every cut. A cycle writes at most half the device, never into max(5%, 1 GiB) of it.",
)
@click.option(
    "--cut-after",
    type=CutRange(),
    default="1-4",
    show_default=True,
    help="The power is cut at a random moment this many seconds after a cycle's first write.",
)
@click.option(
    "--flush-every",
    type=BoundedInt(1, 1_000_000),
    default=8,
    show_default=True,
    help="Records (files) per flush.",
)
@click.option(
    "--record-size",
    "record_bytes",
    type=SIZE,
    default="4K",
    show_default=True,
    help="A journal record (or a file), a multiple of 4K up to 1M.",
)
@click.option(
    "--area",
    "area_bytes",
    type=SIZE,
    metavar="SIZE",
    help=f"The raw journal's area at the start of the device [default: "
    f"{format_size(DEFAULT_AREA_BYTES)}, or the whole device when smaller].",
)
@click.option(
    "--come-back-timeout",
    "come_back_timeout_s",
    type=_SECONDS,
    default=60.0,
    show_default=True,
    help="Seconds to wait for the same device to come back after the on command.",
)
@click.option(
    "--command-timeout",
    "command_timeout_s",
    type=_SECONDS,
    default=30.0,
    show_default=True,
    help="Seconds an off or on command may take before it is killed.",
)
@click.option(
    "--off-timeout",
    "off_timeout_s",
    type=_SECONDS,
    default=10.0,
    show_default=True,
    help="After the off command, the device must stop answering within this many seconds.",
)
@click.option(
    "--record-dir",
    "record_folder",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Folder of the flush record (one file per run), on another device than DEVICE "
    "[default ~/.local/state/flashmark/powercut].",
)
@click.option(
    "--record-to",
    metavar="[USER@]HOST",
    help="Keep the flush points on HOST instead, through ssh (flashmark installed there; "
    f"the ssh command: ${SSH_ENV}, default ssh).",
)
@click.option(
    "--host-down",
    is_flag=True,
    help="The off command takes this host down too: write one cycle and die with the power; "
    "`flashmark powercut verify` checks it after the reboot (needs --record-to).",
)
@click.option("--new-run", is_flag=True, help="--host-down: start a new run at the recorder.")
@json_option(f"Print the result document ({POWERCUT_SCHEMA}).")
@saving_options("Do not save the result to the history.")
@debug_option
def run_command(
    device: str,
    destructive: bool,
    yes: bool,
    cycles: int,
    off_command: str | None,
    on_command: str | None,
    filesystem: str | None,
    cut_after: tuple[float, float],
    area_bytes: int | None,
    record_folder: Path | None,
    record_to: str | None,
    host_down: bool,
    new_run: bool,
    as_json: bool,
    db_path: Path | None,
    no_save: bool,
    **settings: Any,  # the rest of PowercutRequest's fields, named as it names them
) -> PowercutResult | None:
    """Cut DEVICE's power while it writes, CYCLES times, and check what it kept.

    \b
    Each cycle writes a journal of verifiable records at the device's own pace,
    flushes every few records (fsync; FUA where the device takes it) and keeps
    every acknowledged flush point outside the device; runs the off command at
    a random moment while writes are in flight, releases the device, runs the
    on command and waits for the same device (by CID, WWID, serial or by-id
    name) to come back; then reads every record back. A record lost after an
    acknowledged flush means the device lies: verdict fail. Nothing lost over
    enough cuts: pass, with the 95% upper bound of the loss rate.

    \b
    Examples:
      sudo flashmark powercut /dev/sda --destructive --cycles 20 \\
          --off-command 'uhubctl -l 1-1 -p 2 -a off' \\
          --on-command 'uhubctl -l 1-1 -p 2 -a on'
      sudo flashmark powercut /dev/sda --destructive --filesystem ext4 ...
    More power commands (GPIO relays, Tasmota and Shelly plugs): docs/powercut.md.
    Exit codes: README.md (the verdict is in the result; 3: a power command failed).
    """
    if not destructive:
        raise UsageError(
            f"the power-cut test overwrites {device}: add --destructive (and confirm by "
            "typing the device path, or --yes)"
        )
    if off_command is None:
        raise UsageError("give the command that cuts the power: --off-command CMD")
    if on_command is None and not host_down:
        raise UsageError("give the command that switches the power on: --on-command CMD")
    remote = remote_spec(record_to)
    if host_down and remote is None:
        raise UsageError("--host-down keeps the flush points on another machine: --record-to")
    if new_run and not host_down:
        raise UsageError("--new-run is for --host-down runs")
    if record_folder is not None and remote is not None:
        raise UsageError("--record-dir and --record-to are two places for one record: pick one")
    request = PowercutRequest(
        device=device,
        cycles=cycles,
        off_command=off_command,
        on_command=on_command or "-",
        mode=filesystem or RAW,
        area_bytes=area_bytes,
        cut_min_s=cut_after[0],
        cut_max_s=cut_after[1],
        record_file=record_folder,
        **settings,
    )
    plan = plan_powercut(request)
    # Before anything is written: a result that could not be saved would be measured for
    # nothing (a run that takes the host down saves where it is verified).
    history = None if host_down else history_to_save(db_path, no_save)
    what = (
        f"a fresh {filesystem} filesystem replaces everything on it"
        if filesystem
        else "its first "
        + format_size(min(area_bytes or DEFAULT_AREA_BYTES, plan.size_bytes))
        + " is overwritten"
    )
    confirm_overwrite(plan.node, device, f"The power-cut test writes {plan.node}: {what}.", yes=yes)
    identity = f" ({plan.identity})" if plan.identity else ""
    scope = (
        ": one cycle of a run, the cut takes this host down" if host_down else f": {cycles} cycles"
    )
    stderr_console().print(f"flashmark: power-cut test of {plan.node}{identity}{scope}")
    if plan.space is not None:
        say_line(plan.space.line())

    with signals_raise():
        if host_down:
            assert remote is not None
            run_host_down_cycle(request, plan, remote, progress=_say_cycle, new_run=new_run)
            return None
        try:
            result = run_powercut(request, plan, progress=_say_cycle, remote=remote)
        except PowercutStopped as stopped:
            finish(POWERCUT, stopped.partial, history, as_json=as_json)
            raise _stopped_error(stopped) from stopped.cause
    finished = finish(POWERCUT, result, history, as_json=as_json)
    finished.raise_problem()
    return finished.result


@powercut_command.command("verify")
@click.argument("device", metavar="DEVICE")
@click.option(
    "--record-to", metavar="[USER@]HOST", help="The recorder that kept the run (through ssh)."
)
@click.option(
    "--record-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="FILE",
    help="Or a local flush record (a run's .jsonl file).",
)
@json_option(f"Print the result document ({POWERCUT_SCHEMA}).")
@saving_options("Do not save the result to the history.")
@debug_option
def verify_command(
    device: str,
    record_to: str | None,
    record_file: Path | None,
    as_json: bool,
    db_path: Path | None,
    no_save: bool,
) -> PowercutResult:
    """Check DEVICE's last power cut against the flush points a recorder kept.

    \b
    After a --host-down cycle (the cut took the host down too), once the host is
    back: reads the device's run from the recorder, reads the last cycle's
    records back, sends the result to the recorder and prints the run so far.
    Nothing is written to the device in the raw mode; with a filesystem, fsck
    repairs what it finds, as a boot would.

    \b
    Example:
      sudo flashmark powercut verify /dev/mmcblk0p3 --record-to pc@192.168.1.5
    """
    remote = remote_spec(record_to)
    if remote is None and record_file is None:
        raise UsageError("give where the run was recorded: --record-to HOST or --record-file")
    history = history_to_save(db_path, no_save)
    with signals_raise():
        result = verify_powercut(
            device,
            remote=remote,
            record_file=record_file,
            progress=_say_cycle,
        )
    finished = finish(POWERCUT, result, history, as_json=as_json)
    finished.raise_problem()
    return finished.result


@powercut_command.command("record")
@click.option("--run", metavar="RUN", help="Keep the entries of run RUN read from stdin.")
@click.option("--fetch", metavar="IDENTITY", help="Print the device's newest run instead.")
@click.option(
    "--folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the runs are kept [default ~/.local/state/flashmark/powercut-recorder].",
)
@debug_option
def record_command(run: str | None, fetch: str | None, folder: Path | None) -> None:
    """Keep a board's flush points on this machine: ssh runs this for the board's
    `--record-to HOST`; nobody needs to run it by hand.

    \b
    Each entry is on this machine's disk (fsync) before the board is told so.
    Entries come one JSON object a line on stdin, each answered on stdout.
    As the forced command of the board's key in ~/.ssh/authorized_keys
    (restrict,command="flashmark powercut record" ssh-ed25519 ...), it takes
    --run or --fetch from the board's request and that key can run nothing else.
    """
    if run is None and fetch is None and SSH_ORIGINAL_COMMAND in os.environ:
        run, fetch = forced_request(os.environ[SSH_ORIGINAL_COMMAND])
    if (run is None) == (fetch is None):
        raise UsageError("give --run RUN (keep entries) or --fetch IDENTITY")
    store = RunStore(folder)
    with signals_raise():
        if run is not None:
            keep_entries(store, run, sys.stdin.buffer, sys.stdout.buffer)
            return
        assert fetch is not None
        for entry in store.fetch(fetch):
            sys.stdout.write(json.dumps(entry, separators=(",", ":")) + "\n")


def _say_cycle(event: PowercutEvent) -> None:
    stderr_console().print(f"  cycle {event.cycle}/{event.cycles}: {event.text}")


def _stopped_error(stopped: PowercutStopped) -> BaseException:
    """The cause in one line that says what was kept; a signal stays itself (its exit status,
    its "stopped by" line)."""
    cause = stopped.cause
    if isinstance(cause, Interrupted | KeyboardInterrupt):
        return cause
    return stopped_error(
        cause,
        f"the power-cut test stopped after {len(stopped.partial.cycles)} checked cycle(s), "
        "shown above",
    )
