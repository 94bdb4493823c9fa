"""`flashmark capacity DEVICE`: is the device as big as it claims? (and `--restore FILE`)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Group
from rich.table import Table
from rich.text import Text

from flashmark.capacity.probe import (
    check_block_device,
    probe_device_capacity,
    restore_backup_file,
)
from flashmark.capacity.result import CAPACITY_SCHEMA, CapacityResult
from flashmark.cli import db_option, debug_option
from flashmark.cli.confirm import confirm_overwrite
from flashmark.cli.output import print_json, stderr_console, stdout_console
from flashmark.cli.progress import progress_display
from flashmark.cli.saving import history_to_save, print_only_copy, printing_result, save_result
from flashmark.device_safety import check_writable
from flashmark.errors import FlashmarkError, UsageError
from flashmark.probe import probe_target
from flashmark.signals import signals_raise
from flashmark.sysroot import SystemRoots


@click.command("capacity")
@click.argument("device", required=False, metavar="DEVICE")
@click.option(
    "--destructive",
    is_flag=True,
    help="Do not back up the blocks the probe overwrites (faster; their data is lost). "
    "Asks to confirm by typing the device path.",
)
@click.option("--yes", is_flag=True, help="Confirm --destructive without the typed prompt.")
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
@click.option("--json", "as_json", is_flag=True, help=f'Print a "{CAPACITY_SCHEMA}" document.')
@db_option
@click.option("--no-save", is_flag=True, help="Do not save this result to the history.")
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
    debug: bool,
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
    roots = SystemRoots.from_environment()
    errors = stderr_console()
    if restore_file is not None:
        if destructive:
            raise UsageError("--restore puts a backup back; it cannot go with --destructive")
        node, restored = restore_backup_file(restore_file, roots, given=device)
        changed = (
            f"; {restored.changed_ranges} range(s) ({restored.changed_bytes} bytes) changed "
            "since the probe (written over: newer data) and were left as they are"
            if restored.changed_ranges
            else ""
        )
        errors.print(
            f"restored {restored.ranges} range(s) ({restored.bytes_restored} bytes) on {node} "
            f"and checked them{changed}; {restore_file} was removed",
            highlight=False,
        )
        return
    if device is None:
        raise UsageError("give the device to probe, e.g. `flashmark capacity /dev/sdb`")
    node, _ = check_block_device(device)  # a folder: one line pointing to `flashmark surface`
    history = history_to_save(db_path, no_save)  # before writing anything
    check_writable(node, roots)  # refuse before asking to confirm
    if destructive:
        _confirm(node, device, yes)
    cid = _card_cid(node, roots)

    def announce(path: Path) -> None:
        errors.print(
            f"backup of every block the probe overwrites: {path} (if flashmark is killed, "
            f"`flashmark capacity --restore {path}` puts them back)",
            highlight=False,
        )

    with signals_raise(), progress_display() as display:
        display.begin(f"capacity of {node}", 1, 1, None)

        def progress(step: str, fraction: float) -> None:
            display.update(fraction, step)

        result = probe_device_capacity(
            node,
            roots,
            destructive=destructive,
            folder=backup_dir,
            progress=progress,
            card_cid=cid,
            on_backup_file=announce,
        )
        display.end(f"capacity of {node}", result.verdict)
    document = result.to_dict()
    outcome = None if history is None else save_result(history, document)
    if outcome is not None and outcome.id is not None:
        result = result.with_id(outcome.id)
        document = result.to_dict()
    with printing_result(document, outcome):
        if as_json:
            print_json(document)
        else:
            stdout_console().print(render_capacity(result))
            if outcome is not None and outcome.id is not None:
                errors.print(
                    f"saved as result {outcome.id} (`flashmark show {outcome.id}`)",
                    highlight=False,
                )
        print_only_copy(outcome, document, json_on_stdout=as_json)
    if outcome is not None and outcome.problem:
        raise outcome.problem


def _confirm(node: str, given: str, yes: bool) -> None:
    confirm_overwrite(
        node,
        given,
        f"Without a backup, the blocks the probe writes on {node} (10-80 MiB spread "
        "over the device) are lost.",
        yes=yes,
    )


def _card_cid(node: str, roots: SystemRoots) -> str | None:
    """The card's CID, so the passport recognises this card again; None if not a card."""
    try:
        report = probe_target(node, roots)
    except (FlashmarkError, OSError):
        return None
    for device in report.devices:
        if device.card and device.card.cid:
            return device.card.cid.raw
    return None


def _size(value: int | None) -> str:
    if value is None:
        return "unknown"
    return f"{value:,} bytes ({value / 1e9:.2f} GB, {value / 2**30:.2f} GiB)"


_BEHAVIOUR_TEXT = {
    "wraps": "addresses beyond it wrap onto the start (data written there overwrites data "
    "already stored)",
    "zeros": "writes beyond it are dropped and read back as zeros",
    "erased": "writes beyond it are dropped and read back as 0xFF",
    "drops": "writes beyond it are dropped (the old content reads back)",
    "corrupts": "blocks beyond it read back as something else than was written",
}


def verdict_sentence(result: CapacityResult) -> str:
    if result.verdict == "genuine":
        return (
            f"genuine: every probed block up to the claimed {result.claimed_bytes / 1e9:.2f} GB "
            "held its data"
        )
    behaviours = "; ".join(_BEHAVIOUR_TEXT.get(b, b) for b in result.behaviour)
    if result.real_bytes is None:
        return f"{result.verdict}: real size not pinned down; {behaviours}"
    share = result.real_bytes / result.claimed_bytes * 100
    return (
        f"{result.verdict}: stores {result.real_bytes / 1e9:.2f} GB of the "
        f"{result.claimed_bytes / 1e9:.2f} GB it claims ({share:.1f}%); {behaviours}"
    )


def render_capacity(result: CapacityResult) -> Group:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("device", result.device)
    table.add_row("claims", _size(result.claimed_bytes))
    table.add_row(
        "real",
        f"{_size(result.real_bytes)}, exact to {result.granularity_bytes} bytes",
    )
    style = {"genuine": "green", "fake": "bold red"}.get(result.verdict, "yellow")
    table.add_row("verdict", Text(verdict_sentence(result), style=style))
    layout = result.layout
    table.add_row(
        "method",
        f"{layout.get('ruler_marks', 0)} signature blocks every "
        f"{layout.get('ruler_step', 0) // 2**20} MiB and a "
        f"{layout.get('window_bytes', 0) // 2**20} MiB window at the end, read back one block "
        f"at a time after a {layout.get('flush_bytes', 0) // 2**20} MiB cache flush; "
        f"{len(result.steps)} follow-up test(s); {result.blocks_written} blocks written, "
        f"{result.blocks_read} read, {result.duration_s:.1f} s",
    )
    table.add_row("evidence", _evidence(result))
    if result.backup is not None:
        table.add_row(
            "restored",
            f"{result.backup.ranges} range(s), {result.backup.bytes:,} bytes, read back "
            "and checked",
        )
    else:
        table.add_row("restored", "nothing (--destructive: the probed blocks were overwritten)")
    for note in result.notes:
        table.add_row("note", note)
    return Group(Text(f"capacity of {result.device}", style="bold"), table)


def _evidence(result: CapacityResult) -> str:
    if not result.anomalies_total:
        return "every block came back as written"
    first = result.anomalies[0]
    what = (
        f"the data written at byte {first.origin}"
        if first.origin is not None
        else f"{first.found.value}"
    )
    return (
        f"{result.anomalies_total} block(s) did not come back as written; the first, at byte "
        f"{first.offset}, read back {what}"
    )
