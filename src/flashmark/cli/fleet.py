"""`flashmark fleet run INVENTORY --profile P --campaign NAME --server URL`: the fleet playbook
(contrib/ansible) through ansible-playbook, one line a board, and the campaign's verdict."""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click
from rich.live import Live
from rich.table import Table

from flashmark.bench.document import SCHEMA as RESULT_SCHEMA
from flashmark.bench.profiles import PROFILES
from flashmark.cli import debug_option
from flashmark.cli.output import stderr_console
from flashmark.cli.params import COUNT, RAMP, RUNTIME, SIZE
from flashmark.errors import ExitStatus, FlashmarkError, UsageError, printable
from flashmark.fleet.ansible import (
    FleetRequest,
    check_inventory,
    find_ansible_playbook,
    find_collection,
    run_playbook,
)
from flashmark.fleet.progress import BoardProgress, board_line, follow
from flashmark.fleet.verdict import to_run_again, verdict_line
from flashmark.server.campaign_names import campaign_problem, natural_key
from flashmark.server.upload import (
    TOKEN_ENV,
    accepted_schemas,
    campaign_answer,
    service_origin,
)
from flashmark.system.signals import signals_raise

if TYPE_CHECKING:  # a type only: reading a campaign brings the service's result reader
    from flashmark.server.campaign import Campaign


class BoardsDroppedOut(FlashmarkError):
    """Some boards' whole results are not in the campaign (the others' are)."""

    exit_status = ExitStatus.FAILURE


@click.group("fleet")
def fleet_command() -> None:
    """Run one benchmark on every board of an Ansible inventory, into one campaign of a
    results service, and compare the boards.

    \b
    The boards are reached and driven by Ansible (pip install 'flashmark[fleet]'); the
    playbook is flashmark's collection (contrib/ansible, with its README), which users of
    Ansible can also run themselves.
    """


@fleet_command.command("run")
@click.argument("inventory", type=click.Path(path_type=Path))
@click.option(
    "--profile",
    "profile_name",
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
    help="The flashmark.fleet collection (default: contrib/ansible beside this flashmark).",
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
    profile_name: str,
    campaign: str,
    server: str,
    token: str | None,
    size_bytes: int | None,
    runtime_s: int | None,
    ramp_s: int | None,
    limit: str | None,
    serial: str | None,
    throttle: int | None,
    forks: int,
    collection: Path | None,
    log_path: Path | None,
    events_path: Path | None,
    extra_vars: tuple[str, ...],
    debug: bool,
) -> None:
    """Run one benchmark on every board of INVENTORY and upload each result into a campaign.

    \b
    Every board gets the same flashmark (this one's version: installed with install.sh from
    this source tree where it is missing), the same fio and the same profile and settings: a
    board whose job hash differs (`flashmark run --job-hash`) is refused before any board
    measures. Each board measures its target (the per-board variable flashmark_target, e.g.
    /dev/sda; by default /var/tmp on its root file system) and uploads its result with the
    campaign and its inventory name as its label: no other name of the board is sent.

    \b
    One line a board as it ends, then the campaign's verdict (its outliers, by median +- 3
    MAD); the service shows the campaign at /campaigns/NAME. A board that drops out is named
    with the --limit to run it again alone; the others' results are kept. Exit status 0 when
    every board's whole result is in the campaign, 1 when not.
        FLASHMARK_TOKEN=fmk_... flashmark fleet run boards.yml --profile a1 \\
            --campaign lab-2026-11 --server https://results.example --serial 4
    """
    problem = campaign_problem(campaign)
    if problem is not None:
        raise UsageError(f"--campaign: {problem}")
    service_origin(server)  # an http(s) address, or a usage error
    if not token:
        raise UsageError(f"uploading needs a token: --token TOKEN or {TOKEN_ENV}")
    check_inventory(inventory)
    find_ansible_playbook()
    request = FleetRequest(
        inventory=inventory.absolute(),
        campaign=campaign,
        server=server.rstrip("/"),
        profile=profile_name,
        token=token,
        size_bytes=size_bytes,
        runtime_s=runtime_s,
        ramp_s=ramp_s,
        limit=limit,
        serial=serial,
        throttle=throttle,
        forks=forks,
        extra_vars=extra_vars,
    )
    found = find_collection(collection)
    # Before any board: the service answers and takes benchmark results; the campaign's job
    # when it exists (a board run again must join it).
    taken = accepted_schemas(server)
    if RESULT_SCHEMA not in taken:
        raise UsageError(f"{server} does not take benchmark results ({RESULT_SCHEMA})")
    existing = campaign_answer(server, campaign)
    for path in (log_path, events_path):
        if path is not None:
            _check_writable(path)
    log = log_path or _new_log(campaign)
    console = stderr_console()
    boards: dict[str, BoardProgress] = {}
    started = time.monotonic()
    with signals_raise(), contextlib.ExitStack() as stack:
        kept = stack.enter_context(events_path.open("w", encoding="utf-8")) if events_path else None
        if console.is_terminal:
            status = _live(request, found, log, boards, existing, kept)
        else:
            status = run_playbook(request, found, log, _printer(boards, kept), existing)
    seconds = time.monotonic() - started
    if not boards:
        if status == 0:
            raise UsageError(f"the inventory names no board to run (its output: {log})")
        raise FlashmarkError(
            f"ansible-playbook stopped with exit status {status} before any board started: "
            f"{_tail(log)} (its output: {log})"
        )
    campaign_now = _campaign(server, campaign)
    click.echo(printable(verdict_line(campaign_now, _ordered(boards))))
    console.print(f"fleet: {len(boards)} boards in {seconds:.0f} s; Ansible's output: {log}")
    again = to_run_again(_ordered(boards))
    if again:
        raise BoardsDroppedOut(
            f"{len(again)} of {len(boards)} boards' results are not whole in the campaign: "
            f"run them again alone with --limit {','.join(again)}"
        )


def _check_writable(path: Path) -> None:
    """A file --log or --events may write (appended to or made), or a usage error now."""
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror}") from None


def _keep(kept: TextIO | None, event: Mapping[str, Any]) -> None:
    if kept is not None:
        kept.write(json.dumps(event, ensure_ascii=False) + "\n")
        kept.flush()


def _printer(boards: dict[str, BoardProgress], kept: TextIO | None) -> Any:
    """Off a terminal: one line a board, when it ends."""
    width = 12

    def on_event(event: Mapping[str, Any]) -> None:
        _keep(kept, event)
        changed = follow(boards, event)
        if changed is not None and changed.done:
            click.echo(printable(board_line(changed, width)))

    return on_event


def _live(
    request: FleetRequest,
    found: Path,
    log: Path,
    boards: dict[str, BoardProgress],
    existing: Mapping[str, Any] | None,
    kept: TextIO | None,
) -> int:
    """On a terminal: a line a board, updated as it goes, left on the screen at the end."""

    def table() -> Table:
        view = Table.grid(padding=(0, 1))
        view.add_column(no_wrap=True, overflow="ellipsis")  # one line a board, cut to fit
        for board in _ordered(boards):
            view.add_row(printable(board_line(board)))
        return view

    with Live(table(), console=stderr_console(), auto_refresh=False) as live:

        def on_event(event: Mapping[str, Any]) -> None:
            _keep(kept, event)
            if follow(boards, event) is not None:
                live.update(table(), refresh=True)

        return run_playbook(request, found, log, on_event, existing)


def _ordered(boards: dict[str, BoardProgress]) -> list[BoardProgress]:
    return sorted(boards.values(), key=lambda board: natural_key(board.host))


def _campaign(server: str, name: str) -> Campaign | None:
    # Imported when the playbook is done: it brings the service's reading of results, which
    # the run itself does not need.
    from flashmark.server.campaign import campaign_from_json

    answer = campaign_answer(server, name)
    return None if answer is None else campaign_from_json(answer)


def _new_log(campaign: str) -> Path:
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (kept: the user reads it afterwards)
        prefix=f"flashmark-fleet-{campaign}-", suffix=".log", delete=False
    )
    handle.close()
    return Path(handle.name)


def _tail(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no output"
    return " / ".join(lines[-3:])[-600:]
