"""The card passport carried in run results and reports, and kept in the history: the result
document round-trips it, the history indexes every result by its card's CID (migration
0003_card_cid, backfilled), `history --card CID` lists that card's results, and a card
measured twice is recognised the second time."""

from __future__ import annotations

import copy
import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from flashmark.bench.document import document_to_run, run_to_document
from flashmark.bench.model import Passport, PassportPoint
from flashmark.bench.render.view import WRITERS
from flashmark.history.store import MIGRATIONS, History
from flashmark.report.html import render_html_report
from tests.capacity.test_passport import KINGSTON_CID, capacity_document
from tests.cli_runner import Done
from tests.cli_runner import flashmark as run_flashmark
from tests.conftest import DATA, FIO_RECORDINGS
from tests.probe.recorded import recorded_machine

QUICK_DOCUMENT = DATA / "report" / "quick-a1-card.json"  # probed under rpi5_a2: Kingston's CID
RPI5_A2 = recorded_machine("rpi5_a2")
OTHER_CID = "035344534333324780a1b2c3d4012345"

PASSPORT = Passport(
    device="mmcblk0",
    cid=KINGSTON_CID,
    verdict="suspicious",
    points=(
        PassportPoint("identity", "ok", "maker Kingston", "MID 0x9f OID 0x5449 ('TI')", "t1"),
        PassportPoint("identity", "suspicious", "manufactured in the future", "MDT 2099-01", ""),
    ),
    seen_before=(3, 7),
)


def flashmark(*args: str, db: Path, env: dict[str, str] | None = None) -> Done:
    return run_flashmark(*args, env={**(env or {}), "FLASHMARK_DB": str(db)})


def quick_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(QUICK_DOCUMENT.read_text())
    return document


def benchmark_document(cid: str | None) -> dict[str, Any]:
    """The recorded quick run, its probed card given `cid` (None: a device without a card)."""
    document = copy.deepcopy(quick_document())
    document.pop("id", None)
    device = document["probe"]["devices"][0]
    if cid is None:
        device["card"] = None
    else:
        device["card"]["cid"]["raw"] = cid
    return document


# -- the result document ------------------------------------------------------------------------


def test_the_result_document_round_trips_the_passport():
    run = document_to_run(quick_document())
    with_passport = dataclasses.replace(run, passport=PASSPORT)
    document = run_to_document(with_passport)
    assert document["passport"] == {
        "device": "mmcblk0",
        "cid": KINGSTON_CID,
        "verdict": "suspicious",
        "points": [
            {"topic": "identity", "status": "ok", "text": "maker Kingston",
             "evidence": "MID 0x9f OID 0x5449 ('TI')", "source": "t1"},
            {"topic": "identity", "status": "suspicious", "text": "manufactured in the future",
             "evidence": "MDT 2099-01", "source": ""},
        ],
        "seen_before": [3, 7],
    }  # fmt: skip
    back = document_to_run(json.loads(json.dumps(document)))
    assert back.passport == PASSPORT
    assert run_to_document(back) == document


def test_terminal_and_html_reports_show_the_verdict_and_points_with_evidence():
    run = document_to_run(quick_document())
    with_passport = dataclasses.replace(run, passport=PASSPORT)
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(WRITERS.terminal(with_passport))
    text = console.export_text()
    assert f"Card passport (mmcblk0, CID {KINGSTON_CID})" in text
    assert "manufactured in the future  [MDT 2099-01]" in text
    assert "identity suspicious" in text and "results 3, 7" in text
    html = render_html_report([with_passport])
    assert f"Card passport (mmcblk0, CID {KINGSTON_CID})" in html
    assert '<span class="badge fail">suspicious</span>' in html
    assert "evidence: MDT 2099-01" in html and "source: t1" in html
    assert "Card passport" not in render_html_report([run])  # none carried, none shown


# -- the history's CID index ----------------------------------------------------------------------


def history_at_0002(path: Path) -> None:
    """A history as the previous flashmark left it: migrations 0001 and 0002 only."""
    names = [name for name, _ in MIGRATIONS]
    assert names.index("0003_card_cid") == 2
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
        )
        for name, sql in MIGRATIONS[:2]:
            for statement in filter(str.strip, sql.split(";")):
                connection.execute(statement)
            connection.execute("INSERT INTO schema_migrations VALUES (?, 'then')", (name,))


def insert_old(path: Path, kind: str, document: dict[str, Any]) -> int:
    with sqlite3.connect(path) as connection:
        cursor = connection.execute(
            "INSERT INTO results (kind, created_at, target, label, schema, document) "
            "VALUES (?, '2026-01-01T00:00:00+00:00', '/t', 'l', ?, ?)",
            (kind, document["schema"], json.dumps(document)),
        )
        return int(cursor.lastrowid or 0)


def test_the_migration_backfills_the_cid_of_an_existing_history(tmp_path):
    db = tmp_path / "old.sqlite3"
    history_at_0002(db)
    upper = KINGSTON_CID.upper()  # stored as the kernel printed it; indexed lower-case
    kingston_run = insert_old(db, "benchmark", benchmark_document(upper))
    other_run = insert_old(db, "benchmark", benchmark_document(OTHER_CID))
    no_card = insert_old(db, "benchmark", benchmark_document(None))
    kingston_probe = insert_old(db, "capacity", capacity_document(KINGSTON_CID, "genuine", 1))
    monitor = insert_old(db, "monitor", {"schema": "flashmark.monitor/1", "device": "sda"})

    history = History(db)
    found = history.of_card(KINGSTON_CID)  # reading applies the pending migration
    assert [entry.id for entry in found] == [kingston_run, kingston_probe]
    assert [entry.id for entry in history.of_card(OTHER_CID)] == [other_run]
    with sqlite3.connect(db) as connection:
        column = dict(connection.execute("SELECT id, card_cid FROM results").fetchall())
        indexes = {row[1] for row in connection.execute("PRAGMA index_list(results)")}
        applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
    assert column == {
        kingston_run: KINGSTON_CID,
        other_run: OTHER_CID,
        no_card: None,
        kingston_probe: KINGSTON_CID,
        monitor: None,
    }
    assert "results_card_cid" in indexes and "0003_card_cid" in applied
    plan = sqlite3.connect(db).execute(
        "EXPLAIN QUERY PLAN SELECT * FROM results WHERE card_cid = ?", (KINGSTON_CID,)
    )
    assert "results_card_cid" in " ".join(str(row[-1]) for row in plan)  # no scan


def test_new_results_are_indexed_as_they_are_saved(private_history):
    history = History.locate(private_history)
    first = history.save(kind="benchmark", target="/a", label="quick",
                         document=benchmark_document(KINGSTON_CID))  # fmt: skip
    history.save(kind="benchmark", target="/b", label="quick", document=benchmark_document(None))
    third = history.save(kind="capacity", target="/dev/mmcblk0", label="fake",
                         document=capacity_document(KINGSTON_CID, "fake", 2**30))  # fmt: skip
    assert [entry.id for entry in history.of_card(KINGSTON_CID.upper())] == [first, third]
    assert history.of_card(OTHER_CID) == []


# -- flashmark history --card ---------------------------------------------------------------------


def test_history_card_lists_the_results_of_that_card_and_only_them(private_history):
    history = History.locate(private_history)
    ids = {
        name: history.save(kind=kind, target=target, label="x", document=document)
        for name, kind, target, document in (
            ("run", "benchmark", "/media/card", benchmark_document(KINGSTON_CID)),
            ("other", "benchmark", "/media/other", benchmark_document(OTHER_CID)),
            ("nocard", "benchmark", "/home", benchmark_document(None)),
            ("probe", "capacity", "/dev/mmcblk0",
             capacity_document(KINGSTON_CID, "genuine", 62277025792)),
        )
    }  # fmt: skip
    db = private_history
    done = flashmark("history", "--card", f"0x{KINGSTON_CID.upper()}", "--json", db=db)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [entry["id"] for entry in listed] == [ids["probe"], ids["run"]]  # newest first
    assert [entry["kind"] for entry in listed] == ["capacity", "benchmark"]
    table = flashmark("history", "--card", OTHER_CID, db=db)
    assert table.returncode == 0 and "/media/other" in table.stdout
    assert "/media/card" not in table.stdout and "/home" not in table.stdout
    none = flashmark("history", "--card", "00" * 16, db=db)
    assert none.returncode == 0 and "No saved results of the card" in none.stdout


@pytest.mark.parametrize("bad", ["zz", KINGSTON_CID[:-1], KINGSTON_CID + "0", "", "g" * 32])
def test_history_card_refuses_what_is_not_a_cid_in_one_line(bad, private_history):
    done = flashmark("history", "--card", bad, db=private_history)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "is not a card CID" in done.stderr


# -- the same card measured twice -----------------------------------------------------------------


def test_run_carries_the_passport_and_recognises_the_card_the_second_time(
    tmp_path, private_history
):
    db = private_history
    env = {**RPI5_A2, "FLASHMARK_FIO_REPLAY": str(FIO_RECORDINGS / "quick-a1-card")}
    folder = tmp_path / "card"
    folder.mkdir()
    first = flashmark(
        "run", str(folder), "--json", "--size", "128M", "--runtime", "8", db=db, env=env
    )
    assert first.returncode == 0, first.stderr
    passport = json.loads(first.stdout)["passport"]
    assert (passport["device"], passport["cid"]) == ("mmcblk0", KINGSTON_CID)
    assert passport["seen_before"] == []
    assert passport["verdict"] in ("no sign of a fake", "suspicious", "fake", "unknown")
    assert any(point["topic"] == "identity" and point["evidence"] for point in passport["points"])
    first_id = json.loads(first.stdout)["id"]

    second = flashmark("run", str(folder), "--size", "128M", "--runtime", "8", db=db, env=env)
    assert second.returncode == 0, second.stderr
    assert "Card passport (mmcblk0" in second.stdout
    assert f"results {first_id} (" in second.stdout
    (latest,) = History.locate(db).list(limit=1)
    stored = latest.document["passport"]
    assert stored["seen_before"] == [first_id] and stored["cid"] == KINGSTON_CID
    # The first run's claims vs measured now show in the passport's classes.
    assert any(point["topic"] == "classes" for point in stored["points"])
    listed = json.loads(flashmark("history", "--card", KINGSTON_CID, "--json", db=db).stdout)
    assert [entry["id"] for entry in listed] == [latest.id, first_id]
    probe = json.loads(flashmark("probe", "/", "--json", db=db, env=RPI5_A2).stdout)
    assert probe["passports"][0]["seen_before"] == [first_id, latest.id]
