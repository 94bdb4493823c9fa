"""The history database: migrations, saving, listing, refusing what it cannot read."""

import sqlite3

import pytest

from flashmark.errors import HistoryError, RunNotFound
from flashmark.history.store import MIGRATIONS, History, default_db_path


def test_saved_documents_get_their_id_and_list_newest_first(tmp_path):
    history = History(tmp_path / "sub" / "h.sqlite3", create_folder=True)
    first = history.save(
        kind="benchmark",
        target="/mnt/a",
        label="quick",
        document={"schema": "x/1", "finished_at": "2026-01-01T00:00:00+00:00"},
    )
    second = history.save(kind="monitor", target="/dev/sda", label="apt", document={"a": 1})
    assert (first, second) == (1, 2)
    assert history.get(1).document["id"] == 1
    assert [e.id for e in history.list()] == [2, 1]
    assert [e.id for e in history.list(kind="benchmark")] == [1]
    assert history.get(1).created_at == "2026-01-01T00:00:00+00:00"


def test_unknown_id_says_how_to_list(tmp_path):
    with pytest.raises(RunNotFound, match="flashmark history"):
        History(tmp_path / "h.sqlite3").get(7)


def test_migrations_run_once_and_are_recorded(tmp_path):
    path = tmp_path / "h.sqlite3"
    History(path).check_writable()
    History(path).save(kind="monitor", target="sda", label="x", document={})
    names = [row[0] for row in sqlite3.connect(path).execute("SELECT name FROM schema_migrations")]
    assert names == [name for name, _ in MIGRATIONS]


def test_a_database_from_a_newer_flashmark_is_refused(tmp_path):
    path = tmp_path / "h.sqlite3"
    History(path).check_writable()
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO schema_migrations VALUES ('9999_future', 'x')")
    with pytest.raises(HistoryError, match="newer flashmark"):
        History(path).list()


def test_default_location_follows_env_then_xdg():
    assert str(default_db_path({"FLASHMARK_DB": "/x/h.db"})) == "/x/h.db"
    assert str(default_db_path({"XDG_DATA_HOME": "/d"})) == "/d/flashmark/history.sqlite3"


def test_a_history_from_before_absolute_targets_lists_them_absolutely(tmp_path):
    path = tmp_path / "h.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.executescript(MIGRATIONS[0][1])
        connection.execute(
            "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
        )
        connection.execute("INSERT INTO schema_migrations VALUES ('0001_results', 'x')")
        for target, document in (
            (".", '{"target": {"given": ".", "folder": "/media/card", "path": "/media/card/t"}}'),
            ("sda", '{"target": {"given": "sda", "folder": null, "path": "/dev/sda"}}'),
        ):
            connection.execute(
                "INSERT INTO results (kind, created_at, target, label, schema, document) "
                "VALUES ('benchmark', 'x', ?, 'quick', 'flashmark.result/1', ?)",
                (target, document),
            )
        connection.execute(
            "INSERT INTO results (kind, created_at, target, label, schema, document) "
            "VALUES ('monitor', 'x', 'mmcblk0', 'live', 'flashmark.monitor/1', '{}')"
        )
    connection.close()
    History(path).check_writable()  # a writer migrates
    assert sorted(entry.target for entry in History(path).list()) == [
        "/dev/sda",
        "/media/card",
        "mmcblk0",
    ]
