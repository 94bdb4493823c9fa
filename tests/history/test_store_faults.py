"""The history library against real broken SQLite files: every fault is its own HistoryError
kind, found by the check a command makes before it measures; readers never create anything."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

import flashmark.history.recovery
from flashmark.errors import (
    HistoryError,
    HistoryFolderMissing,
    HistoryLocked,
    HistoryNotADatabase,
    HistoryReadOnly,
    HistoryTooNew,
    RunNotFound,
    UsageError,
)
from flashmark.history.recovery import RecoveryFileError, keep_unsaved
from flashmark.history.store import BUSY_TIMEOUT_S, History
from flashmark.kinds.files import read_document_files
from tests.conftest import DATA
from tests.history.faults import FAULTS, Fault, broken_history, fault_ids, make_history, tree

KINDS = {
    "garbage": HistoryNotADatabase,
    "locked": HistoryLocked,
    "read-only-file": HistoryReadOnly,
    "read-only-folder": HistoryReadOnly,
    "newer-schema": HistoryTooNew,
    "missing-folder": HistoryFolderMissing,
}


@pytest.mark.parametrize("fault", FAULTS, ids=fault_ids())
def test_the_check_before_measuring_names_each_fault(fault: Fault, tmp_path: Path) -> None:
    with broken_history(fault, tmp_path) as path:
        before = tree(tmp_path)
        started = time.monotonic()
        with pytest.raises(KINDS[fault.name], match=fault.message) as caught:
            History(path).check_writable()
        assert time.monotonic() - started < BUSY_TIMEOUT_S + 5  # a lock is not waited out
        assert str(path) in str(caught.value) and "\n" not in str(caught.value)
        assert tree(tmp_path) == before  # no folder made, no journal left


@pytest.mark.parametrize("fault", FAULTS, ids=fault_ids())
def test_a_save_meets_the_same_faults(fault: Fault, tmp_path: Path) -> None:
    with broken_history(fault, tmp_path) as path, pytest.raises(KINDS[fault.name]):
        History(path).save(kind="benchmark", target="/mnt", label="quick", document={"a": 1})


@pytest.mark.parametrize("fault", FAULTS, ids=fault_ids())
def test_readers_read_what_they_can_and_create_nothing(fault: Fault, tmp_path: Path) -> None:
    with broken_history(fault, tmp_path) as path:
        before = tree(tmp_path)
        history = History(path)
        if fault.readable:
            assert history.list() == []
            with pytest.raises(RunNotFound):
                history.get(1)
        else:
            with pytest.raises(KINDS[fault.name]):
                history.list()
        assert tree(tmp_path) == before


def test_another_programs_database_is_not_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "photos.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE photos (name TEXT)")
    connection.close()
    with pytest.raises(HistoryNotADatabase, match=r"not a flashmark history .*photos"):
        History(path).check_writable()
    with pytest.raises(HistoryNotADatabase):
        History(path).list()
    with sqlite3.connect(path) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master")]
    connection.close()
    assert tables == ["photos"]


def test_a_folder_given_as_the_history_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="is a folder"):
        History(tmp_path).check_writable()


def test_only_the_default_location_gets_its_folder_created(tmp_path: Path) -> None:
    explicit = History.locate(tmp_path / "a" / "h.sqlite3", environ={})
    with pytest.raises(HistoryFolderMissing, match=r"mkdir -p .*/a"):
        explicit.check_writable()
    from_env = History.locate(None, environ={"FLASHMARK_DB": str(tmp_path / "b" / "h.db")})
    with pytest.raises(HistoryFolderMissing):
        from_env.check_writable()
    default = History.locate(None, environ={"XDG_DATA_HOME": str(tmp_path / "data")})
    default.check_writable()
    assert tree(tmp_path) == ["data", "data/flashmark", "data/flashmark/history.sqlite3"]


def test_the_write_check_leaves_no_trace(tmp_path: Path) -> None:
    path = make_history(tmp_path / "h.sqlite3")
    History(path).check_writable()
    with sqlite3.connect(path) as connection:
        names = [row[0] for row in connection.execute("SELECT name FROM schema_migrations")]
    connection.close()
    assert "flashmark-write-check" not in names
    assert History(path).list() == []


def test_an_empty_file_reads_as_an_empty_history_and_becomes_one_on_save(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    path.touch()
    assert History(path).list() == []
    assert History(path).save(kind="monitor", target="sda", label="x", document={}) == 1


def test_the_same_document_is_added_once(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    document = {"schema": "x/1", "finished_at": "2026-01-01T00:00:00+00:00", "id": None, "v": 1}
    first = history.add_unless_present(
        kind="benchmark", target="/mnt", label="quick", document=document
    )
    again = history.add_unless_present(
        kind="benchmark", target="/mnt", label="quick", document={**document, "id": 99}
    )
    other = history.add_unless_present(
        kind="benchmark", target="/mnt", label="quick", document={**document, "v": 2}
    )
    assert (first.id, first.added) == (1, True)
    assert (again.id, again.added) == (1, False)
    assert (other.id, other.added) == (2, True)


def test_recovery_files_try_the_state_folder_var_tmp_tmpdir_tmp_and_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = {"schema": "flashmark.monitor/1", "v": 1}
    state = tmp_path / "state"
    kept = keep_unsaved(document, "monitor", environ={"XDG_STATE_HOME": str(state)})
    assert kept.parent == state / "flashmark" / "unsaved"
    assert json.loads(kept.read_text()) == document

    blocked = tmp_path / "a-file"
    blocked.write_text("")  # the state folder cannot be made under a file
    var_tmp, tmpdir, tmp, here = (tmp_path / name for name in ("var-tmp", "tmpdir", "tmp", "cwd"))
    monkeypatch.setattr(flashmark.history.recovery, "SHARED_FOLDERS", (var_tmp, tmp))
    environ = {"XDG_STATE_HOME": str(blocked), "TMPDIR": str(tmpdir)}
    for folder in (var_tmp, tmpdir, tmp, here):  # each is taken once those before it are gone
        folder.mkdir()
        monkeypatch.chdir(here if folder == here else tmp_path)
        kept = keep_unsaved(document, "monitor", environ=environ)
        assert kept.parent == folder and kept.name.startswith("flashmark-unsaved-monitor-")
        assert json.loads(kept.read_text()) == document
        kept.unlink()
        monkeypatch.chdir(tmp_path)
        folder.rmdir()

    gone = tmp_path / "gone"  # a current folder that was removed: no place is left
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(RecoveryFileError, match=r"a-file.*var-tmp.*tmpdir.*tmp"):
        keep_unsaved(document, "monitor", environ=environ)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "is not JSON"),
        ("[1, 2]", r"item 1 of 2\) is a JSON int, not a result document"),
        ("[]", "holds an empty list"),
        ("3", "holds a JSON int, not a result document or a list of them"),
        ('{"schema": "something/1"}', "not a flashmark result document"),
        ('{"schema": "flashmark.result/2"}', "newer than this flashmark reads"),
        ('{"schema": "flashmark.result/1"}', "malformed"),
        ('{"schema": "flashmark.monitor/1", "device": "sda"}', "malformed"),
    ],
)
def test_only_known_documents_are_imported(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "doc.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        read_document_files(path)


@pytest.mark.parametrize(
    "name", ["a?mode=ro.db", "b#frag.db", "c%20d.db", "with space.db", "new\nline.db", "ü.db"]
)
def test_database_names_are_names_never_uri_syntax(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    history = History(path)
    assert history.list() == [] and tree(tmp_path) == []
    history.check_writable()
    assert history.save(kind="monitor", target="sda", label="x", document={}) == 1
    assert [entry.id for entry in History(path).list()] == [1]
    assert tree(tmp_path) == [name]


def test_a_run_in_a_folder_named_with_control_characters_imports(tmp_path: Path) -> None:
    """A folder's name may hold any character but NUL; its run's document must import (the
    recovery file of such a run is how it reaches the history), while the results service,
    open to anyone, refuses control characters (tests/server/hostile)."""
    from flashmark.server.intake import UploadRejected, accept

    document = json.loads((DATA / "report" / "quick-a1-card.json").read_text())
    folder = "/media/card\x1b[31m\nred\u202e"
    document["target"]["given"] = document["target"]["folder"] = folder
    path = tmp_path / "result.json"
    path.write_text(json.dumps(document))
    (entry,) = read_document_files(path)
    assert entry.target == folder and entry.document["target"]["given"] == folder
    with pytest.raises(UploadRejected):
        accept(document)
