"""The history: every saved result in one SQLite file, with named, ordered migrations.

Where: --db PATH, else $FLASHMARK_DB, else $XDG_DATA_HOME/flashmark/history.sqlite3
(XDG Base Directory Specification; XDG_DATA_HOME defaults to ~/.local/share).

A row holds one result document (JSON) of some kind ("benchmark" for `flashmark run`;
other commands add their own kinds), with a few columns copied out of it for listing.
Migrations only ever get appended; each runs once, in order, in a transaction, and its name
is recorded in schema_migrations. A database with a migration this version does not know
was written by a newer flashmark and is refused rather than misread.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flashmark.errors import HistoryError, RunNotFound

DB_ENV = "FLASHMARK_DB"

# (name, SQL). Append only; never edit a migration that has shipped.
MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_results",
        """
        CREATE TABLE results (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,            -- "benchmark", "monitor", "workload", ...
            created_at TEXT NOT NULL,      -- ISO 8601, UTC
            target TEXT NOT NULL,          -- what was measured, as the user named it
            label TEXT NOT NULL,           -- e.g. the profile name or the command
            schema TEXT NOT NULL,          -- the document's schema, e.g. flashmark.result/1
            document TEXT NOT NULL         -- the whole result document, JSON
        );
        CREATE INDEX results_created_at ON results (created_at);
        """,
    ),
)


@dataclass(frozen=True)
class StoredResult:
    id: int
    kind: str
    created_at: str
    target: str
    label: str
    schema: str
    document: Mapping[str, Any]


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(DB_ENV):
        return Path(env[DB_ENV]).expanduser()
    data_home = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "flashmark" / "history.sqlite3"


class History:
    """The history database at `path` (created and migrated on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=10)
        except (OSError, sqlite3.Error) as error:
            raise HistoryError(
                f"cannot open the history {self.path}: {error} "
                "(choose another with --db or FLASHMARK_DB, or --no-save)"
            ) from None
        with closing(connection):
            # Autocommit mode plus explicit BEGIN/COMMIT (`_transaction`): Python's default mode
            # commits DDL on its own, which would leave a migration half applied on failure.
            connection.isolation_level = None
            connection.row_factory = sqlite3.Row
            try:
                _migrate(connection, self.path)
                yield connection
            except sqlite3.Error as error:
                raise HistoryError(f"history {self.path}: {error}") from None

    def save(self, *, kind: str, target: str, label: str, document: Mapping[str, Any]) -> int:
        """Store a document; returns its id, which is also written into the stored document."""
        created = str(
            document.get("finished_at") or datetime.now(UTC).isoformat(timespec="seconds")
        )
        schema = str(document.get("schema", ""))
        with self._connect() as connection, _transaction(connection):
            cursor = connection.execute(
                "INSERT INTO results (kind, created_at, target, label, schema, document) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (kind, created, target, label, schema, json.dumps(document)),
            )
            new_id = int(cursor.lastrowid or 0)
            connection.execute(
                "UPDATE results SET document = ? WHERE id = ?",
                (json.dumps({**document, "id": new_id}), new_id),
            )
        return new_id

    def get(self, result_id: int) -> StoredResult:
        with self._connect() as connection:
            row = connection.execute("SELECT * FROM results WHERE id = ?", (result_id,)).fetchone()
        if row is None:
            raise RunNotFound(
                f"no run {result_id} in the history {self.path} (`flashmark history` lists them)"
            )
        return _stored(row)

    def list(self, limit: int | None = None, kind: str | None = None) -> list[StoredResult]:
        query = "SELECT * FROM results"
        parameters: list[Any] = []
        if kind is not None:
            query += " WHERE kind = ?"
            parameters.append(kind)
        query += " ORDER BY id DESC"
        if limit is not None:
            query += " LIMIT ?"
            parameters.append(limit)
        with self._connect() as connection:
            rows = connection.execute(query, parameters).fetchall()
        return [_stored(row) for row in rows]


def _stored(row: sqlite3.Row) -> StoredResult:
    try:
        document = json.loads(row["document"])
    except json.JSONDecodeError as error:
        raise HistoryError(f"history entry {row['id']} is not valid JSON: {error}") from None
    return StoredResult(
        id=row["id"],
        kind=row["kind"],
        created_at=row["created_at"],
        target=row["target"],
        label=row["label"],
        schema=row["schema"],
        document=document,
    )


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
    known = {name for name, _ in MIGRATIONS}
    if unknown := sorted(applied - known):
        raise HistoryError(
            f"the history {path} was written by a newer flashmark (migrations "
            f"{', '.join(unknown)}); upgrade flashmark or use another --db"
        )
    for name, sql in MIGRATIONS:
        if name in applied:
            continue
        with _transaction(connection):
            # executescript would commit on its own; run the statements inside our transaction.
            for statement in filter(str.strip, sql.split(";")):
                connection.execute(statement)
            connection.execute(
                "INSERT INTO schema_migrations VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat(timespec="seconds")),
            )
