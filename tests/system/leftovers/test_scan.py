"""Leftovers of killed runs beside live runs' files and look-alikes: who owns what, what goes.

Owners are real processes of this machine (one ended, one running); only the names are made up.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.errors import TargetError, TargetNotFound
from flashmark.system.leftovers import (
    Action,
    LeftoverKind,
    Owner,
    OwnerState,
    ProcessTable,
    clean_folders,
    find_leftovers,
    leftover_folder,
    make_work_folder,
    owner_stamp,
    temporary_work_folder,
    test_file_name,
)
from tests.system.leftovers.stamped import (
    TOKEN,
    Machine,
    locked,
    stamped_test_file,
    stamped_work_folder,
    start_ticks,
)


def states(folder: Path) -> dict[str, OwnerState]:
    return {
        leftover.path.name: leftover.state for leftover in find_leftovers(folder, ProcessTable())
    }


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (links not followed) with a digest of what it holds."""

    def held(path: Path) -> str:
        if path.is_symlink():
            return "-> " + os.readlink(path)
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder"

    return {str(path.relative_to(folder)): held(path) for path in sorted(folder.rglob("*"))}


# -- names ------------------------------------------------------------------------------------
def test_generated_names_are_short_plain_and_name_this_process(tmp_path: Path) -> None:
    name = test_file_name()
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name) and len(name) <= 64, name
    assert name != test_file_name()  # one process may own several
    (tmp_path / name).write_bytes(b"")
    [found] = find_leftovers(tmp_path, ProcessTable())
    assert found.kind is LeftoverKind.TEST_FILE
    assert found.state is OwnerState.ALIVE and found.pid == os.getpid()
    assert found.owner is not None and found.owner.stamp() == owner_stamp()


def test_work_folders_are_private_owned_and_removed_after_use(tmp_path: Path) -> None:
    with temporary_work_folder("fio", tmp_path) as fio:
        assert fio.stat().st_mode & 0o777 == 0o700
        (fio / "job.fio").write_text("[x]\n")
        workload = make_work_folder("workload", tmp_path)
        assert re.fullmatch(r"[A-Za-z0-9._-]+", workload.name) and len(workload.name) <= 64
        found = {leftover.path: leftover for leftover in find_leftovers(tmp_path, ProcessTable())}
        assert found[fio].kind is LeftoverKind.FIO_FOLDER
        assert found[workload].kind is LeftoverKind.WORKLOAD_FOLDER
        assert {leftover.state for leftover in found.values()} == {OwnerState.ALIVE}
    assert not fio.exists()
    workload.rmdir()


def test_work_folders_go_to_the_temp_folder_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() caches its first answer
    with temporary_work_folder("fio") as folder:
        assert folder.parent == tmp_path


def test_a_forked_child_is_another_owner() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its stamp and leave without running pytest's cleanup
        os.write(write, owner_stamp().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as stream:
        child_stamp = stream.read()
    assert child_stamp.startswith(f"{pid}-") and child_stamp != owner_stamp()


# -- owners -----------------------------------------------------------------------------------
def test_dead_runs_leftovers_are_removed_and_live_ones_kept(
    tmp_path: Path, machine: Machine, dead_pid: int, live_process: subprocess.Popen[bytes]
) -> None:
    dead = machine.owner(dead_pid, 4242)
    alive = machine.owner(live_process.pid, start_ticks(live_process.pid))
    dead_file = stamped_test_file(tmp_path, dead, size=4096)
    dead_fio = stamped_work_folder(tmp_path, "fio", dead)
    dead_workload = stamped_work_folder(tmp_path, "workload", dead)
    live_file = stamped_test_file(tmp_path, alive, size=4096)
    live_fio = stamped_work_folder(tmp_path, "fio", alive)
    live_before = snapshot(live_fio), live_file.read_bytes()

    report = clean_folders([tmp_path], ProcessTable())

    actions = {outcome.leftover.path: outcome.action for outcome in report.outcomes}
    assert actions == {
        dead_file: Action.REMOVED,
        dead_fio: Action.REMOVED,
        dead_workload: Action.REMOVED,
        live_file: Action.LEFT,
        live_fio: Action.LEFT,
    }
    assert not dead_file.exists() and not dead_fio.exists() and not dead_workload.exists()
    assert (snapshot(live_fio), live_file.read_bytes()) == live_before
    assert report.removed_bytes == 4096 + 2 * (len("[seq-write]\n") + len("0, 1, 0, 4096\n"))
    reasons = {o.leftover.path: o.leftover.reason for o in report.outcomes}
    assert reasons[dead_file] == f"pid {dead_pid} is no longer running"
    assert reasons[live_file] == f"pid {live_process.pid} is still running"


def test_a_reused_pid_with_another_start_time_is_not_the_owner(
    tmp_path: Path, machine: Machine, live_process: subprocess.Popen[bytes]
) -> None:
    started = start_ticks(live_process.pid)
    earlier = stamped_test_file(tmp_path, machine.owner(live_process.pid, started - 1))
    [outcome] = clean_folders([tmp_path], ProcessTable()).outcomes
    assert outcome.action is Action.REMOVED and not earlier.exists()
    assert "now belongs to another process" in outcome.leftover.reason


def test_leftovers_of_an_earlier_boot_are_dead_even_if_the_pid_runs_now(
    tmp_path: Path, machine: Machine, live_process: subprocess.Popen[bytes]
) -> None:
    other_boot = format(int(machine.boot_id, 16) ^ 0x1, "08x")
    owner = Owner(
        live_process.pid, start_ticks(live_process.pid), other_boot, machine.pid_namespace
    )
    stamped_test_file(tmp_path, owner)
    [leftover] = find_leftovers(tmp_path, ProcessTable())
    assert leftover.state is OwnerState.DEAD
    assert leftover.reason == "made before the machine last started"


def test_another_pid_namespace_is_never_judged(
    tmp_path: Path, machine: Machine, dead_pid: int
) -> None:
    # A container's pid 1234 is another process on the host: leave what it made.
    owner = Owner(dead_pid, 10, machine.boot_id, machine.pid_namespace + 1)
    made = stamped_test_file(tmp_path, owner)
    [outcome] = clean_folders([tmp_path], ProcessTable()).outcomes
    assert outcome.action is Action.LEFT and outcome.leftover.state is OwnerState.UNKNOWN
    assert "another pid namespace" in outcome.leftover.reason and made.exists()


def test_legacy_names_count_only_when_their_pid_is_not_running(
    tmp_path: Path, dead_pid: int, live_process: subprocess.Popen[bytes]
) -> None:
    dead = tmp_path / f".flashmark-{dead_pid}-0a1b2c3d.tmp"
    running = tmp_path / f".flashmark-{live_process.pid}-0a1b2c3d.tmp"
    old_fio = tmp_path / "flashmark-fio-k2j_9x0a"
    old_workload = tmp_path / "flashmark-workload-abcdefgh"
    for path in (dead, running):
        path.write_bytes(b"x")
    old_fio.mkdir()
    old_workload.mkdir()
    report = clean_folders([tmp_path], ProcessTable())
    by_path = {o.leftover.path: o for o in report.outcomes}
    assert by_path[dead].action is Action.REMOVED and not dead.exists()
    assert by_path[running].action is Action.LEFT and running.exists()
    assert by_path[running].leftover.state is OwnerState.UNKNOWN
    for folder in (old_fio, old_workload):
        assert by_path[folder].action is Action.LEFT and folder.exists()
        assert by_path[folder].leftover.pid is None
        assert "did not record its owner" in by_path[folder].leftover.reason
    assert all(o.leftover.legacy for o in report.outcomes)


@pytest.fixture
def user_files(tmp_path: Path) -> Iterator[Path]:
    """A file and a folder of the user's, outside the folder being cleaned."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "photo.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    (mine / "album").mkdir()
    (mine / "album" / "one.jpg").write_bytes(b"one")
    yield mine


def test_look_alikes_are_never_touched(
    tmp_path: Path, machine: Machine, dead_pid: int, user_files: Path
) -> None:
    folder = tmp_path / "card"
    folder.mkdir()
    stamp = machine.owner(dead_pid, 99).stamp()
    look_alikes = [
        f".flashmark-{stamp}-{TOKEN}.tmp.bak",
        f".flashmark-{stamp}-{TOKEN.upper()}.tmp",
        f".flashmark-{stamp}-0123abc.tmp",  # 7 token digits
        f"flashmark-{stamp}-{TOKEN}.tmp",  # no leading dot
        f".flashmark-0-{TOKEN}.tmp",  # pid 0 is no process's
        f".flashmark-{dead_pid}-{TOKEN}.TMP",
        ".flashmark-notes.tmp",
        f"x.flashmark-{stamp}-{TOKEN}.tmp",
        f"flashmark-fio-{stamp}-{TOKEN}.txt",
        f"flashmark-other-{stamp}-{TOKEN}",
        "flashmark-fio-notes",
        "flashmark-workload-too_long_name",
        "notes.txt",
    ]
    for name in look_alikes:
        (folder / name).write_bytes(name.encode())
    # Right names on the wrong kind of entry: a regular file where a folder would be, a folder
    # where a test file would be, links to the user's own file and folder, a named pipe.
    (folder / f"flashmark-fio-{stamp}-{TOKEN}").write_bytes(b"a file, not a folder")
    (folder / f".flashmark-{stamp}-{TOKEN}.tmp").mkdir()
    (folder / f".flashmark-{stamp}-{TOKEN}.tmp" / "inside").write_bytes(b"kept")
    (folder / f".flashmark-{stamp}-11111111.tmp").symlink_to(user_files / "photo.jpg")
    (folder / f"flashmark-workload-{stamp}-{TOKEN}").symlink_to(user_files / "album")
    (folder / f".flashmark-{dead_pid}-22222222.tmp").symlink_to(user_files / "photo.jpg")
    os.mkfifo(folder / f".flashmark-{stamp}-33333333.tmp")
    before = snapshot(tmp_path)

    report = clean_folders([folder], ProcessTable())

    assert report.outcomes == ()
    assert snapshot(tmp_path) == before


def test_a_folder_given_twice_is_cleaned_once(
    tmp_path: Path, machine: Machine, dead_pid: int
) -> None:
    stamped_test_file(tmp_path, machine.owner(dead_pid, 1))
    (tmp_path / "again").symlink_to(tmp_path)
    report = clean_folders([tmp_path, tmp_path / "again", tmp_path], ProcessTable())
    assert report.folders == (tmp_path,)
    assert [o.action for o in report.outcomes] == [Action.REMOVED]


def test_dry_run_removes_nothing(tmp_path: Path, machine: Machine, dead_pid: int) -> None:
    made = stamped_test_file(tmp_path, machine.owner(dead_pid, 1), size=10)
    report = clean_folders([tmp_path], ProcessTable(), dry_run=True)
    assert [o.action for o in report.outcomes] == [Action.WOULD_REMOVE]
    assert made.read_bytes() == b"\xa5" * 10 and report.removed_bytes == 0


def test_a_removal_that_fails_is_reported_not_raised(
    tmp_path: Path, machine: Machine, dead_pid: int
) -> None:
    made = stamped_test_file(tmp_path, machine.owner(dead_pid, 1))
    with locked(tmp_path):
        [outcome] = clean_folders([tmp_path], ProcessTable()).outcomes
    assert outcome.action is Action.FAILED and made.exists()
    assert outcome.error_code in (errno.EACCES, errno.EPERM) and outcome.denied


# -- procfs as the kernel shows it -----------------------------------------------------------
def fake_procfs(root: Path, *, boot_id: str | None, pids: dict[int, str]) -> ProcessTable:
    """A procfs with a boot id and /proc/PID/stat texts; this process's namespace link too."""
    if boot_id is not None:
        (root / "sys/kernel/random").mkdir(parents=True)
        (root / "sys/kernel/random/boot_id").write_text(boot_id + "\n")
    for pid, stat_text in pids.items():
        (root / str(pid)).mkdir(parents=True)
        (root / str(pid) / "stat").write_text(stat_text)
    (root / str(os.getpid()) / "ns").mkdir(parents=True, exist_ok=True)
    (root / str(os.getpid()) / "ns" / "pid").symlink_to("pid:[4026531836]")
    return ProcessTable(procfs=root, ask_kernel=False)


def stat_line(pid: int, comm: str, start: int) -> str:
    """A /proc/PID/stat line (proc(5)); field 22 is the start time in clock ticks."""
    fields = ["S", "1", *(["0"] * 17), str(start), "1000", "50"]
    return f"{pid} ({comm}) {' '.join(fields)}\n"


def test_start_time_is_field_22_even_with_parentheses_in_the_command_name(
    tmp_path: Path,
) -> None:
    table = fake_procfs(
        tmp_path, boot_id="bcdd6dfd-4028-420c-9f06-9a04535c62bf",
        pids={700: stat_line(700, "we ird) (name", 123456)},
    )  # fmt: skip
    assert table.start_ticks(700) == 123456
    assert table.boot_id() == "bcdd6dfd"
    assert table.pid_namespace(os.getpid()) == 4026531836
    assert table.owner(700) is None  # its namespace link is not in the tree
    assert table.start_ticks(701) is None


def test_the_real_stat_agrees_with_the_kernel(live_process: subprocess.Popen[bytes]) -> None:
    # started after this test process, counted from the same boot
    assert start_ticks(live_process.pid) >= start_ticks(os.getpid())


def test_an_unreadable_boot_id_leaves_everything(tmp_path: Path, dead_pid: int) -> None:
    folder = tmp_path / "card"
    folder.mkdir()
    table = fake_procfs(tmp_path / "proc", boot_id=None, pids={})
    made = stamped_test_file(folder, Owner(dead_pid, 5, "bcdd6dfd", 4026531836))
    [outcome] = clean_folders([folder], table).outcomes
    assert outcome.action is Action.LEFT and outcome.leftover.state is OwnerState.UNKNOWN
    assert made.exists()


def test_a_pid_hidden_by_proc_but_known_to_the_kernel_is_unknown(
    tmp_path: Path, live_process: subprocess.Popen[bytes]
) -> None:
    # As with `mount -o hidepid=2 proc /proc`: another user's process has no /proc entry, but
    # kill(pid, 0) still finds it.
    folder = tmp_path / "card"
    folder.mkdir()
    boot = "bcdd6dfd-4028-420c-9f06-9a04535c62bf"
    hidden = fake_procfs(tmp_path / "proc", boot_id=boot, pids={})
    table = ProcessTable(procfs=hidden.procfs, ask_kernel=True)
    stamped_test_file(folder, Owner(live_process.pid, 5, "bcdd6dfd", 4026531836))
    [leftover] = find_leftovers(folder, table)
    assert leftover.state is OwnerState.UNKNOWN and "hides it" in leftover.reason


# -- folders ----------------------------------------------------------------------------------
def test_a_run_on_a_file_leaves_things_in_its_folder(tmp_path: Path) -> None:
    (tmp_path / "disk.img").write_bytes(b"")
    assert leftover_folder(tmp_path / "disk.img") == tmp_path
    assert leftover_folder(str(tmp_path)) == tmp_path


def test_missing_and_odd_targets_are_named(tmp_path: Path) -> None:
    with pytest.raises(TargetNotFound, match="no such folder"):
        leftover_folder(tmp_path / "gone")
    with pytest.raises(TargetError, match="not a folder"):
        leftover_folder("/dev/null")
    with pytest.raises(TargetNotFound):
        find_leftovers(tmp_path / "gone", ProcessTable())


def test_a_dead_runs_private_folder_is_removed_without_following_what_was_put_in_it(
    tmp_path: Path, machine: Machine, dead_pid: int, live_process: subprocess.Popen[bytes]
) -> None:
    user_files = tmp_path / "user"
    user_files.mkdir()
    (user_files / "photo.jpg").write_bytes(b"\xff\xd8 the user's photo")
    folder = tmp_path / "card"
    folder.mkdir()
    dead_stamp = machine.owner(dead_pid, 4242).stamp()
    dead = folder / f".flashmark-{dead_stamp}-{TOKEN}.d"
    dead.mkdir(mode=0o700)
    (dead / f".flashmark-{dead_stamp}-{TOKEN}.tmp").write_bytes(b"\xa5" * 4096)
    (dead / "photos").symlink_to(user_files)  # what someone put inside: never followed
    alive = machine.owner(live_process.pid, start_ticks(live_process.pid))
    live = folder / f".flashmark-{alive.stamp()}-{TOKEN}.d"
    live.mkdir(mode=0o700)
    link = folder / f".flashmark-{dead_stamp}-11111111.d"
    link.symlink_to(user_files)  # a link named like a private folder is not one

    report = clean_folders([folder], ProcessTable())

    actions = {outcome.leftover.path: outcome.action for outcome in report.outcomes}
    assert actions == {dead: Action.REMOVED, live: Action.LEFT}
    kinds = {outcome.leftover.kind for outcome in report.outcomes}
    assert kinds == {LeftoverKind.PRIVATE_FOLDER}
    assert not dead.exists() and live.is_dir() and link.is_symlink()
    assert (user_files / "photo.jpg").read_bytes() == b"\xff\xd8 the user's photo"
