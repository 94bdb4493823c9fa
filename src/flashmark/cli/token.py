"""`flashmark token create|revoke|list`: who may upload to the results service."""

from __future__ import annotations

import re
from contextlib import closing

import click

from flashmark.cli import debug_option
from flashmark.cli.serve import database_option
from flashmark.server.storage import open_storage, storage_for


def _name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9._@-]{1,64}", value):
        raise click.BadParameter(
            "1 to 64 letters, digits, '.', '_', '@' or '-' (e.g. alice or lab-3)"
        )
    return value


@click.group("token")
def token_command() -> None:
    """Tokens that allow uploading results to `flashmark serve` (reading needs none)."""


@token_command.command("create")
@click.argument("name", callback=_name)
@database_option
@debug_option
def create_command(name: str, database: str | None) -> None:
    """Make a token for NAME and print it (once: only its hash is kept).

    \b
        flashmark token create alice
        FLASHMARK_TOKEN=fmk_... flashmark upload 3 --server http://host:8080
    """
    path, create = storage_for(database)
    with closing(open_storage(path, create_folder=create)) as storage:
        secret = storage.create_token(name)
    click.echo(secret)
    click.echo(
        f"flashmark: token {name!r} created; it is shown only now (keep it secret; "
        f"`flashmark token revoke {name}` ends it)",
        err=True,
    )


@token_command.command("revoke")
@click.argument("name", callback=_name)
@database_option
@debug_option
def revoke_command(name: str, database: str | None) -> None:
    """End the token NAME: its uploads are refused from now on (its results stay)."""
    path, _ = storage_for(database)
    with closing(open_storage(path)) as storage:
        token = storage.revoke_token(name)
    click.echo(f"token {token.name!r} revoked at {token.revoked_at}")


@token_command.command("list")
@database_option
@debug_option
def list_command(database: str | None) -> None:
    """The tokens by name, with when they were made and revoked."""
    path, _ = storage_for(database)
    with closing(open_storage(path)) as storage:
        tokens = storage.tokens()
    for token in tokens:
        state = f"revoked {token.revoked_at}" if token.revoked_at else "active"
        click.echo(f"{token.name}\tcreated {token.created_at}\t{state}")
