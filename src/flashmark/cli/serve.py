"""`flashmark serve`: the results service (web pages and the API) on this machine.

The web framework is the optional `server` extra, imported here only when the command runs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os

import click

from flashmark.cli import debug_option
from flashmark.errors import EnvironmentProblem
from flashmark.server.storage import DATABASE_ENV, default_database, open_storage

database_option = click.option(
    "--database",
    metavar="URL|PATH",
    envvar=DATABASE_ENV,
    help=f"postgresql://USER@HOST/NAME, or an SQLite file [env {DATABASE_ENV}; default "
    "~/.local/share/flashmark/server.sqlite3].",
)


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    # FloatRange lets NaN through (every comparison with it is false).
    if not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number of uploads")
    return value


def storage_for(database: str | None) -> tuple[str, bool]:
    """The database to open, and whether its folder may be created (the default's only)."""
    if database:
        return database, False
    return default_database(os.environ), True


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
    help="The address users reach the service at, for links in answers "
    "(default: the address of each request).",
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
@debug_option
def serve_command(
    database: str | None,
    host: str,
    port: int,
    workers: int,
    base_url: str | None,
    max_upload_bytes: int,
    uploads_per_minute: float,
    debug: bool,
) -> None:
    """Serve results to browse, search and compare, and take uploads.

    \b
    One machine (SQLite, nothing to set up):
        flashmark serve
        flashmark token create alice        # a token to upload with
    A community (PostgreSQL, two processes; see docs/server.md):
        flashmark serve --database postgresql://flashmark@/flashmark --workers 2
    Reading is public; uploading needs a token (`flashmark upload ID --server URL`).
    """
    try:
        import uvicorn

        from flashmark.server.app import CONFIG_ENV, ServerConfig, create_app
        from flashmark.server.processes import reuse_port_supported, serve_processes
        from flashmark.server.protocol import PROTOCOL
    except ImportError as error:
        raise EnvironmentProblem(
            f"`flashmark serve` needs the server extra ({error.name} is missing): "
            "pip install 'flashmark[server]'"
        ) from None
    path, create = storage_for(database)
    if workers > 1 and not path.startswith(("postgresql://", "postgres://")):
        raise click.BadParameter("several processes need PostgreSQL", param_hint="--workers")
    # Migrate (and check the database) once, here: an unusable one stops with one line.
    open_storage(path, create_folder=create).close()
    config = ServerConfig(
        database=path,
        base_url=base_url,
        max_upload_bytes=max_upload_bytes,
        uploads_per_minute=uploads_per_minute,
    )
    click.echo(
        f"flashmark: serving {_shown(path)} at http://{host}:{port}/ (Ctrl-C stops)", err=True
    )
    log_level = "debug" if debug else "warning"
    if workers == 1:
        uvicorn.run(create_app(config), host=host, port=port, log_level=log_level, http=PROTOCOL)
        return
    os.environ[CONFIG_ENV] = json.dumps(dataclasses.asdict(config))  # the processes read it
    factory = "flashmark.server.app:app_from_environment"
    if reuse_port_supported():  # each process its own socket (flashmark/server/processes.py)
        try:
            serve_processes(factory, host, port, workers, log_level)
        except OSError as error:
            raise EnvironmentProblem(f"cannot listen on {host}:{port}: {error.strerror}") from None
        return
    uvicorn.run(
        factory,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        http=PROTOCOL,  # TCP_NODELAY on each connection (flashmark/server/protocol.py)
    )


def _shown(database: str) -> str:
    from flashmark.server.storage import _without_password

    return _without_password(database)
