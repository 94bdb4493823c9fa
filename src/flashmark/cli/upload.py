"""`flashmark upload ID ... --server URL`: saved results to a results service, built from the
rules on each field of what may leave the machine (flashmark.upload_rules)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.cli.saved import RUN_ID
from flashmark.errors import UsageError
from flashmark.history.store import History
from flashmark.server.campaign_names import campaign_choices
from flashmark.server.outgoing import field_table
from flashmark.server.upload import TOKEN_ENV, Skipped, accepted_schemas, send, upload_bodies


def _print_fields(context: click.Context, _: click.Parameter, wanted: bool) -> None:
    if not wanted:
        return
    rows = field_table()
    width = max(len(place) for place, _ in rows)
    for place, shown in rows:
        click.echo(f"{place:<{width}}  {shown}")
    context.exit()


@click.command("upload")
@click.argument("ids", metavar="ID ...", nargs=-1, required=True, type=RUN_ID)
@click.option("--server", metavar="URL", help="The service, e.g. http://results.example:8080.")
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    metavar="TOKEN",
    help=f"Upload token from the service's operator [env {TOKEN_ENV}].",
)
@click.option(
    "--token-stdin",
    is_flag=True,
    help="Read the token from standard input (its first line): it stays out of the process "
    "list and the environment (what the fleet playbook does).",
)
@click.option(
    "--dry-run", is_flag=True, help="Print exactly the bytes that would be sent; send nothing."
)
@click.option(
    "--link-card",
    is_flag=True,
    help="Also send an opaque card_link, so that the service can tell results of the same "
    "card apart from other cards of its model (off by default; see below).",
)
@click.option(
    "--campaign",
    metavar="NAME",
    help="Add the results to this campaign of the service: results of many boards that ran "
    "the same benchmark, compared as a fleet (`flashmark fleet run`). Needs --label.",
)
@click.option(
    "--label",
    metavar="LABEL",
    help="The name this board is shown by in the campaign, e.g. board-07 (the only name of "
    "the board that is sent: choose one that identifies no machine).",
)
@click.option(
    "--fields",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_fields,
    help="Print every field an upload may hold and what is sent there; send nothing.",
)
@db_option
@debug_option
def upload_command(
    ids: tuple[int, ...],
    server: str | None,
    token: str | None,
    token_stdin: bool,
    dry_run: bool,
    link_card: bool,
    campaign: str | None,
    label: str | None,
    db_path: Path | None,
) -> None:
    """Send saved results to a results service (`flashmark serve`).

    \b
    What is sent is built from a list of the fields that identify nobody: figures, settings,
    grades, model names, maker, bus, kernel, file system type. Host and user names, paths,
    mount sources, serial numbers (the CID's too), network addresses, test file names and
    free text that may quote them (warnings, evidence, fio job files) stay on this machine;
    the service shows "(withheld)" in their place. docs/server.md lists every field.

    \b
    A result of a kind the service does not take is skipped, one line saying so; the others
    are sent. Exit 2 when nothing could be sent or a document was refused (its field named),
    9 when the service cannot be reached or refuses the token or a result.

    \b
    --campaign NAME --label LABEL add the run to a campaign (what `flashmark fleet run`
    does on every board): the service compares the boards of a campaign, and takes only
    results of the same benchmark (flashmark and fio versions, profile and settings: the
    job hash of `flashmark run --job-hash`) into one campaign.

    \b
    --link-card adds card_link: a keyed hash (HMAC-SHA256) of the card's CID or serial, with
    a salt that stays here (~/.local/state/flashmark/upload-salt) and the service's address.
    Your uploads of one card then share a link on that service; nobody can get the serial
    back from it, and another service or machine gets another link.
        flashmark upload 3 --dry-run                      # the exact JSON, nothing sent
        FLASHMARK_TOKEN=fmk_... flashmark upload 3 4 --server http://results.example:8080
    """
    chosen = campaign_choices(campaign, label)
    if token_stdin:
        token = sys.stdin.readline().strip() or None
    history = History.locate(db_path)
    stored = [history.get(run_id) for run_id in ids]
    if not dry_run and not server:
        raise UsageError("say where to upload with --server URL (or look first with --dry-run)")
    if link_card and not server:
        raise UsageError("--link-card needs --server URL: a card's link differs per service")
    if not dry_run and not token:
        raise UsageError(f"uploading needs a token: --token TOKEN or {TOKEN_ENV}")
    plan = upload_bodies(
        stored,
        chosen,
        link_to=server if link_card else None,
        note=lambda line: click.echo(line, err=True),
        taken=None if dry_run else accepted_schemas(server),  # type: ignore[arg-type]
    )
    for skipped in plan.skipped:
        entry = skipped.entry
        click.echo(f"run {entry.id} ({entry.kind}): skipped: {skipped.why}", err=True)
    if dry_run:
        for entry, body in plan.bodies:
            click.echo(body, nl=False)  # bytes: written as they are
            click.echo(f"run {entry.id}: dry run, nothing sent ({len(body):,} bytes)", err=True)
    else:
        assert server is not None and token is not None
        for entry, body in plan.bodies:
            uploaded = send(server, token, body)
            state = "uploaded" if uploaded.created else "already on the service"
            click.echo(f"run {entry.id}: {state} as {uploaded.id}: {uploaded.url}")
    _refuse_what_failed(plan.skipped, len(plan.bodies), dry_run)


def _refuse_what_failed(skipped: Sequence[Skipped], sent: int, dry_run: bool) -> None:
    """Exit 2 when nothing could be sent, or a result was skipped because its document cannot
    be sent (damaged); a result skipped for its kind alone is no failure (README, "Sharing
    results")."""
    damaged = [item.entry.id for item in skipped if item.damaged]
    done = "would be sent" if dry_run else "was sent"
    if not sent:
        raise UsageError(f"none of the results can be uploaded: nothing {done}")
    if damaged:
        runs = ", ".join(str(run_id) for run_id in damaged)
        raise UsageError(
            f"run {runs} cannot be uploaded (its document is refused, above); the others {done}"
        )
