"""`flashmark fleet run INVENTORY --profile P --campaign NAME --server URL`: the fleet playbook
(fleet/collection) through ansible-playbook, one line a board, and the campaign's verdict."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

import click

from flashmark.bench.profiles import PROFILES
from flashmark.cli import debug_option
from flashmark.cli.output import stderr_console
from flashmark.cli.params import COUNT, RAMP, RUNTIME, SIZE
from flashmark.cli.progress import live_lines
from flashmark.errors import UsageError, printable
from flashmark.fleet.ansible import COLLECTION, TOKEN_ENV, FleetRequest
from flashmark.fleet.progress import BoardProgress, board_line
from flashmark.fleet.run import ordered_boards, prepare_fleet, run_fleet
from flashmark.system.signals import signals_raise


@click.group("fleet")
def fleet_command() -> None:
    """Run one benchmark on every board of an Ansible inventory, into one campaign of a
    results service, and compare the boards.

    \b
    The boards are reached and driven by Ansible (the fleet extra: install.sh --with fleet);
    the playbook is the Ansible collection flashmark carries (`flashmark fleet collection`
    names its folder, with its README), which users of Ansible can also run themselves.
    """


@fleet_command.command("collection")
def fleet_collection_command() -> None:
    """Print the folder of the flashmark.fleet Ansible collection this flashmark carries.

    \b
    For your own Ansible:
        ansible-galaxy collection install "$(flashmark fleet collection)"
        ansible-galaxy collection build "$(flashmark fleet collection)"
    """
    click.echo(str(COLLECTION))


@fleet_command.command("run")
@click.argument("inventory", type=click.Path(path_type=Path))
@click.option(
    "--profile",
    default="quick",
    show_default=True,
    type=click.Choice(list(PROFILES)),
    help="The profile every board runs.",
)
@click.option("--campaign", required=True, metavar="NAME", help="The campaign's name.")
@click.option("--server", required=True, metavar="URL", help="The results service.")
@click.option("--token", envvar=TOKEN_ENV, metavar="TOKEN", help=f"Upload token [env {TOKEN_ENV}].")
@click.option("--size", "size_bytes", type=SIZE, metavar="SIZE", help="Test area (run --size).")
@click.option("--runtime", "runtime_s", type=RUNTIME, metavar="SECONDS", help="As run --runtime.")
@click.option("--ramp", "ramp_s", type=RAMP, metavar="SECONDS", help="As run --ramp.")
@click.option("--limit", metavar="PATTERN", help="Only these boards (Ansible's --limit).")
@click.option(
    "--serial",
    metavar="N",
    help="Measure in batches of N boards (or N%), each after the last: boards that share a "
    "power supply or a USB hub.",
)
@click.option("--throttle", type=COUNT, metavar="N", help="At most N boards measure at once.")
@click.option("--forks", type=COUNT, default=50, show_default=True, help="Ansible's --forks.")
@click.option(
    "--collection",
    type=click.Path(file_okay=False, path_type=Path),
    help="Another flashmark.fleet collection (default: the one this flashmark carries).",
)
@click.option(
    "--wheel",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The flashmark wheel boards without this flashmark's version install (default: one "
    "made of this flashmark).",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Ansible's own output (default: a new file in the temp folder, named at the end).",
)
@click.option(
    "--events",
    "events_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write each board's events to FILE, one JSON object a line (the collection's "
    "progress callback: every flashmark task's start and end on every board, with times).",
)
@click.option(
    "-e",
    "--extra-vars",
    multiple=True,
    metavar="KEY=VALUE",
    help="More playbook variables, e.g. -e flashmark_fio_version=fio-3.33 (repeatable).",
)
@debug_option
def fleet_run_command(
    inventory: Path,
    collection: Path | None,
    log_path: Path | None,
    events_path: Path | None,
    **settings: Any,  # FleetRequest's fields, named as it names them
) -> None:
    """Run one benchmark on every board of INVENTORY and upload each result into a campaign.

    \b
    Every board gets the same flashmark (this one's version: where it is missing, this
    flashmark's wheel is copied to the board and installed into /opt/flashmark), the same fio
    and the same profile and settings: a board whose job hash differs (`flashmark run
    --job-hash`) is refused before any board measures. Each board measures its target (the
    per-board variable flashmark_target, e.g. /dev/sda; by default /var/tmp on its root file
    system) and uploads its result with the campaign and its inventory name as its label: no
    other name of the board is sent.

    \b
    One line a board as it ends, then the campaign's verdict (its outliers, by median +- 3
    MAD); the service shows the campaign at /campaigns/NAME. A board that drops out is named
    with the --limit to run it again alone; the others' results are kept. Exit status 0 when
    every board's whole result is in the campaign, 1 when not.
        FLASHMARK_TOKEN=fmk_... flashmark fleet run boards.yml --profile a1 \\
            --campaign lab-2026-11 --server https://results.example --serial 4
    """
    request = FleetRequest(
        inventory=inventory.absolute(),
        **{**settings, "server": settings["server"].rstrip("/"), "token": settings["token"] or ""},
    )
    plan = prepare_fleet(request, collection)
    for path in (log_path, events_path):
        if path is not None:
            _check_writable(path)
    log = log_path or _new_log(request.campaign)
    console = stderr_console()
    with contextlib.ExitStack() as stack:
        kept = stack.enter_context(events_path.open("w", encoding="utf-8")) if events_path else None
        boards: dict[str, BoardProgress] = {}
        if console.is_terminal:  # a line a board, updated as it goes, left on the screen
            redraw = stack.enter_context(
                live_lines(lambda: [printable(board_line(b)) for b in ordered_boards(boards)])
            )

            def on_board(board: BoardProgress) -> None:
                boards[board.host] = board
                redraw()

        else:  # one line a board, when it ends

            def on_board(board: BoardProgress) -> None:
                if board.done:
                    click.echo(printable(board_line(board, 12)))

        stack.enter_context(signals_raise())
        outcome = run_fleet(plan, log, _keeper(kept), on_board)
    click.echo(printable(outcome.verdict_line()))
    console.print(
        f"fleet: {len(outcome.boards)} boards in {outcome.seconds:.0f} s; Ansible's output: {log}"
    )
    outcome.raise_dropped_out()


def _check_writable(path: Path) -> None:
    """A file --log or --events may write (appended to or made), or a usage error now."""
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror}") from None


def _keeper(kept: TextIO | None) -> Callable[[Mapping[str, Any]], None]:
    """--events: each event as one JSON line of the file, as it comes."""

    def keep(event: Mapping[str, Any]) -> None:
        if kept is not None:
            kept.write(json.dumps(event, ensure_ascii=False) + "\n")
            kept.flush()

    return keep


def _new_log(campaign: str) -> Path:
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (kept: the user reads it afterwards)
        prefix=f"flashmark-fleet-{campaign}-", suffix=".log", delete=False
    )
    handle.close()
    return Path(handle.name)
