"""`flashmark upload ID ... --server URL`: saved results to a results service, anonymised."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.cli.saved import RUN_ID
from flashmark.errors import UsageError
from flashmark.history.store import History
from flashmark.server.anonymise import anonymise
from flashmark.server.upload import TOKEN_ENV, body_of, load_salt, salt_path, send


@click.command("upload")
@click.argument("ids", metavar="ID ...", nargs=-1, required=True, type=RUN_ID)
@click.option("--server", metavar="URL", help="The service, e.g. http://results.example:8080.")
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    metavar="TOKEN",
    help=f"Upload token from the service's operator [env {TOKEN_ENV}].",
)
@click.option("--dry-run", is_flag=True, help="Print exactly what would be sent and send nothing.")
@db_option
@debug_option
def upload_command(
    ids: tuple[int, ...],
    server: str | None,
    token: str | None,
    dry_run: bool,
    db_path: Path | None,
    debug: bool,
) -> None:
    """Send saved benchmark results to a results service (`flashmark serve`).

    \b
    Before anything leaves this machine the host name, card serial numbers and paths are
    replaced by salted hashes (the salt stays here, in ~/.local/state/flashmark/upload-salt,
    so the same card is still recognised); what was replaced is listed.
        flashmark upload 3 --dry-run                      # the exact JSON, nothing sent
        FLASHMARK_TOKEN=fmk_... flashmark upload 3 4 --server http://results.example:8080
    """
    history = History.locate(db_path)
    stored = [history.get(run_id) for run_id in ids]
    for entry in stored:
        if entry.kind != "benchmark":
            raise UsageError(
                f"run {entry.id} is a {entry.kind} recording: only benchmark results are uploaded"
            )
    if not dry_run and not server:
        raise UsageError("say where to upload with --server URL (or look first with --dry-run)")
    if not dry_run and not token:
        raise UsageError(f"uploading needs a token: --token TOKEN or {TOKEN_ENV}")
    # Made on the first use, a dry run included: what it prints is exactly what is sent later.
    salt = load_salt(salt_path())
    for entry in stored:
        anonymised = anonymise(dict(entry.document), salt)
        body = body_of({k: v for k, v in anonymised.document.items() if k != "id"})
        for replacement in anonymised.replacements:
            click.echo(
                f"run {entry.id}: {replacement.what} {replacement.original!r} sent as "
                f"{replacement.replacement!r}",
                err=True,
            )
        if dry_run:
            click.echo(body.decode("utf-8"))
            click.echo(f"run {entry.id}: dry run, nothing sent ({len(body)} bytes)", err=True)
            continue
        assert server is not None and token is not None
        uploaded = send(server, token, body)
        state = "uploaded" if uploaded.created else "already on the service"
        click.echo(f"run {entry.id}: {state} as {uploaded.id}: {uploaded.url}")
