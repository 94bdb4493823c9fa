"""A history holding documents saved before every key of schema 1 was required: `flashmark
history` lists each one this version cannot read in one line and reads the others once;
commands that read a whole document refuse an unreadable one with an error, never a crash."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from flashmark.errors import ExitStatus
from flashmark.history.store import MIGRATIONS, History
from tests.cli_runner import flashmark
from tests.conftest import DATA


def _earlier_history(path: Path, documents: list[dict[str, Any]], until: str = "0004") -> None:
    """A history as an earlier flashmark left it: migrations before `until`, the documents as
    they were saved then."""
    before = [(name, sql) for name, sql in MIGRATIONS if name < until]
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
        )
        for name, sql in before:
            connection.executescript(sql)
            connection.execute("INSERT INTO schema_migrations VALUES (?, 'x')", (name,))
        for document in documents:
            connection.execute(
                "INSERT INTO results (kind, created_at, target, label, schema, document) "
                "VALUES ('benchmark', ?, '/media/card', 'quick', 'flashmark.result/1', ?)",
                (document["started_at"], json.dumps(document)),
            )
    connection.close()


def test_history_names_each_unreadable_earlier_document_once_per_line(tmp_path):
    readable = json.loads((DATA / "report" / "quick-a1-card.json").read_text())
    earlier = json.loads((DATA / "report" / "quick-a1-card.json").read_text())
    del earlier["tests"][0]["discarded_s"]  # a key an earlier flashmark did not write
    path = tmp_path / "h.sqlite3"
    _earlier_history(path, [readable, earlier])

    listed = flashmark("history", "--db", path)

    assert listed.returncode == 0, listed.stderr
    lines = [line for line in listed.stdout.splitlines() if "cannot read" in line]
    assert lines == [
        "2: saved by an earlier flashmark, this one cannot read it (at /tests/0/discarded_s): "
        "result document is malformed (KeyError: 'discarded_s')"
    ]
    assert "│  1 │" in listed.stdout and "│  2 │" in listed.stdout  # both still listed
    # The one that read is not read again; the other is named again.
    assert [entry.unchecked for entry in History(path).list()] == [True, False]
    assert flashmark("history", "--db", path).stdout.count("cannot read") == 1

    as_json = flashmark("history", "--json", "--db", path)
    assert [entry["id"] for entry in json.loads(as_json.stdout)] == [2, 1]
    assert as_json.stderr.strip() == lines[0]

    shown = flashmark("show", "2", "--db", path)
    assert shown.returncode == ExitStatus.FAILURE
    assert (
        shown.stderr == "flashmark: error: result document is malformed (KeyError: 'discarded_s')\n"
    )
    assert flashmark("show", "1", "--db", path).returncode == 0


def test_history_names_an_earlier_document_holding_a_value_of_another_type(tmp_path):
    readable = json.loads((DATA / "report" / "quick-a1-card.json").read_text())
    earlier = json.loads((DATA / "report" / "quick-a1-card.json").read_text())
    earlier["tests"][0]["elapsed_s"] = float("nan")  # json.dumps writes NaN, json.loads reads it
    path = tmp_path / "h.sqlite3"
    _earlier_history(path, [readable, earlier], until="0005")

    listed = flashmark("history", "--db", path).stdout
    lines = [line for line in listed.splitlines() if "cannot read" in line]
    assert lines == [
        "2: saved by an earlier flashmark, this one cannot read it (at /tests/0/elapsed_s): "
        "result document is malformed (WrongType: must be a number within ±1e+18, not NaN)"
    ]
    assert [entry.unchecked for entry in History(path).list()] == [True, False]


def test_documents_saved_now_are_never_read_by_history(tmp_path):
    path = tmp_path / "h.sqlite3"
    document = json.loads((DATA / "report" / "quick-a1-card.json").read_text())
    History(path).save(kind="benchmark", target="/media/card", label="quick", document=document)
    assert [entry.unchecked for entry in History(path).list()] == [False]
    assert "cannot read" not in flashmark("history", "--db", path).stdout
