"""Where the service keeps results and tokens: SQLite for one machine, PostgreSQL for a community.

One class, two connection providers, every query written once. Each write is one transaction,
committed before the answer, so an acknowledged upload survives the service being killed.
SQLite runs in WAL mode with synchronous=FULL (https://www.sqlite.org/pragma.html), and its file
is watched: a connection on a deleted or replaced file would acknowledge writes that are lost,
so the database is then unavailable until the path names a service database again. PostgreSQL
goes through a checked psycopg pool, imported only when used. docs/server.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import sqlite3
import threading
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol

from flashmark.bench.job_hash import differences
from flashmark.codec import document
from flashmark.errors import ExitStatus, FlashmarkError
from flashmark.install_hint import add_extra
from flashmark.server.database_url import is_postgres, redacted, shown
from flashmark.server.intake import (
    HEADLINE_COLUMNS,
    Accepted,
    AcceptedReading,
    ReadingFacts,
    Summary,
)
from flashmark.server.migrations import MIGRATIONS, POSTGRES, SQLITE, Dialect, statements
from flashmark.system.places import data_home

DATABASE_ENV = "FLASHMARK_SERVER_DB"
BUSY_TIMEOUT_S = 10.0
POOL_WAIT_S = 5.0
_LOG = logging.getLogger("flashmark.server")
# Key of the advisory lock that lets one of several starting server processes migrate.
_MIGRATION_LOCK = 0x666C6D6B  # "flmk"
# A stored row's columns are named as the fields of the dataclass it is read into.
_SUMMARY_FIELDS = tuple(f.name for f in fields(Summary) if f.name != "headlines")
_SUMMARY = ", ".join(("id", "uploaded_at", *_SUMMARY_FIELDS, *HEADLINE_COLUMNS))
_READING_FIELDS = tuple(f.name for f in fields(ReadingFacts))
_READING = ", ".join(("id", "uploaded_at", *_READING_FIELDS))
# A campaign page reads every result of its campaign, one row a board: this bounds what a
# page costs (a fleet of hundreds of boards, each run again a few times).
MAX_CAMPAIGN_RESULTS = 1000


class StorageError(FlashmarkError):
    """The database cannot be used (unreachable, locked, not a service database)."""

    exit_status = ExitStatus.HISTORY


class CampaignRefused(FlashmarkError):
    """An upload its campaign does not take; `kind` names why: campaign-of-another-token,
    campaign-job-differs (another benchmark: its job hash differs), campaign-full."""

    exit_status = ExitStatus.USAGE

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


class TokenError(FlashmarkError):
    """A token name that exists already, or none by that name."""

    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class Stored:
    id: int
    created: bool  # False: the same document was there already


@dataclass(frozen=True)
class Token:
    id: int
    name: str
    created_at: str
    revoked_at: str | None


_TOKEN = ", ".join(f.name for f in fields(Token))


@dataclass(frozen=True)
class ResultRow(Summary):
    id: int
    uploaded_at: str


@dataclass(frozen=True)
class ReadingRow:
    """A stored health reading, as a model's page lists it."""

    id: int
    uploaded_at: str
    facts: ReadingFacts


@dataclass(frozen=True)
class CampaignResult:
    """One result of a campaign, with what its page shows beside the result's summary."""

    row: ResultRow
    board_label: str
    grades: Mapping[str, str | None]  # grade name: verdict ("pass", "fail", "uncertain")
    failed_step: str | None  # a partial run's: the step that failed
    failed_status: int | None


@dataclass(frozen=True)
class CampaignHead:
    """What names a campaign: the job hash (and its parts) every result of it shares."""

    name: str = field(metadata=document(key="campaign"))
    created_at: str
    job_hash: str
    job: Mapping[str, Any]


@dataclass(frozen=True)
class CampaignRecord(CampaignHead):
    """A campaign as stored: its results, oldest first."""

    results: tuple[CampaignResult, ...]


@dataclass(frozen=True)
class Search:
    """Filters of a search; None matches everything. Text filters ignore case."""

    maker: str | None = None
    name: str | None = None  # the start of the product name
    capacity_bytes: int | None = None  # nominal: matches 88%..102% of it (see docs/server.md)
    model: str | None = None  # intake.model_key
    medium: str | None = None
    board: str | None = None  # the start of the board's name
    profile: str | None = None
    before: int | None = None  # ids below this one (the next page)
    limit: int = 50


class _Provider(Protocol):
    dialect: Dialect

    def connection(self) -> contextlib.AbstractContextManager[Any]: ...

    def check_written(self) -> None: ...

    def close(self) -> None: ...


class Storage:
    """The service's database. Thread-safe: each call takes its own connection."""

    def __init__(self, provider: _Provider) -> None:
        self._provider = provider
        self.dialect = provider.dialect

    # -- set-up ---------------------------------------------------------------------------------
    def migrate(self) -> None:
        with self._transaction(write=True) as run:
            if self.dialect is POSTGRES:
                # Several server processes may start at once: one migrates, the others wait.
                run("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
            run(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            applied = {row[0] for row in run("SELECT name FROM schema_migrations").fetchall()}
        for name, sql in MIGRATIONS:
            if name in applied:
                continue
            with self._transaction(write=True) as run:
                if self.dialect is POSTGRES:
                    run("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
                if run("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone():
                    continue  # another process applied it while this one waited
                for statement in statements(self.dialect, sql):
                    run(statement)
                run("INSERT INTO schema_migrations VALUES (?, ?)", (name, _now()))
        known = {name for name, _ in MIGRATIONS}
        unknown = {row[0] for row in self._all("SELECT name FROM schema_migrations")} - known
        if unknown:
            raise StorageError(
                f"the database was migrated by a newer flashmark ({', '.join(sorted(unknown))}): "
                "upgrade flashmark"
            )

    def close(self) -> None:
        self._provider.close()

    # -- results --------------------------------------------------------------------------------
    def add_result(self, accepted: Accepted, token_id: int) -> Stored:
        if accepted.facts.campaign is not None:
            return self._add_to_campaign(accepted, token_id)
        return self._insert_once("results", _values(accepted, token_id), accepted)

    def _add_to_campaign(self, accepted: Accepted, token_id: int) -> Stored:
        """A result of a campaign, in one transaction with the campaign: the first result makes
        it (with its job hash and token); a later one must have the same job hash and come with
        the same token, and the campaign must have room (CampaignRefused otherwise)."""
        facts = accepted.facts
        name = facts.campaign
        assert name is not None
        lock = " FOR UPDATE" if self.dialect is POSTGRES else ""  # SQLite: BEGIN IMMEDIATE
        with self._transaction(write=True) as run:
            run(
                "INSERT INTO campaigns (name, job_hash, job, token_id, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
                (name, facts.job_hash, json.dumps(facts.job, sort_keys=True), token_id, _now()),
            )
            campaign = run(
                f"SELECT job_hash, job, token_id FROM campaigns WHERE name = ?{lock}", (name,)
            ).fetchone()
            if int(campaign[2]) != token_id:
                raise CampaignRefused(
                    "campaign-of-another-token",
                    f"the campaign {name!r} was started with another token: upload into a "
                    "campaign of your own (another --campaign name)",
                )
            if campaign[0] != facts.job_hash:
                theirs = json.loads(campaign[1])
                raise CampaignRefused(
                    "campaign-job-differs",
                    f"this result's job hash {facts.job_hash} differs from the campaign "
                    f"{name!r}'s {campaign[0]} ({'; '.join(differences(facts.job, theirs))}): "
                    "a campaign compares runs of the same benchmark only (the same flashmark "
                    "and fio versions, target kind, profile and settings)",
                )
            row = run(
                "SELECT id FROM results WHERE content_hash = ?", (accepted.content_hash,)
            ).fetchone()
            if row is not None:
                return Stored(id=int(row[0]), created=False)
            count = run("SELECT COUNT(*) FROM results WHERE campaign = ?", (name,)).fetchone()
            if int(count[0]) >= MAX_CAMPAIGN_RESULTS:
                raise CampaignRefused(
                    "campaign-full",
                    f"the campaign {name!r} holds {MAX_CAMPAIGN_RESULTS} results, as many as "
                    "one may: start another campaign",
                )
            values = _values(accepted, token_id)
            inserted = run(_insert("results", values), tuple(values.values())).fetchall()
        if not inserted:  # another upload of the same document won the race: its id
            sql = "SELECT id FROM results WHERE content_hash = ?"
            return Stored(id=int(self._one(sql, (accepted.content_hash,))[0]), created=False)
        return Stored(id=int(inserted[0][0]), created=True)

    def campaign(self, name: str) -> CampaignRecord | None:
        """A campaign and its results (at most MAX_CAMPAIGN_RESULTS), or None."""
        with self._transaction() as run:
            head = run(
                "SELECT created_at, job_hash, job FROM campaigns WHERE name = ?", (name,)
            ).fetchone()
            if head is None:
                return None
            rows = run(
                f"SELECT {_SUMMARY}, board_label, grades, failed_step, failed_status "
                "FROM results WHERE campaign = ? ORDER BY id LIMIT ?",
                (name, MAX_CAMPAIGN_RESULTS),
            ).fetchall()
        width = _SUMMARY.count(",") + 1  # the summary's columns come first
        results = []
        for row in rows:
            label, grades, step, status = row[width:]
            grade_of = json.loads(grades or "{}")
            results.append(CampaignResult(_row(row[:width]), label, grade_of, step, status))
        return CampaignRecord(name, head[0], head[1], json.loads(head[2]), tuple(results))

    def add_results(self, batch: Sequence[Accepted], token_id: int) -> None:
        """Many results in one transaction (seeding a benchmark's database); a document
        already there is skipped, as add_result would answer with its id."""
        if not batch:
            return
        rows = [tuple(_values(accepted, token_id).values()) for accepted in batch]
        sql = _insert("results", _values(batch[0], token_id)).removesuffix(" RETURNING id")
        with self._transaction(write=True) as run:
            run.many(sql, rows)

    # -- health readings ------------------------------------------------------------------------
    def add_reading(self, accepted: AcceptedReading, token_id: int) -> Stored:
        """A health reading, kept as add_result keeps a run: once per document."""
        facts = {name: getattr(accepted.facts, name) for name in _READING_FIELDS}
        return self._insert_once(
            "health_readings", {**_kept(accepted, token_id), **facts}, accepted
        )

    def reading_document(self, reading_id: int) -> dict[str, Any] | None:
        """The stored reading with the service's id, or None."""
        return self._document_of("health_readings", reading_id)

    def reading(self, reading_id: int) -> ReadingRow | None:
        row = self._one(f"SELECT {_READING} FROM health_readings WHERE id = ?", (reading_id,))
        return None if row is None else _reading_row(row)

    def readings_of_model(self, model_key: str, limit: int) -> list[ReadingRow]:
        """The newest `limit` readings of a model."""
        rows = self._all(
            f"SELECT {_READING} FROM health_readings WHERE model_key = ? ORDER BY id DESC LIMIT ?",
            (model_key, limit),
        )
        return [_reading_row(row) for row in rows]

    def document(self, result_id: int) -> dict[str, Any] | None:
        """The stored document with the service's id, or None."""
        return self._document_of("results", result_id)

    def summary(self, result_id: int) -> ResultRow | None:
        row = self._one(f"SELECT {_SUMMARY} FROM results WHERE id = ?", (result_id,))
        return None if row is None else _row(row)

    def search(self, search: Search) -> list[ResultRow]:
        where, parameters = _filters(search)
        sql = f"SELECT {_SUMMARY} FROM results"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC LIMIT ?"
        return [_row(row) for row in self._all(sql, (*parameters, search.limit))]

    def profiles_of_model(self, model_key: str) -> dict[str, int]:
        rows = self._all(
            "SELECT profile, COUNT(*) FROM results WHERE model_key = ? GROUP BY profile "
            "ORDER BY profile",
            (model_key,),
        )
        return {str(row[0]): int(row[1]) for row in rows}

    def group_figures(self, model_key: str, profile: str) -> dict[str, list[float]]:
        """The headline figures of every result of a model and profile, each column sorted
        (for ranking.standings): one query, through the (model_key, profile) index."""
        columns = ", ".join(HEADLINE_COLUMNS)
        sql = f"SELECT {columns} FROM results WHERE model_key = ? AND profile = ?"
        rows = self._all(sql, (model_key, profile))
        return {
            column: sorted(row[index] for row in rows if row[index] is not None)
            for index, column in enumerate(HEADLINE_COLUMNS)
        }

    def export_batches(self, batch: int = 500) -> Iterator[list[tuple[ResultRow, bytes]]]:
        """Every result, oldest first, in batches of short queries (no transaction is held
        open while a slow client reads the download)."""
        after = 0
        while True:
            rows = self._all(
                f"SELECT {_SUMMARY}, document FROM results WHERE id > ? ORDER BY id LIMIT ?",
                (after, batch),
            )
            if not rows:
                return
            yield [(_row(row[:-1]), zlib.decompress(bytes(row[-1]))) for row in rows]
            after = int(rows[-1][0])

    # -- tokens ---------------------------------------------------------------------------------
    def create_token(self, name: str) -> str:
        """A new token for NAME, returned once: only its hash is stored."""
        secret = "fmk_" + secrets.token_urlsafe(32)
        with self._transaction(write=True) as run:
            if run("SELECT 1 FROM tokens WHERE name = ?", (name,)).fetchone():
                raise TokenError(
                    f"a token named {name!r} exists already: choose another name, or "
                    f"`flashmark token revoke {name}` and create one under a new name"
                )
            run(
                "INSERT INTO tokens (name, token_hash, created_at) VALUES (?, ?, ?)",
                (name, token_hash(secret), _now()),
            )
        return secret

    def revoke_token(self, name: str) -> Token:
        with self._transaction(write=True) as run:
            row = run(f"SELECT {_TOKEN} FROM tokens WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise TokenError(f"no token named {name!r} (`flashmark token list` shows them)")
            if row[3] is None:
                run("UPDATE tokens SET revoked_at = ? WHERE id = ?", (_now(), row[0]))
        return Token(*self._one(f"SELECT {_TOKEN} FROM tokens WHERE name = ?", (name,)))

    def tokens(self) -> list[Token]:
        return [Token(*row) for row in self._all(f"SELECT {_TOKEN} FROM tokens ORDER BY id")]

    def token_for(self, secret: str) -> Token | None:
        row = self._one(f"SELECT {_TOKEN} FROM tokens WHERE token_hash = ?", (token_hash(secret),))
        return None if row is None else Token(*row)

    # -- plumbing -------------------------------------------------------------------------------
    def _insert_once(
        self, table: str, values: Mapping[str, Any], accepted: Accepted | AcceptedReading
    ) -> Stored:
        """One INSERT, committed on its own (autocommit): it is atomic by itself, so no BEGIN
        and COMMIT round trips are needed around it. A document already stored (same content
        hash) inserts nothing; its id is read after, and rows are never deleted."""
        with self._transaction() as run:
            # fetchall, not fetchone: SQLite commits an autocommit statement when it has been
            # stepped to its end, and the answer must not come before the commit.
            rows = run(_insert(table, values), tuple(values.values())).fetchall()
            if not rows:
                row = run(
                    f"SELECT id FROM {table} WHERE content_hash = ?", (accepted.content_hash,)
                ).fetchone()
        # A file deleted or replaced while the row was written took it along: not acknowledged.
        self._provider.check_written()
        if rows:
            return Stored(id=int(rows[0][0]), created=True)
        return Stored(id=int(row[0]), created=False)

    def _document_of(self, table: str, row_id: int) -> dict[str, Any] | None:
        row = self._one(f"SELECT document FROM {table} WHERE id = ?", (row_id,))
        return None if row is None else with_id(row_id, json.loads(zlib.decompress(row[0])))

    def _one(self, sql: str, parameters: Sequence[Any]) -> Any:
        """The first row one read statement finds, or None."""
        with self._transaction() as run:
            return run(sql, parameters).fetchone()

    def _all(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """Every row one read statement finds."""
        with self._transaction() as run:
            return list(run(sql, parameters).fetchall())

    @contextlib.contextmanager
    def _transaction(self, *, write: bool = False) -> Iterator[_Statements]:
        """What runs statements: `run(sql, parameters) -> cursor`, `run.many(sql, rows)`.

        write=True: every statement of the block in one transaction, committed at its end
        (rolled back on any exception). Otherwise each statement is its own transaction
        (every read of this class, and an upload's single INSERT): no BEGIN and COMMIT
        round trips around it (PostgreSQL connections are in autocommit mode, SQLite's
        isolation_level is None), which are two thirds of a page's trips to PostgreSQL."""
        postgres = self.dialect is POSTGRES
        with self._provider.connection() as connection:
            run = _Statements(connection, postgres)
            if not write:
                yield run
                return
            if postgres:
                with connection.transaction():
                    yield run
                return
            # IMMEDIATE takes the write lock first: no deadlock between two upgrades.
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield run
                connection.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    connection.execute("ROLLBACK")
                raise
            self._provider.check_written()


@dataclass(frozen=True)
class _Statements:
    """Statements on one connection, written with SQLite's ? placeholders (psycopg's: %s)."""

    connection: Any
    postgres: bool

    def __call__(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        return self.connection.execute(self._sql(sql), parameters)

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with contextlib.closing(self.connection.cursor()) as cursor:
            cursor.executemany(self._sql(sql), rows)

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql


def _insert(table: str, values: Mapping[str, Any]) -> str:
    """The INSERT of a row of `values` (column: value) that a stored document skips."""
    return (
        f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join('?' * len(values))}) "
        "ON CONFLICT (content_hash) DO NOTHING RETURNING id"
    )


def _kept(accepted: Accepted | AcceptedReading, token_id: int) -> dict[str, Any]:
    """The columns every stored document has."""
    body = json.dumps(accepted.document, ensure_ascii=False, separators=(",", ":"))
    return {
        "content_hash": accepted.content_hash,
        "uploaded_at": _now(),
        "token_id": token_id,
        "schema": accepted.document["schema"],
        "document": zlib.compress(body.encode("utf-8"), 6),
    }


def _values(accepted: Accepted, token_id: int) -> dict[str, Any]:
    facts = accepted.facts
    return {
        **_kept(accepted, token_id),
        **{name: getattr(facts, name) for name in _SUMMARY_FIELDS},
        **{f"{name}_key": _key(getattr(facts, name)) for name in ("maker", "product", "board")},
        **{column: facts.headlines[column] for column in HEADLINE_COLUMNS},
        "campaign": facts.campaign,
        "board_label": facts.board_label,
        "job_hash": facts.job_hash or None,
        "grades": json.dumps(dict(facts.grades), sort_keys=True),
        "failed_step": facts.failed_step,
        "failed_status": facts.failed_status,
    }


def token_hash(secret: str) -> str:
    # A token is 32 random bytes: a fast hash cannot be reversed or guessed, unlike a
    # password, so no slow KDF is needed (and each upload can check it cheaply).
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _key(text: str | None) -> str | None:
    return None if text is None else text.casefold()


def _prefix(text: str) -> list[str]:
    """Bounds of the keys starting with `text`: U+10FFFF sorts after every character."""
    key = text.casefold()
    return [key, key + "\U0010ffff"]


def _filters(search: Search) -> tuple[list[str], list[Any]]:
    capacity = search.capacity_bytes
    # (clause, its parameters; None: the filter is not given)
    given: tuple[tuple[str, list[Any] | None], ...] = (
        ("maker_key = ?", [search.maker.casefold()] if search.maker else None),
        # A prefix as a range of the byte-ordered key: an index serves it on both engines.
        ("product_key >= ? AND product_key < ?", _prefix(search.name) if search.name else None),
        # Cards hold a little less than printed (64 GB: 62.3e9 bytes usable), some a bit more.
        (
            "capacity_bytes BETWEEN ? AND ?",
            None if capacity is None else [int(capacity * 0.88), int(capacity * 1.02)],
        ),
        ("model_key = ?", [search.model] if search.model else None),
        ("medium = ?", [search.medium.casefold()] if search.medium else None),
        ("board_key >= ? AND board_key < ?", _prefix(search.board) if search.board else None),
        ("profile = ?", [search.profile] if search.profile else None),
        ("id < ?", None if search.before is None else [search.before]),
    )
    where = [clause for clause, values in given if values is not None]
    parameters = [value for _, values in given if values is not None for value in values]
    return where, parameters


# The drivers give each column's own type (REAL and DOUBLE PRECISION: float, BIGINT: int),
# so a row's values are the fields' as they are.
def _row(row: Sequence[Any]) -> ResultRow:
    width = len(_SUMMARY_FIELDS) + 2
    named = dict(zip(("id", "uploaded_at", *_SUMMARY_FIELDS), row[:width], strict=True))
    return ResultRow(**named, headlines=dict(zip(HEADLINE_COLUMNS, row[width:], strict=True)))


def _reading_row(row: Sequence[Any]) -> ReadingRow:
    facts = ReadingFacts(**dict(zip(_READING_FIELDS, row[2:], strict=True)))
    return ReadingRow(id=row[0], uploaded_at=row[1], facts=facts)


def with_id(row_id: int, document: Mapping[str, Any]) -> dict[str, Any]:
    """A stored document as the service gives it: with its id after the schema, as in
    `flashmark show --json`."""
    return {"schema": document["schema"], "id": row_id, **document}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# -- opening ------------------------------------------------------------------------------------


class _SqliteProvider:
    dialect = SQLITE

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        # The file the connections are open on, (st_dev, st_ino); None until the first one
        # is open (it may create the file: the service's start, `flashmark token`).
        self._file: tuple[int, int] | None = None
        self._generation = 0  # grows whenever the connections are opened on another file
        self._in_use = 0
        self._changing = False
        self._state = threading.Condition()

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        with self._state:
            while self._changing:
                self._state.wait()
            if self._file is not None and self._identity() != self._file:
                self._reopen()
            self._in_use += 1
        try:
            # One connection per thread, kept: opening one costs more than most queries here.
            connection = self._thread_connection()
            try:
                yield connection
            except sqlite3.DatabaseError as error:
                raise StorageError(f"database {self.path}: {error}") from None
        finally:
            with self._state:
                self._in_use -= 1
                self._state.notify_all()

    def check_written(self) -> None:
        if self._identity() != self._file:
            raise StorageError(
                f"the database file {self.path} was removed or replaced while it was written: "
                "the write is not kept"
            )

    def _identity(self) -> tuple[int, int] | None:
        try:
            status = os.stat(self.path)
        except OSError:
            return None
        return status.st_dev, status.st_ino

    def _thread_connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None and self._local.generation == self._generation:
            return connection
        if connection is not None:
            with contextlib.suppress(sqlite3.Error):
                connection.close()
        first = self._file is None
        try:
            # After the first, a connection must find the file: never create an empty one.
            # Each connection is used by its own thread only; close() (another thread)
            # closes them all, hence check_same_thread=False.
            connection = sqlite3.connect(
                f"{self.path.absolute().as_uri()}?mode={'rwc' if first else 'rw'}",
                uri=True,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as error:
            raise StorageError(f"cannot open the database {self.path}: {error}") from None
        with self._state:
            if first:
                self._file = self._identity()
            self._all.append(connection)
            self._local.connection = connection
            self._local.generation = self._generation
        return connection

    def _reopen(self) -> None:
        """The path names another file than the connections are open on, or none: close them
        all (once none is in use) and open the file the path names, if it is a service
        database of this version. Called holding self._state."""
        found = self._identity()
        if found is None:
            raise StorageError(
                f"the database file {self.path} is missing (its folder removed?): nothing is "
                "read or written until it is back"
            )
        self._changing = True
        try:
            while self._in_use:
                self._state.wait()
            connections, self._all = self._all, []
            if connections:
                # The old file's WAL, emptied into it: the WAL file at the path may be that
                # one, and a connection to the new file would read its pages as its own.
                with contextlib.suppress(sqlite3.Error):
                    connections[0].execute("PRAGMA wal_checkpoint(TRUNCATE)")
            for old in connections:
                with contextlib.suppress(sqlite3.Error):
                    old.close()
            self._generation += 1
            _check_service_database(self.path)
            self._file = found
            _LOG.warning("the database file %s was replaced: now using the new one", self.path)
        finally:
            self._changing = False
            self._state.notify_all()

    def close(self) -> None:
        with self._state:
            connections, self._all = self._all, []
        for connection in connections:
            connection.close()
        self._local = threading.local()


def _check_service_database(path: Path) -> None:
    """The file at `path` is a service database with every migration of this version;
    StorageError if not (a garbage file, an empty one, another version's)."""
    try:
        with contextlib.closing(
            sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=1.0)
        ) as probe:
            names = {row[0] for row in probe.execute("SELECT name FROM schema_migrations")}
    except sqlite3.Error as error:
        raise StorageError(
            f"the database file {path} was replaced by one that is not a service database "
            f"({error}): nothing is read or written until a service database is back"
        ) from None
    if names != {name for name, _ in MIGRATIONS}:
        raise StorageError(
            f"the database file {path} was replaced by a service database of another "
            "version: restart the service to use it"
        )


class _PostgresProvider:
    dialect = POSTGRES

    def __init__(self, url: str, pool_size: int) -> None:
        try:
            import psycopg
            import psycopg_pool
        except ImportError:
            raise StorageError(
                f"a postgresql:// database needs psycopg (the server extra): {add_extra('server')}"
            ) from None
        self._errors: tuple[type[BaseException], ...] = (
            psycopg.OperationalError,
            psycopg_pool.PoolTimeout,
        )
        self._url = url
        self._shown = shown(url)
        try:  # a malformed one is refused here, not quoted by libpq in a log line
            psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.Error:
            raise StorageError(
                "the --database value is not a valid PostgreSQL URL or key=value connection "
                "string (not shown: it may hold a password)"
            ) from None
        _PoolLogRedaction.install(url)
        try:  # one attempt first: an unreachable server is named at once, with libpq's reason
            psycopg.connect(url, connect_timeout=int(BUSY_TIMEOUT_S)).close()
        except psycopg.Error as error:
            reason = " ".join(str(error).split())  # libpq's lines: the reason and a hint
            raise StorageError(
                redacted(f"cannot connect to the database {self._shown}: {reason}", url)
            ) from None
        self._pool = psycopg_pool.ConnectionPool(
            url,
            # Reads are single statements: no transaction around them (Storage._transaction);
            # writes open one with connection.transaction().
            kwargs={"autocommit": True},
            min_size=1,
            max_size=pool_size,
            open=False,
            # A request waits this long for a connection, then gets 503 (with Retry-After):
            # while PostgreSQL cannot be reached, no connection comes.
            timeout=POOL_WAIT_S,
            # A connection is checked before it is handed out: after the server restarted,
            # pooled connections are dead, and an upload on one would fail.
            check=psycopg_pool.ConnectionPool.check_connection,
        )
        try:
            self._pool.open(wait=True, timeout=BUSY_TIMEOUT_S)
        except psycopg_pool.PoolTimeout:
            self._pool.close()
            raise StorageError(
                f"cannot connect to the database {self._shown} within {BUSY_TIMEOUT_S:g} s"
            ) from None

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        try:
            with self._pool.connection() as connection:
                yield connection
        except self._errors as error:
            raise StorageError(redacted(f"database {self._shown}: {error}", self._url)) from None

    def check_written(self) -> None:
        return None  # the server's commit is the acknowledgement

    def close(self) -> None:
        self._pool.close()


class _PoolLogRedaction(logging.Filter):
    """psycopg_pool logs why a connection attempt failed (a warning, printed on stderr by
    logging's last resort): such a line passes through `redacted` first."""

    databases: ClassVar[set[str]] = set()

    @classmethod
    def install(cls, url: str) -> None:
        cls.databases.add(url)
        for logger in map(logging.getLogger, ("psycopg", "psycopg.pool")):
            if not any(isinstance(f, cls) for f in logger.filters):
                logger.addFilter(cls())

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        for url in self.databases:
            text = redacted(text, url)
        record.msg, record.args = redacted(text), None
        return True


def default_database(environ: Mapping[str, str]) -> str:
    if environ.get(DATABASE_ENV):
        return environ[DATABASE_ENV]
    return str(data_home(environ) / "flashmark" / "server.sqlite3")


def storage_for(database: str | None) -> tuple[str, bool]:
    """The database to open (`database`, else the default), and whether its folder may be
    created (the default's only)."""
    if database:
        return database, False
    return default_database(os.environ), True


def open_storage(database: str, *, pool_size: int = 10, create_folder: bool = False) -> Storage:
    """`postgresql://…` (or `postgres://…`, or a key=value connection string),
    `sqlite:///PATH`, or a file path; migrated."""
    if is_postgres(database):
        storage = Storage(_PostgresProvider(database, pool_size))
    else:
        path = Path(database.removeprefix("sqlite://")).expanduser()
        if create_folder:
            path.parent.mkdir(parents=True, exist_ok=True)
        if not path.parent.is_dir():
            raise StorageError(
                f"the folder of the database {path} does not exist: create it or choose "
                "another --database"
            )
        storage = Storage(_SqliteProvider(path))
    try:
        storage.migrate()
    except BaseException:
        storage.close()
        raise
    return storage
