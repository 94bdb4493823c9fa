"""The history: every saved result in one SQLite file, with named, ordered migrations.

Where: --db PATH, else $FLASHMARK_DB, else $XDG_DATA_HOME/flashmark/history.sqlite3 (XDG Base
Directory Specification). Saving commands check it before they measure (`check_writable`);
reading commands open it read-only, a missing one reading as empty. A row holds one result
document of some kind, with a few columns copied out for listing. Migrations are only appended;
a database with one this version does not know is refused rather than misread.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flashmark.codec import compact
from flashmark.errors import (
    HistoryError,
    HistoryFolderMissing,
    HistoryLocked,
    HistoryNotADatabase,
    HistoryReadOnly,
    HistoryTooNew,
    RunNotFound,
)
from flashmark.history.cards import document_card_cid
from flashmark.history.entries import StoredResult
from flashmark.system.places import data_home

DB_ENV = "FLASHMARK_DB"
# How long to wait for another writer (another flashmark saving holds the lock for milliseconds);
# a lock held longer is someone else's open transaction, and waiting for it forever would hang
# a run before its first test.
BUSY_TIMEOUT_S = 5.0
# SQLite's INTEGER is a signed 64-bit number (https://www.sqlite.org/datatype3.html); ids are
# positive (AUTOINCREMENT starts at 1).
MAX_ID = 2**63 - 1
# A row the write check inserts and rolls back: it makes SQLite create its journal (in the
# database's folder) and write a page, which BEGIN IMMEDIATE alone does not.
_WRITE_CHECK = "flashmark-write-check"

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
    (
        # Benchmarks are listed by their absolute target, the measured folder or the device: a
        # target as typed ("." or "card") names another place from another folder. Documents
        # hold both (flashmark.result/1 "target").
        "0002_absolute_benchmark_targets",
        """
        UPDATE results SET target = COALESCE(
            json_extract(document, '$.target.folder'),
            json_extract(document, '$.target.path'),
            target
        ) WHERE kind = 'benchmark'
        """,
    ),
    (
        # The card a result measured, by its whole CID register (lower-case hex, as `flashmark
        # probe` shows it), indexed: the card passport recognises a card again and `history
        # --card` lists its results without reading every document. Backfilled from what the
        # documents always held (documents.cards: a capacity result's "card_cid", else the
        # first probed device's card CID).
        "0003_card_cid",
        """
        ALTER TABLE results ADD COLUMN card_cid TEXT;
        UPDATE results SET card_cid = lower(COALESCE(
            json_extract(document, '$.card_cid'),
            (SELECT json_extract(device.value, '$.card.cid.raw')
               FROM json_each(results.document, '$.probe.devices') AS device
              WHERE json_type(device.value, '$.card.cid.raw') = 'text'
              ORDER BY device.key LIMIT 1)
        )) WHERE json_valid(document);
        CREATE INDEX results_card_cid ON results (card_cid)
        """,
    ),
    (
        # Documents saved before every key of their schema was required may lack some, and
        # then no longer read: `flashmark history` reads each of these once (clearing the mark
        # of those that read) and names the others. A document saved since was read whole.
        "0004_unchecked_documents",
        """
        ALTER TABLE results ADD COLUMN unchecked INTEGER NOT NULL DEFAULT 0;
        UPDATE results SET unchecked = 1
        """,
    ),
    (
        # Reading refuses a value of another type than its field's (NaN or infinity where a
        # number belongs): every document saved before is read once more the same way.
        "0005_typed_documents",
        "UPDATE results SET unchecked = 1",
    ),
)


@dataclass(frozen=True)
class Imported:
    """What `History.add_unless_present` did: the id of the new entry, or of the same one."""

    id: int
    added: bool


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(DB_ENV):
        return Path(env[DB_ENV]).expanduser()
    return data_home(env) / "flashmark" / "history.sqlite3"


class History:
    """The history database at `path`.

    `create_folder` is for the default location only: a mistyped --db must fail, not create
    a tree of folders. Writers create the file (and migrate it); readers never create anything.
    """

    def __init__(
        self, path: Path, *, create_folder: bool = False, busy_timeout_s: float | None = None
    ) -> None:
        self.path = path
        self.create_folder = create_folder
        # Read when the history is opened, not when this module was: tests shorten the wait.
        self.busy_timeout_s = BUSY_TIMEOUT_S if busy_timeout_s is None else busy_timeout_s

    @classmethod
    def locate(
        cls, db_path: Path | None = None, environ: Mapping[str, str] | None = None
    ) -> History:
        """--db if given, else $FLASHMARK_DB, else the default location (whose folder alone
        is created on the first save)."""
        if db_path is not None:
            return cls(db_path.expanduser())
        env = os.environ if environ is None else environ
        return cls(default_db_path(env), create_folder=not env.get(DB_ENV))

    # -- writing -------------------------------------------------------------------------------
    def check_writable(self) -> None:
        """Everything a save needs, checked now: a HistoryError kind if any of it fails.

        Opens (creating the file if needed), checks that it is a flashmark history this
        version can read, applies pending migrations, then writes a row and rolls it back.
        """
        with self._writer() as connection, _transaction(connection, commit=False):
            connection.execute(
                "INSERT INTO schema_migrations VALUES (?, ?)", (_WRITE_CHECK, _now())
            )

    def save(self, *, kind: str, target: str, label: str, document: Mapping[str, Any]) -> int:
        """Store a document; returns its id, which is also written into the stored document."""
        with self._writer() as connection, _transaction(connection):
            return _insert(connection, kind, target, label, document)

    def replace(
        self, result_id: int, *, kind: str, target: str, label: str, document: Mapping[str, Any]
    ) -> int:
        """Store a document in place of entry `result_id` (a checkpoint of the same result,
        saved while it was measured); a new entry if that one is gone. Returns the id."""
        with self._writer() as connection, _transaction(connection):
            cursor = connection.execute(
                f"UPDATE results SET ({_COLUMNS}, unchecked) = (?, ?, ?, ?, ?, ?, ?, 0) "
                "WHERE id = ?",
                (*_row(kind, target, label, {**document, "id": result_id}), result_id),
            )
            if cursor.rowcount:
                return result_id
            return _insert(connection, kind, target, label, document)

    def add_unless_present(
        self, *, kind: str, target: str, label: str, document: Mapping[str, Any]
    ) -> Imported:
        """Store a document unless the history already holds the same one (equal apart from
        its id: a document saved elsewhere, or imported before, carries another id)."""
        created = _created_at(document)
        wanted = _without_id(document)
        with self._writer() as connection, _transaction(connection):
            rows = connection.execute(
                "SELECT id, document FROM results WHERE kind = ? AND created_at = ? "
                "AND target = ? ORDER BY id",
                (kind, created, _text(target)),
            ).fetchall()
            for row in rows:
                with contextlib.suppress(json.JSONDecodeError):
                    if _without_id(json.loads(row["document"])) == wanted:
                        return Imported(id=int(row["id"]), added=False)
            return Imported(id=_insert(connection, kind, target, label, document), added=True)

    @contextmanager
    def _writer(self) -> Iterator[sqlite3.Connection]:
        folder = self.path.parent
        if self.path.is_dir():
            raise HistoryError(
                f"the history {self.path} is a folder: give a file name with --db or {DB_ENV}"
            )
        if not folder.is_dir():
            if not self.create_folder:
                raise HistoryFolderMissing(
                    f"the folder {folder} of the history {self.path} does not exist: create "
                    f"it (mkdir -p {folder}) or choose another --db or {DB_ENV}"
                )
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise HistoryReadOnly(
                    f"cannot create the folder {folder} for the history: "
                    f"{error.strerror or error} (choose another with --db or {DB_ENV})"
                ) from None
        with self._connection("rwc") as connection:
            _check_is_history(connection, self.path)
            _migrate(connection, self.path)
            yield connection

    def mark_checked(self, result_ids: Iterable[int]) -> None:
        """Clears the mark of documents saved before 0004 or 0005 (migrations) that read."""
        with self._writer() as connection, _transaction(connection):
            connection.executemany(
                "UPDATE results SET unchecked = 0 WHERE id = ?", [(id_,) for id_ in result_ids]
            )

    # -- reading -------------------------------------------------------------------------------
    def get(self, result_id: int) -> StoredResult:
        row = None
        with self._reader() as connection:
            if connection is not None:
                row = connection.execute(
                    "SELECT * FROM results WHERE id = ?", (result_id,)
                ).fetchone()
        if row is None:
            raise RunNotFound(
                f"no run {result_id} in the history {self.path} (`flashmark history` lists them)"
            )
        return _stored(row)

    def of_card(self, cid: str) -> list[StoredResult]:
        """Every result of the card with this CID (lower-case hex), oldest first: read
        through the CID index (migration 0003_card_cid), not by scanning the documents."""
        with self._reader() as connection:
            rows = (
                []
                if connection is None
                else connection.execute(
                    "SELECT * FROM results WHERE card_cid = ? ORDER BY id", (cid.lower(),)
                ).fetchall()
            )
        return [_stored(row) for row in rows]

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
        with self._reader() as connection:
            rows = [] if connection is None else connection.execute(query, parameters).fetchall()
        return [_stored(row) for row in rows]

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection | None]:
        """A read-only connection, or None for a history that does not exist (yet): reading
        must never create a file or a folder."""
        if not self.path.exists():
            yield None
            return
        if self.path.is_dir():
            raise HistoryError(f"the history {self.path} is a folder: give a file with --db")
        with self._connection("ro") as connection:
            applied = _check_is_history(connection, self.path)
            pending = applied is not None and _pending(applied, self.path)
        if applied is None:  # an empty file: no history yet
            yield None
            return
        if pending:
            # Written by an older flashmark: upgrade it in place (no new file), as a save would.
            with self._writer():
                pass
        with self._connection("ro") as connection:
            yield connection

    # -- both ----------------------------------------------------------------------------------
    @contextmanager
    def _connection(self, mode: str) -> Iterator[sqlite3.Connection]:
        # A URI so that mode=ro can refuse to create the file; the path is quoted so that
        # '?' and '#' in a folder name stay part of the name.
        uri = f"file:{urllib.parse.quote(str(self.path.absolute()))}?mode={mode}"
        try:
            connection = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout_s)
        except sqlite3.Error as error:
            raise _classified(error, self.path, self.busy_timeout_s) from None
        with closing(connection):
            # Autocommit mode plus explicit BEGIN/COMMIT (`_transaction`): Python's default mode
            # commits DDL on its own, which would leave a migration half applied on failure.
            connection.isolation_level = None
            connection.row_factory = sqlite3.Row
            try:
                yield connection
            except sqlite3.Error as error:
                raise _classified(error, self.path, self.busy_timeout_s) from None


def _insert(
    connection: sqlite3.Connection,
    kind: str,
    target: str,
    label: str,
    document: Mapping[str, Any],
) -> int:
    cursor = connection.execute(
        f"INSERT INTO results ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        _row(kind, target, label, document),
    )
    new_id = int(cursor.lastrowid or 0)
    connection.execute(
        "UPDATE results SET document = ? WHERE id = ?",
        (compact({**document, "id": new_id}), new_id),
    )
    return new_id


_COLUMNS = "kind, created_at, target, label, schema, document, card_cid"


def _row(kind: str, target: str, label: str, document: Mapping[str, Any]) -> tuple[Any, ...]:
    """The values of `_COLUMNS` for a document."""
    return (
        kind, _created_at(document), _text(target), _text(label),
        str(document.get("schema", "")), compact(document), document_card_cid(document),
    )  # fmt: skip


def _text(value: str) -> str:
    """A listing column as valid UTF-8: a path that is not (a file name's raw bytes, which
    Python carries as surrogates) is kept with those bytes written as \\xNN; the document
    itself keeps them exactly (JSON escapes them)."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _created_at(document: Mapping[str, Any]) -> str:
    return str(document.get("finished_at") or _now())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _without_id(document: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "id"}


def _classified(error: sqlite3.Error, path: Path, busy_timeout_s: float) -> HistoryError:
    """An SQLite failure as the HistoryError kind that says what is wrong and what fixes it.

    SQLite's primary result codes: https://www.sqlite.org/rescode.html
    """
    name = getattr(error, "sqlite_errorname", "") or ""
    elsewhere = f"choose another with --db or {DB_ENV}"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return HistoryLocked(
            f"the history {path} is locked by another program (still after waiting "
            f"{busy_timeout_s:g} s): let it finish, or {elsewhere}"
        )
    if name == "SQLITE_NOTADB" or name.startswith("SQLITE_CORRUPT"):
        return HistoryNotADatabase(
            f"the history {path} is not a usable SQLite database ({error}): move it "
            f"away, or {elsewhere}"
        )
    if name.startswith("SQLITE_READONLY"):
        return HistoryReadOnly(
            f"the history {path} cannot be written ({error}): make it writable, or {elsewhere}"
        )
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        # Also what a write gives when SQLite cannot create its journal beside the file.
        return HistoryReadOnly(
            f"cannot open or write the history {path} ({error}): its folder {path.parent} "
            f"must be writable (for SQLite's journal); fix that, or {elsewhere}"
        )
    if name == "SQLITE_FULL":
        return HistoryError(f"the history {path} cannot grow: the disk is full ({error})")
    return HistoryError(f"the history {path}: {error} ({name or type(error).__name__})")


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
        unchecked=bool(row["unchecked"]),
    )


@contextmanager
def _transaction(connection: sqlite3.Connection, *, commit: bool = True) -> Iterator[None]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        # The original error is what the user must see: a failing ROLLBACK (SQLite already
        # rolled back on its own after some errors, e.g. SQLITE_FULL) must not replace it.
        with contextlib.suppress(sqlite3.Error):
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT" if commit else "ROLLBACK")


def _check_is_history(connection: sqlite3.Connection, path: Path) -> set[str] | None:
    """The migrations applied, or None for an empty database; refuses another program's
    database and one from a newer flashmark. Reading sqlite_master is also what finds out
    that a file is not a database at all (SQLITE_NOTADB)."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    if not tables:
        return None
    if "schema_migrations" not in tables:
        shown = ", ".join(sorted(tables)[:5])
        raise HistoryNotADatabase(
            f"{path} is an SQLite database but not a flashmark history (it holds {shown}): "
            f"choose another with --db or {DB_ENV}"
        )
    applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
    _pending(applied, path)
    return applied


def _pending(applied: set[str], path: Path) -> bool:
    """Whether migrations are to be applied; HistoryTooNew for one this version lacks."""
    known = {name for name, _ in MIGRATIONS}
    if unknown := sorted(applied - known):
        raise HistoryTooNew(
            f"the history {path} was written by a newer flashmark (migrations "
            f"{', '.join(unknown)}): upgrade flashmark, or choose another with --db or {DB_ENV}"
        )
    return bool(known - applied)


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
    if not _pending(applied, path):
        return
    for name, sql in MIGRATIONS:
        if name in applied:
            continue
        with _transaction(connection):
            # executescript would commit on its own; run the statements inside our transaction.
            for statement in filter(str.strip, sql.split(";")):
                connection.execute(statement)
            connection.execute("INSERT INTO schema_migrations VALUES (?, ?)", (name, _now()))
