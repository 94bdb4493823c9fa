"""A throwaway PostgreSQL server: initdb + pg_ctl on a temporary folder, reached only through a
unix socket in that folder (no TCP port), stopped and removed on exit.

PostgreSQL refuses to run as root; as root (CI) the server runs as the `postgres` user that
Debian's package makes, in a folder given to that user. Used by the service's tests and by
benchmarks/server_load.py.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

TIMEOUT_S = 60


def binaries() -> Path | None:
    """The folder of initdb and pg_ctl (Debian keeps them out of the PATH), newest version."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4])
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def missing_reason() -> str | None:
    if binaries() is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no postgres user to run PostgreSQL as"
    return None


class ThrowawayPostgres:
    """`with ThrowawayPostgres(settings) as pg: pg.url("name")` after `pg.create("name")`."""

    def __init__(self, settings: Sequence[str] = ()) -> None:
        self.settings = tuple(settings)  # extra `-c name=value` server settings
        self.folder: Path | None = None
        self.started = False

    def __enter__(self) -> ThrowawayPostgres:
        folder = Path(tempfile.mkdtemp(prefix="flashmark-pg-"))
        self.folder = folder
        try:
            if os.geteuid() == 0:
                user = pwd.getpwnam("postgres")
                os.chown(folder, user.pw_uid, user.pw_gid)
            self._as_owner("initdb", "-D", str(folder / "data"), "-U", "postgres", "--auth=trust",
                           "-E", "UTF8", "--locale=C", "--no-sync")  # fmt: skip
            options = [f"-k {folder}", "-c listen_addresses=''"]
            options += [f"-c {setting}" for setting in self.settings]
            self._as_owner(
                "pg_ctl", "-D", str(folder / "data"), "-l", str(folder / "server.log"),
                "-o", " ".join(options), "-w", "-t", str(TIMEOUT_S), "start",
            )  # fmt: skip
            self.started = True
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        folder = self.folder
        if folder is None:
            return
        try:
            if self.started:
                with contextlib.suppress(subprocess.SubprocessError, OSError):
                    self._as_owner(
                        "pg_ctl", "-D", str(folder / "data"), "-m", "immediate", "-w", "stop"
                    )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            self.folder = None
            self.started = False

    def restart(self) -> None:
        """Stop (fast: every connection ended) and start again with the same settings."""
        assert self.folder is not None
        self._as_owner(
            "pg_ctl", "-D", str(self.folder / "data"), "-l", str(self.folder / "server.log"),
            "-m", "fast", "-w", "-t", str(TIMEOUT_S), "restart",
        )  # fmt: skip

    def url(self, database: str = "postgres") -> str:
        assert self.folder is not None
        return f"postgresql://postgres@/{database}?host={self.folder}"

    def create(self, database: str, template: str = "template0") -> str:
        """A new database: empty (template0: nothing a test left in template1), or a copy of
        `template` (a database nobody is connected to)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{database}" TEMPLATE "{template}"')
        return self.url(database)

    def drop(self, database: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'DROP DATABASE "{database}" WITH (FORCE)')

    def _as_owner(self, tool: str, *args: str) -> None:
        binary = binaries()
        assert binary is not None
        command = [str(binary / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT_S,
            env={**os.environ, "LC_ALL": "C"}, check=False, cwd="/",
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr[-2000:]}")
