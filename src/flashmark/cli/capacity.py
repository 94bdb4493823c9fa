"""`flashmark capacity DEVICE`: is the device as big as it claims? (and `--restore FILE`)."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.capacity.kind import CAPACITY
from flashmark.capacity.probe import (
    CapacityRequest,
    RestoreRequest,
    plan_capacity,
    restore_capacity,
    run_capacity,
)
from flashmark.capacity.result import CAPACITY_SCHEMA
from flashmark.cli import debug_option, destructive_option, json_option
from flashmark.cli.confirm import confirm_overwrite
from flashmark.cli.output import saving_options, stderr_console
from flashmark.cli.progress import progress_display
from flashmark.cli.tail import finish, history_to_save
from flashmark.errors import UsageError
from flashmark.system.signals import signals_raise


@click.command("capacity")
@click.argument("device", required=False, metavar="DEVICE")
@destructive_option(
    "Do not back up the blocks the probe overwrites (faster; their data is lost). "
    "Asks to confirm by typing the device path."
)
@click.option(
    "--restore",
    "restore_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Put back the blocks of a probe that was killed (its backup FILE), then stop: only "
    "where the device still holds the probe's blocks; what was written over since is left "
    "and reported as changed.",
)
@click.option(
    "--backup-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Where the backup file goes, on another device "
    "[default ~/.local/state/flashmark/capacity-backups].",
)
@json_option(f'Print a "{CAPACITY_SCHEMA}" document.')
@saving_options("Do not save this result to the history.")
@debug_option
def capacity_command(
    device: str | None,
    destructive: bool,
    yes: bool,
    restore_file: Path | None,
    backup_dir: Path | None,
    as_json: bool,
    db_path: Path | None,
    no_save: bool,
) -> None:
    """Find the real capacity of DEVICE (a block device such as /dev/sdb): tells a genuine
    card or stick from a fake that wraps addresses, returns zeros or drops writes beyond
    its real size. Takes seconds to a few minutes, whatever the claimed size.

    \b
    It writes signature blocks at chosen places and reads them back (O_DIRECT). Every block
    it overwrites is backed up first (in memory and in a file, fsync'd) and put back and
    checked afterwards, also after Ctrl-C, SIGTERM or SIGHUP; a genuine device is left
    byte-identical. If flashmark is killed outright, `flashmark capacity --restore FILE`
    puts the blocks back, where they are still the probe's; until then every command that
    writes the device refuses it. Mounted or in-use devices are refused.

    \b
    Examples:
      sudo flashmark capacity /dev/sdb
      sudo flashmark capacity /dev/mmcblk0 --json
      sudo flashmark capacity --restore ~/.local/state/flashmark/capacity-backups/sdb-x.backup
    A folder has no raw addresses: `flashmark surface DIR` verifies its free space.
    Exit codes: README.md (4: not a block device, in use or refused; 5: the device failed).
    """
    errors = stderr_console()
    if restore_file is not None:
        if destructive:
            raise UsageError("--restore puts a backup back; it cannot go with --destructive")
        node, restored = restore_capacity(RestoreRequest(restore_file, device))
        changed = (
            f"; {restored.changed_ranges} range(s) ({restored.changed_bytes} bytes) changed "
            "since the probe (written over: newer data) and were left as they are"
            if restored.changed_ranges
            else ""
        )
        errors.print(
            f"restored {restored.ranges} range(s) ({restored.bytes_restored} bytes) on {node} "
            f"and checked them{changed}; {restore_file} was removed"
        )
        return
    if device is None:
        raise UsageError("give the device to probe, e.g. `flashmark capacity /dev/sdb`")
    plan = plan_capacity(CapacityRequest(device, destructive, backup_dir))
    node = plan.node  # a folder: one line pointing to `flashmark surface`; in use: refused
    history = history_to_save(db_path, no_save)  # before writing anything
    if destructive:
        confirm_overwrite(
            node,
            device,
            f"Without a backup, the blocks the probe writes on "
            f"{node} (10-80 MiB spread over the device) are lost.",
            yes=yes,
        )

    def announce(path: Path) -> None:
        errors.print(
            f"backup of every block the probe overwrites: {path} (if flashmark is killed, "
            f"`flashmark capacity --restore {path}` puts them back)"
        )

    with signals_raise(), progress_display() as display:
        display.begin(f"capacity of {node}", 1, 1, None)

        def progress(step: str, fraction: float) -> None:
            display.update(fraction, step)

        result = run_capacity(plan, progress=progress, on_backup_file=announce)
        display.end(f"capacity of {node}", result.verdict)
    finish(CAPACITY, result, history, as_json=as_json).raise_problem()
