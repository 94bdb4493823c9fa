"""Broken histories through the command line: one line, exit 6, and nothing measured.

`run` goes through the replay runner (FLASHMARK_FIO_REPLAY) and, once, through a stand-in
fio that records being started; `monitor` runs a command that would leave a mark.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import Done, flashmark
from tests.conftest import DATA
from tests.history.faults import FAULTS, Fault, broken_history, fault_ids, tree

DISKSTATS = Path(__file__).resolve().parents[1] / "data" / "diskstats"


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """XDG folders inside tmp_path: nothing a test does reaches the real home folder."""
    return {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


def one_error_line(done: Done, status: int, message: str) -> None:
    assert done.returncode == status, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("flashmark: error: ") and message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("fault", FAULTS, ids=fault_ids())
def test_run_on_a_broken_history_stops_before_the_first_test(
    fault: Fault, tmp_path: Path, recordings: Path, home: dict[str, str]
) -> None:
    card = tmp_path / "card"
    card.mkdir()
    env = {**home, "FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive")}
    with broken_history(fault, tmp_path) as db:
        before = tree(tmp_path)
        done = flashmark("run", str(card), "--json", "--db", str(db), env=env)
        one_error_line(done, ExitStatus.HISTORY, fault.message)
        assert "--no-save" in done.stderr
        assert done.stdout == ""
        # The error is the only line: no plan, no probe, no progress line of any test.
        assert tree(tmp_path) == before  # no test file, no recovery file, no folders


def test_run_on_a_broken_history_never_starts_fio(tmp_path: Path, home: dict[str, str]) -> None:
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    started = tmp_path / "fio-was-started"
    fio = bin_folder / "fio"
    fio.write_text(f'#!/bin/sh\necho "$@" >> {started}\necho fio-3.33\n')
    fio.chmod(0o755)
    env = {**home, "PATH": f"{bin_folder}:{os.environ['PATH']}"}
    fault = next(f for f in FAULTS if f.name == "garbage")
    with broken_history(fault, tmp_path) as db:
        done = flashmark("run", str(tmp_path / "bin"), "--db", str(db), env=env)
    one_error_line(done, ExitStatus.HISTORY, fault.message)
    assert not started.exists()


def test_no_save_measures_whatever_the_history_is(
    tmp_path: Path, recordings: Path, home: dict[str, str]
) -> None:
    env = {**home, "FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive")}
    fault = next(f for f in FAULTS if f.name == "garbage")
    with broken_history(fault, tmp_path) as db:
        done = flashmark("run", str(tmp_path), "--json", "--no-save", "--db", str(db), env=env)
    assert done.returncode == 0, done.stderr
    assert "id" not in json.loads(done.stdout)


@pytest.mark.parametrize("fault", FAULTS, ids=fault_ids())
def test_monitor_on_a_broken_history_does_not_run_the_command(
    fault: Fault, tmp_path: Path, home: dict[str, str]
) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "diskstats").write_text((DISKSTATS / "kernel-4.19-18-fields.t0").read_text())
    mark = tmp_path / "the-command-ran"
    env = {**home, "FLASHMARK_PROCFS_ROOT": str(proc)}
    with broken_history(fault, tmp_path) as db:
        done = flashmark("monitor", "mmcblk0", "--db", str(db), "--", "touch", str(mark), env=env)
        one_error_line(done, ExitStatus.HISTORY, fault.message)
    assert not mark.exists()


@pytest.mark.parametrize("fault", FAULTS, ids=fault_ids())
def test_reading_commands_on_a_broken_history(
    fault: Fault, tmp_path: Path, home: dict[str, str]
) -> None:
    with broken_history(fault, tmp_path) as db:
        before = tree(tmp_path)
        listed = flashmark("history", "--db", str(db), env=home)
        shown = flashmark("show", "1", "--db", str(db), env=home)
        assert tree(tmp_path) == before
    if fault.readable:
        assert listed.returncode == 0 and "No saved results yet" in listed.stdout
        one_error_line(shown, ExitStatus.USAGE, "no run 1")
    else:
        one_error_line(listed, ExitStatus.HISTORY, fault.message)
        one_error_line(shown, ExitStatus.HISTORY, fault.message)


@pytest.mark.parametrize(
    "args",
    [
        ["history"],
        ["history", "--json"],
        ["show", "1"],
        ["export", "1", "-o", "-", "--format", "md"],
        ["compare", "1", "2"],
        ["report", "1", "-o", "-"],
    ],
)
@pytest.mark.parametrize("where", ["default", "missing-file", "missing-folder"])
def test_reading_a_missing_history_creates_nothing(
    tmp_path: Path, home: dict[str, str], args: list[str], where: str
) -> None:
    env = dict(home)
    if where == "missing-file":
        env["FLASHMARK_DB"] = str(tmp_path / "h.sqlite3")
    elif where == "missing-folder":
        env["FLASHMARK_DB"] = str(tmp_path / "no" / "such" / "h.sqlite3")
    done = flashmark(*args, env=env, cwd=tmp_path)
    assert tree(tmp_path) == []
    assert "Traceback" not in done.stderr
    if args[0] == "history":
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == [] if "--json" in args else "No saved" in done.stdout
    else:
        one_error_line(done, ExitStatus.USAGE, "no run 1")
        assert "it is empty" in done.stderr


@pytest.mark.parametrize(
    "command", [["show"], ["export", "-o", "-"], ["compare", "1"], ["report", "-o", "-"]]
)
@pytest.mark.parametrize(
    "given", ["99999999999999999999999", "9223372036854775808", "0", "abc", "1.5", "+3", "1_0"]
)
def test_run_ids_are_checked_when_parsed(
    tmp_path: Path, home: dict[str, str], command: list[str], given: str
) -> None:
    done = flashmark(command[0], given, *command[1:], env=home, cwd=tmp_path)
    one_error_line(done, ExitStatus.USAGE, "is not a run id")
    assert tree(tmp_path) == []


@pytest.mark.parametrize("fault", FAULTS, ids=fault_ids())
def test_import_into_a_broken_history_is_one_line(
    fault: Fault, tmp_path: Path, home: dict[str, str]
) -> None:
    document = tmp_path / "result.json"
    document.write_text((DATA / "report" / "monitor-true.json").read_text())
    with broken_history(fault, tmp_path) as db:
        before = tree(tmp_path)
        done = flashmark("import", str(document), "--db", str(db), env=home)
        one_error_line(done, ExitStatus.HISTORY, fault.message)
        assert tree(tmp_path) == before
