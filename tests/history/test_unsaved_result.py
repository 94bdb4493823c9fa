"""A history that breaks while a run measures: the result is printed, kept in a recovery file,
and `flashmark import` brings it back, once.

The replay runner blocks on the last test's recording, a named pipe, until the test has broken
the history (the check before measuring has passed by then): the database changes between the
check and the save, as when another program replaces or locks it mid-run.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from flashmark.history.store import BUSY_TIMEOUT_S
from tests.cli_runner import flashmark, started
from tests.conftest import DATA
from tests.history.faults import read_only
from tests.history.test_cli_faults import DISKSTATS

LAST_TEST = "rand-write-4k-q32"


def open_when_read(fifo: Path, process: subprocess.Popen[str], timeout_s: float = 60) -> int:
    """Open the pipe for writing once the process opens it for reading."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        else:
            os.set_blocking(descriptor, True)
            return descriptor
        if process.poll() is not None:
            pytest.fail(f"flashmark ended before the last test: {process.communicate()[1]}")
        time.sleep(0.05)
    pytest.fail("flashmark never reached the last test")


def run_breaking_the_history(
    tmp_path: Path,
    recordings: Path,
    args: list[str],
    breaking: Callable[[Path], None],
    meanwhile: Callable[[subprocess.Popen[str]], None] | None = None,
) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, str]]:
    replay = tmp_path / "replay"
    shutil.copytree(recordings / "quick-a1-card", replay)
    last = replay / f"{LAST_TEST}.json"
    recorded = last.read_text()
    last.unlink()
    os.mkfifo(last)
    card = tmp_path / "card"
    card.mkdir()
    db = tmp_path / "history.sqlite3"
    env = {
        "FLASHMARK_FIO_REPLAY": str(replay),
        "FLASHMARK_DB": str(db),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    # --runtime 8: the recorded run's lengths (tests/data/fio/quick-a1-card/scenario.txt)
    with started("run", card, "--runtime", "8", *args, env={**os.environ, **env}) as process:
        descriptor = open_when_read(last, process)
        assert db.exists()  # checked (and created) before the first test
        breaking(db)
        with os.fdopen(descriptor, "w") as pipe:
            pipe.write(recorded)
        if meanwhile is not None:
            meanwhile(process)
        stdout, stderr = process.communicate(timeout=60)
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    return done, card, env


def recovery_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "state" / "flashmark" / "unsaved").glob("*.json"))


def garbage(db: Path) -> None:
    db.write_bytes(b"overwritten by something else\n" * 100)


def test_a_result_the_history_cannot_take_is_kept_and_imported_once(
    tmp_path: Path, recordings: Path
) -> None:
    done, card, env = run_breaking_the_history(tmp_path, recordings, ["--json"], garbage)

    assert done.returncode == ExitStatus.UNSAVED, done.stderr
    document = json.loads(done.stdout)  # the whole result, on stdout as always
    assert document["schema"] == "flashmark.result/1" and "id" not in document
    assert len(document["tests"]) == 6
    assert list(card.iterdir()) == []
    last_line = done.stderr.splitlines()[-1]
    assert last_line.startswith("flashmark: error: the result was measured but not saved")
    assert "not a usable SQLite database" in last_line and "Traceback" not in done.stderr
    (kept,) = recovery_files(tmp_path)
    assert f"It is kept in {kept}" in last_line
    assert f"`flashmark import --db {tmp_path / 'history.sqlite3'} {kept}`" in last_line
    assert json.loads(kept.read_text()) == document

    Path(env["FLASHMARK_DB"]).unlink()  # the user moves the broken file away
    imported = flashmark("import", str(kept), env=env)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout == f"{kept}: added as 1 (`flashmark show 1`)\n"
    shown = json.loads(flashmark("show", "1", "--json", env=env).stdout)
    assert shown == {**document, "id": 1}

    again = flashmark("import", str(kept), env=env)
    assert again.returncode == 0, again.stderr
    assert "already in the history as 1; not added again" in again.stdout
    listed = json.loads(flashmark("history", "--json", env=env).stdout)
    assert [(entry["id"], entry["kind"], entry["label"]) for entry in listed] == [
        (1, "benchmark", "quick")
    ]
    assert listed[0]["target"] == str(card)


def test_the_table_view_also_keeps_the_result(tmp_path: Path, recordings: Path) -> None:
    def unwritable(db: Path) -> None:
        # Held read-only until the run is over: the `with` below ends after communicate().
        stack.enter_context(read_only(db))

    with ExitStack() as stack:
        done, _, _ = run_breaking_the_history(tmp_path, recordings, [], unwritable)
    assert done.returncode == ExitStatus.UNSAVED, done.stderr
    assert "Grades" in done.stdout
    assert "cannot be written" in done.stderr.splitlines()[-1]
    (kept,) = recovery_files(tmp_path)
    assert json.loads(kept.read_text())["schema"] == "flashmark.result/1"


def test_a_run_output_from_elsewhere_is_imported_under_its_own_kind(
    tmp_path: Path, recordings: Path
) -> None:
    env = {
        "FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card"),
        "FLASHMARK_DB": str(tmp_path / "board.sqlite3"),
    }
    measured = flashmark("run", str(tmp_path), "--json", "--runtime", "8", env=env)
    assert measured.returncode == 0, measured.stderr
    saved = tmp_path / "result.json"
    saved.write_text(measured.stdout)  # id 1 in the board's history
    here = {"FLASHMARK_DB": str(tmp_path / "lab.sqlite3")}
    flashmark("import", str(saved), env=here)
    first = flashmark("import", str(saved), env=here)
    assert "already in the history as 1" in first.stdout
    shown = json.loads(flashmark("show", "1", "--json", env=here).stdout)
    assert shown == json.loads(measured.stdout)


def test_a_file_that_is_no_result_is_refused_before_anything_is_added(tmp_path: Path) -> None:
    good = tmp_path / "monitor.json"  # `monitor mmcblk0 --json -- true`, recorded
    good.write_text((DATA / "report" / "monitor-true.json").read_text())
    bad = tmp_path / "notes.json"
    bad.write_text('{"schema": "flashmark.result/9"}')
    env = {"FLASHMARK_DB": str(tmp_path / "h.sqlite3")}
    done = flashmark("import", str(good), str(bad), env=env)
    assert done.returncode == ExitStatus.USAGE
    assert done.stderr.count("\n") == 1 and "notes.json" in done.stderr
    assert "newer than this flashmark reads" in done.stderr
    assert not (tmp_path / "h.sqlite3").exists()
    done = flashmark("import", str(good), env=env)
    assert done.returncode == 0 and "added as 1" in done.stdout
    listed = json.loads(flashmark("history", "--json", env=env).stdout)
    assert [(e["kind"], e["target"], e["label"]) for e in listed] == [
        ("monitor", "mmcblk0", "true")
    ]


def test_a_monitored_command_that_breaks_the_history_keeps_its_recording(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "diskstats").write_text((DISKSTATS / "kernel-4.19-18-fields.t0").read_text())
    db = tmp_path / "history.sqlite3"
    env = {
        "FLASHMARK_PROCFS_ROOT": str(proc),
        "FLASHMARK_DB": str(db),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    overwrite = f"open({str(db)!r}, 'wb').write(b'not a database' * 100)"
    done = flashmark(
        "monitor", "mmcblk0", "--json", "--interval", "0.05", "--",
        sys.executable, "-c", overwrite, env=env,
    )  # fmt: skip
    assert done.returncode == ExitStatus.UNSAVED, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "flashmark.monitor/1" and "id" not in document
    assert done.stderr.splitlines()[-1].startswith("flashmark: error: the result was measured")
    (kept,) = recovery_files(tmp_path)
    assert json.loads(kept.read_text()) == document
    db.unlink()
    imported = flashmark("import", str(kept), env=env)
    assert imported.returncode == 0 and "added as 1" in imported.stdout
    shown = json.loads(flashmark("show", "1", "--format", "json", env=env).stdout)
    assert shown == {**document, "id": 1}


def test_a_signal_while_saving_still_keeps_the_result(tmp_path: Path, recordings: Path) -> None:
    # The history is locked from the last test on: the save waits for it (BUSY_TIMEOUT_S),
    # and SIGTERM arrives while it waits.
    def locked(db: Path) -> None:
        holder = sqlite3.connect(db, isolation_level=None)
        stack.callback(holder.close)
        holder.execute("BEGIN EXCLUSIVE")
        stack.callback(holder.execute, "ROLLBACK")

    def terminate(process: subprocess.Popen[str]) -> None:
        time.sleep(BUSY_TIMEOUT_S / 2)
        process.send_signal(signal.SIGTERM)

    with ExitStack() as stack:
        done, _, env = run_breaking_the_history(
            tmp_path, recordings, ["--json"], locked, meanwhile=terminate
        )
    assert done.returncode == ExitStatus.TERMINATED, done.stderr
    last_line = done.stderr.splitlines()[-1]
    assert "Traceback" not in done.stderr and last_line.startswith("flashmark: error: stopped")
    (kept,) = recovery_files(tmp_path)
    assert f"stopped by SIGTERM while saving; the result is kept in {kept}" in last_line
    document = json.loads(kept.read_text())
    assert document["schema"] == "flashmark.result/1" and len(document["tests"]) == 6
    imported = flashmark("import", str(kept), env=env)
    assert imported.returncode == 0 and "added as 1" in imported.stdout
