"""`flashmark serve`: the results service on this machine, in one process or several
(processes.py), once its address and database are checked.

Imports the web framework (the `server` extra): only `flashmark serve` loads this module.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
from typing import Any

import uvicorn

from flashmark.errors import EnvironmentProblem
from flashmark.server.app import CONFIG_ENV, LOOPBACK_HOSTS, ServerConfig, create_app
from flashmark.server.processes import bound, reuse_port_supported, serve_processes
from flashmark.server.protocol import PROTOCOL
from flashmark.server.storage import open_storage


def prepare_service(
    database: str,
    *,
    create_folder: bool,
    host: str,
    port: int,
    trusted_hosts: tuple[str, ...],
    **settings: Any,
) -> ServerConfig:
    """The service's settings (`settings`: ServerConfig's others), once nothing listens at
    HOST:PORT and the database (its folder created when `create_folder`) is migrated: an
    unusable one stops here, with one line. No trusted host given: the loopback names and
    the address it listens on."""
    _refuse_taken_address(host, port)
    open_storage(database, create_folder=create_folder).close()
    if not trusted_hosts:
        trusted_hosts = LOOPBACK_HOSTS
        if host not in ("0.0.0.0", "::", ""):
            trusted_hosts = (*trusted_hosts, host)
    return ServerConfig(database=database, trusted_hosts=trusted_hosts, **settings)


def run_service(
    config: ServerConfig, *, host: str, port: int, workers: int, log_level: str
) -> None:
    """Serve until stopped: one uvicorn process, or `workers` of them (PostgreSQL only)."""
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


def _refuse_taken_address(host: str, port: int) -> None:
    """EnvironmentProblem when a socket is bound to HOST:PORT already."""
    try:
        bound(host, port, reuse_port=False).close()
    except OSError as error:
        taken = " (another program, or processes of an earlier `flashmark serve`)"
        raise EnvironmentProblem(
            f"cannot listen on {host}:{port}: {error.strerror}"
            + (taken if error.errno == errno.EADDRINUSE else "")
        ) from None
