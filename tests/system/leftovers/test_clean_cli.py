"""`flashmark clean`, and the clean-up `run` and `workload` do when they start, as a user sees it.

Each command runs as a real `python -m flashmark` process with a private TMPDIR, so the
machine's own temp folder is never scanned."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flashmark.clean.kind import CLEAN
from flashmark.errors import ExitStatus
from flashmark.system.leftovers import Owner
from tests.cli_runner import Done
from tests.cli_runner import flashmark as run_in_process
from tests.system.leftovers.stamped import (
    Machine,
    locked,
    stamped_test_file,
    stamped_work_folder,
    start_ticks,
)


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """A folder measured (the card) and a private temp folder."""
    card, temp = tmp_path / "card", tmp_path / "temp"
    card.mkdir()
    temp.mkdir()
    return card, temp


def flashmark(
    *args: str, temp: Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Done:
    return run_in_process(*args, env={"TMPDIR": str(temp), **(env or {})}, cwd=cwd)


def left_by(owner: Owner, folders: tuple[Path, Path], size: int) -> dict[str, Path]:
    """What a run of `owner` has in the folders: its test file of `size` bytes and its fio
    work folder."""
    card, temp = folders
    return {
        "test file": stamped_test_file(card, owner, size=size),
        "fio work folder": stamped_work_folder(temp, "fio", owner),
    }


@pytest.fixture
def killed_run(folders: tuple[Path, Path], machine: Machine, dead_pid: int) -> dict[str, Path]:
    """What a run killed with SIGKILL leaves: its test file (1 MiB) and its fio work folder."""
    return left_by(machine.owner(dead_pid, 777), folders, size=1024 * 1024)


@pytest.fixture
def live_run(
    folders: tuple[Path, Path], machine: Machine, live_process: subprocess.Popen[bytes]
) -> dict[str, Path]:
    owner = machine.owner(live_process.pid, start_ticks(live_process.pid))
    return left_by(owner, folders, size=4096)


def test_clean_removes_a_killed_runs_files_and_names_them(
    folders: tuple[Path, Path], killed_run: dict[str, Path], live_run: dict[str, Path]
) -> None:
    card, temp = folders
    (card / "notes.txt").write_text("mine")
    done = flashmark("clean", str(card), temp=temp)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for kind, path in killed_run.items():
        assert not path.exists()
        [line] = [line for line in lines if str(path) in line]
        assert line.startswith("removed") and kind in line and "no longer running" in line
    for kind, path in live_run.items():
        assert path.exists()
        [line] = [line for line in lines if str(path) in line]
        assert line.startswith("left") and kind in line and "still running" in line
    assert lines[-1] == (
        f"{card} and {temp}: removed 2 leftovers (1.0 MiB); left 2 leftovers whose owner is "
        "running or cannot be checked (see above)"
    )
    assert (card / "notes.txt").read_text() == "mine"


def test_clean_defaults_to_the_current_folder(
    folders: tuple[Path, Path], killed_run: dict[str, Path]
) -> None:
    card, temp = folders
    done = flashmark("clean", temp=temp, cwd=card)
    assert done.returncode == 0, done.stderr
    assert not any(path.exists() for path in killed_run.values())


def test_dry_run_lists_and_keeps_everything(
    folders: tuple[Path, Path], killed_run: dict[str, Path]
) -> None:
    card, temp = folders
    done = flashmark("clean", str(card), "--dry-run", temp=temp)
    assert done.returncode == 0, done.stderr
    assert all(path.exists() for path in killed_run.values())
    assert sum(line.startswith("would remove") for line in done.stdout.splitlines()) == 2
    assert "run without --dry-run to remove them" in done.stdout


def test_json_for_scripts(
    folders: tuple[Path, Path], killed_run: dict[str, Path], live_run: dict[str, Path]
) -> None:
    card, temp = folders
    done = flashmark("clean", str(card), "--json", temp=temp)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "flashmark.clean/1"
    assert document["dry_run"] is False
    assert document["folders"] == [str(card), str(temp)]
    entries = {entry["path"]: entry for entry in document["leftovers"]}
    dead_file = entries[str(killed_run["test file"])]
    assert dead_file["action"] == "removed" and dead_file["owner_state"] == "dead"
    assert dead_file["kind"] == "test file" and dead_file["size_bytes"] == 1024 * 1024
    assert dead_file["owner"]["start_ticks"] == 777
    assert set(dead_file["owner"]) == {"pid", "start_ticks", "boot_id", "pid_namespace"}
    live_folder = entries[str(live_run["fio work folder"])]
    assert live_folder["action"] == "left" and live_folder["owner_state"] == "alive"
    assert live_folder["kind"] == "fio work folder" and live_folder["error"] is None
    assert document["removed_bytes"] >= 1024 * 1024


def test_the_json_reads_back_whole_and_is_no_result_to_import(
    folders: tuple[Path, Path], killed_run: dict[str, Path]
) -> None:
    card, temp = folders
    done = flashmark("clean", str(card), "--json", "--dry-run", temp=temp)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    result = CLEAN.from_document(document)
    assert CLEAN.to_document(result) == document
    assert {leftover.path for leftover in result.leftovers} == {
        str(path) for path in killed_run.values()
    }
    printed = temp / "clean.json"
    printed.write_text(done.stdout)
    imported = flashmark("import", str(printed), temp=temp)
    assert imported.returncode == 2
    assert "not a flashmark result document: schema 'flashmark.clean/1'" in imported.stderr


def test_a_folder_name_with_a_newline_stays_on_one_line(
    tmp_path: Path, machine: Machine, dead_pid: int
) -> None:
    card, temp = tmp_path / "my\ncard", tmp_path / "temp"
    card.mkdir()
    temp.mkdir()
    made = stamped_test_file(card, machine.owner(dead_pid, 1))
    done = flashmark("clean", str(card), temp=temp)
    assert done.returncode == 0, done.stderr
    first, summary = done.stdout.splitlines()
    assert first.startswith(f"removed      {str(made)!r}") and not made.exists()
    assert summary.startswith(repr(str(card)))


def test_nothing_to_clean_says_so(folders: tuple[Path, Path]) -> None:
    card, temp = folders
    done = flashmark("clean", str(card), temp=temp)
    assert done.returncode == 0 and done.stdout == f"no flashmark leftovers in {card} and {temp}\n"


def test_a_missing_or_unusable_target_is_one_line_and_exit_4(folders: tuple[Path, Path]) -> None:
    card, temp = folders
    missing = flashmark("clean", str(card / "gone"), temp=temp)
    assert missing.returncode == ExitStatus.TARGET
    assert missing.stderr == (
        f"flashmark: error: {card / 'gone'}: no such folder: give the folder a run measured\n"
    )
    device = flashmark("clean", "/dev/null", temp=temp)
    assert device.returncode == ExitStatus.TARGET and "not a folder" in device.stderr
    assert "Traceback" not in missing.stderr + device.stderr


def without_root_powers() -> list[str]:
    """argv prefix: root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (capabilities(7)),
    which otherwise let root read any folder; nothing for a user."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root reads every folder, and setpriv (util-linux) is missing to prevent it")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def test_an_unreadable_target_is_named(folders: tuple[Path, Path]) -> None:
    card, temp = folders
    card.chmod(0)
    try:
        argv = [*without_root_powers(), sys.executable, "-m", "flashmark", "clean", str(card)]
        env = {**os.environ, "TMPDIR": str(temp)}
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    finally:
        card.chmod(0o755)
    assert done.returncode == ExitStatus.TARGET, done.stderr
    assert done.stderr == (
        f"flashmark: error: cannot open {card}: permission denied (run as its owner, or with "
        "sudo)\n"
    )


def test_a_leftover_that_cannot_be_removed_gives_exit_4_and_says_how(
    folders: tuple[Path, Path], machine: Machine, dead_pid: int
) -> None:
    card, temp = folders
    made = stamped_test_file(card, machine.owner(dead_pid, 1))
    with locked(card):
        done = flashmark("clean", str(card), temp=temp)
    assert done.returncode == ExitStatus.TARGET, done.stderr
    assert made.exists()
    assert f"failed       {made}" in done.stdout and "could not remove it" in done.stdout
    assert "sudo flashmark clean" in done.stderr


# -- at the start of run and workload ---------------------------------------------------------
def replayed_run(folders: tuple[Path, Path], recordings: Path) -> Done:
    """`flashmark run` of the card, fio replayed; it succeeded."""
    card, temp = folders
    replay = {"FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive")}
    done = flashmark("run", str(card), "--no-save", temp=temp, env=replay)
    assert done.returncode == 0, done.stderr
    return done


def test_run_removes_a_killed_runs_leftovers_first_and_says_so_in_one_line(
    folders: tuple[Path, Path], killed_run: dict[str, Path], live_run: dict[str, Path], recordings
) -> None:
    card, temp = folders
    done = replayed_run(folders, recordings)
    [line] = [line for line in done.stderr.splitlines() if "leftover" in line]
    assert line.startswith("flashmark: removed 2 leftovers of flashmark runs that were killed (")
    assert all(str(path) in line for path in killed_run.values())
    assert not any(path.exists() for path in killed_run.values())
    assert all(path.exists() for path in live_run.values())
    # The run's own test file and work folder are gone; only the live run's remain.
    assert sorted(card.iterdir()) == [live_run["test file"]]
    assert sorted(temp.iterdir()) == [live_run["fio work folder"]]


def test_run_is_quiet_when_nothing_was_left(folders: tuple[Path, Path], recordings) -> None:
    card, temp = folders
    assert "leftover" not in replayed_run(folders, recordings).stderr
    assert list(card.iterdir()) == [] and list(temp.iterdir()) == []


def test_workload_removes_a_killed_workloads_folder_first(
    folders: tuple[Path, Path], machine: Machine, dead_pid: int
) -> None:
    card, temp = folders
    left = stamped_work_folder(card, "workload", machine.owner(dead_pid, 3))
    done = flashmark("workload", "cold-read", str(card), "--scale", "0.01", temp=temp)
    assert done.returncode == 0, done.stderr
    assert "flashmark: removed 1 leftover of flashmark runs that were killed" in done.stderr
    assert str(left) in done.stderr and not left.exists()
    assert list(card.iterdir()) == []
