"""`flashmark serve`: the results service (web pages and the API) on this machine.

The web framework is the optional `server` extra, imported here only when the command runs.
"""

from __future__ import annotations

import math
import re
import urllib.parse
from typing import Any

import click

from flashmark.cli import DEBUG_HELP, remember_debug
from flashmark.errors import EnvironmentProblem
from flashmark.install_hint import add_extra
from flashmark.server.database_url import is_postgres, shown
from flashmark.server.storage import DATABASE_ENV, storage_for

database_option = click.option(
    "--database",
    metavar="URL|PATH",
    envvar=DATABASE_ENV,
    help=f"postgresql://USER@HOST/NAME (or a key=value connection string), or an SQLite file "
    f"[env {DATABASE_ENV}; default ~/.local/share/flashmark/server.sqlite3]. Its password is "
    "never printed.",
)
_HOST_NAME = re.compile(r"[A-Za-z0-9.-]{1,253}|\[?[0-9A-Fa-f:.]{2,45}\]?")


def _base_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    parts = urllib.parse.urlsplit(value)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.query
        or parts.fragment
    ):
        raise click.BadParameter(
            f"{value!r} is not an address such as https://results.example or "
            "http://host:8080/flashmark"
        )
    return value.rstrip("/")


def _trusted_hosts(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    for value in values:
        if not _HOST_NAME.fullmatch(value):
            raise click.BadParameter(f"{value!r} is not a host name or address (no port)")
    return values


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    # FloatRange lets NaN through (every comparison with it is false).
    if not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number of uploads")
    return value


@click.command("serve")
@database_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (0.0.0.0: every interface; better behind a proxy).",
)
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Server processes (PostgreSQL only: an SQLite file has one writer).",
)
@click.option(
    "--base-url",
    metavar="URL",
    callback=_base_url,
    help="The address users reach the service at (https://results.example): links in "
    "answers use it, whatever Host a request names.",
)
@click.option(
    "--trusted-host",
    "trusted_hosts",
    metavar="NAME",
    multiple=True,
    callback=_trusted_hosts,
    help="Without --base-url: a host name the service answers for (repeat for several); "
    "links use the request's Host only when it is one of these, and a request naming "
    "another is refused. Default: localhost, 127.0.0.1, ::1 and the --host address.",
)
@click.option(
    "--max-upload-bytes",
    type=click.IntRange(1024, 2**31),
    default=4 * 1024 * 1024,
    show_default=True,
    help="Largest result accepted.",
)
@click.option(
    "--uploads-per-minute",
    type=click.FloatRange(0.01, 1e6),
    callback=_finite,
    default=60.0,
    show_default=True,
    help="Uploads each token may make a minute (per process).",
)
# Exposed: it also sets the service's log level.
@click.option("--debug", is_flag=True, callback=remember_debug, help=DEBUG_HELP)
def serve_command(
    database: str | None,
    workers: int,
    debug: bool,
    **settings: Any,  # where to listen and ServerConfig's fields
) -> None:
    """Serve results to browse, search and compare, and take uploads.

    \b
    One machine (SQLite, nothing to set up):
        flashmark serve
        flashmark token create alice        # a token to upload with
    A community (PostgreSQL, two processes; see docs/server.md):
        flashmark serve --database postgresql://flashmark@/flashmark --workers 2
    Reading is public; uploading needs a token (`flashmark upload ID --server URL`), and an
    address that sent 10 wrong tokens may try one every 10 s. Links in answers come from
    --base-url, or from a request's Host only when it is a --trusted-host. Every upload is
    checked whole before it is kept (docs/server.md, "API").
    """
    try:
        from flashmark.server.service import prepare_service, run_service
    except ImportError as error:
        raise EnvironmentProblem(
            f"`flashmark serve` needs the server extra ({error.name} is missing): "
            f"{add_extra('server')}"
        ) from None
    path, create = storage_for(database)
    if workers > 1 and not is_postgres(path):
        raise click.BadParameter("several processes need PostgreSQL", param_hint="--workers")
    config = prepare_service(path, create_folder=create, **settings)
    host, port = settings["host"], settings["port"]
    click.echo(
        f"flashmark: serving {shown(path)} at http://{host}:{port}/ (Ctrl-C stops)", err=True
    )
    log_level = "debug" if debug else "warning"
    run_service(config, host=host, port=port, workers=workers, log_level=log_level)
