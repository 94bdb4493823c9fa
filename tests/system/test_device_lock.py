"""One flashmark per device, on real loop devices: two folders on two partitions of one card, a
loop image on a card's filesystem, a root run and a user's run, and lock files another user
made first (a symlink, a hard link, a FIFO, a plain file) that root must not follow or trust.

Every loop device, mount, file and process is made here and removed in a finally block, also
when a test fails. Root only (loop devices, mounts, a second user)."""

from __future__ import annotations

import contextlib
import operator
import os
import pwd
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import flashmark
from flashmark.errors import ExitStatus
from flashmark.system.devices_under import devices_under
from flashmark.system.lock_files import LOCK_DIR_ENV, LockUnusable
from flashmark.system.target_lock import TargetBusy, held_path, holder_pid, refuse_if_busy
from tests.block_devices import LoopLab, require_tools, run
from tests.cli_runner import flashmark_script, started

pytestmark = pytest.mark.root

IMAGE_BYTES = 320 * 2**20
# Two 150 MiB partitions from sector 2048 (sfdisk(8) script): room for a run's 4 MiB test file
# and its 64 MiB margin on each.
PARTITION_TABLE = "label: dos\n2048,307200,L\n309248,307200,L\n"
SOURCE = Path(flashmark.__file__).resolve().parent
BUSY_TAIL = "two runs would each measure the other's I/O; wait until it ends, or stop it"

# Holds the target in argv[1] with flashmark's own lock until killed.
_HOLD = (
    "import sys, time\n"
    "from flashmark.system.target_lock import held_path\n"
    "with held_path(sys.argv[1]):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(120)\n"
)
# Tries to take the target in argv[1]: prints 'free' or the refusal, as a run would.
_TRY = (
    "import sys\n"
    "from flashmark.system.target_lock import TargetBusy, refuse_if_busy\n"
    "try:\n"
    "    refuse_if_busy(sys.argv[1])\n"
    "except TargetBusy as busy:\n"
    "    print(busy)\n"
    "else:\n"
    "    print('free')\n"
)


class Lab(LoopLab):
    """A loop lab in a folder every user reaches, whose mounts any user may write into, with a
    copy of flashmark's code another user can import."""

    def __init__(self, cleanup: contextlib.ExitStack) -> None:
        super().__init__(cleanup, prefix="flashmark-device-lock-")
        self.folder.chmod(0o755)  # a user's process reaches its mounts and the code copy

    def card(self, backing_folder: Path | None = None, partitioned: bool = False) -> str:
        """A loop device on a new image file (in `backing_folder`, else the lab's folder)."""
        if partitioned:
            image = self.image(IMAGE_BYTES, PARTITION_TABLE, folder=backing_folder)
            return self.attach(image, partitions=True)
        return self.attach(self.image(IMAGE_BYTES // 2, folder=backing_folder))

    def mount(self, node: str) -> Path:
        point = super().mount(node)
        point.chmod(0o1777)  # any user may make a folder there
        return point

    def code(self) -> Path:
        """A copy of flashmark's package another user can import (the tree may be private)."""
        copy = self.folder / "code"
        if not copy.exists():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(SOURCE, copy / "flashmark", ignore=ignore)
            run(["chmod", "-R", "a+rX", str(copy)])
        return copy


@pytest.fixture
def lab() -> Iterator[Lab]:
    require_tools("losetup", "mkfs.ext4", "sfdisk", "partx", "setpriv")
    with contextlib.ExitStack() as cleanup:
        yield Lab(cleanup)


@pytest.fixture
def shared_locks(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A lock folder not made yet, in a folder every user reaches: whoever runs first makes it,
    as /run/lock/flashmark is made on a machine."""
    run_lock = lab.folder / "run-lock"  # as /run/lock: sticky, writable by all
    run_lock.mkdir()
    run_lock.chmod(0o1777)
    folder = run_lock / "flashmark"
    monkeypatch.setenv(LOCK_DIR_ENV, str(folder))
    return folder


class Holder:
    """Another process holding `target` with flashmark's lock, as root or as `nobody`."""

    def __init__(self, target: Path | str, lab: Lab, *, user: str | None = None) -> None:
        self.process = subprocess.Popen(
            [*_as(user), sys.executable, "-c", _HOLD, str(target)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_with_code(lab),
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line == "held\n", self.process.communicate()[1]
        self.pid = self.process.pid

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    started: list[Holder] = []
    yield started
    for holder in started:
        holder.stop()


def _as(user: str | None) -> list[str]:
    if user is None:
        return []
    account = pwd.getpwnam(user)
    ids = (f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}")
    return ["setpriv", *ids, "--clear-groups", "--"]


def _with_code(lab: Lab) -> dict[str, str]:
    """The environment of a process that imports the lab's copy of flashmark."""
    return {**os.environ, "PYTHONPATH": str(lab.code())}


def _try_as(user: str, target: Path | str, lab: Lab) -> str:
    argv = [*_as(user), sys.executable, "-c", _TRY, str(target)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=_with_code(lab))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _disk_label(node: str) -> str:
    return f"device {Path(node).name}"


def _lock_name(device: int) -> str:
    return f"{os.major(device)}:{os.minor(device)}.lock"


# What root's use of a file another user made must leave as it was.
_UNCHANGED = operator.attrgetter("st_mode", "st_uid", "st_size", "st_mtime_ns")


def test_a_folder_on_another_partition_of_the_same_card_is_refused_naming_the_holder(
    lab, shared_locks, holders
):
    card = lab.card(partitioned=True)
    one, two = lab.mount(card + "p1") / "one", lab.mount(card + "p2") / "two"
    one.mkdir()
    two.mkdir()
    holders.append(holder := Holder(one, lab))
    with pytest.raises(TargetBusy) as refused:
        refuse_if_busy(str(two))
    said = str(refused.value)
    assert said.startswith(f"{two} is being measured by another flashmark (pid {holder.pid}, ")
    assert "python -c import sys, time" in said  # its command line, as ps shows it
    assert said.endswith(f" on the same {_disk_label(card)}: {BUSY_TAIL}")
    holder.stop()
    refuse_if_busy(str(two))  # the kernel dropped the lock with its holder


def test_a_loop_image_on_a_cards_filesystem_and_the_card_exclude_each_other(
    lab, shared_locks, holders
):
    card = lab.card()
    on_card = lab.mount(card)
    image = lab.card(backing_folder=on_card)
    # The image's way down: its loop, the card its file is on, the disk of the card's file.
    below_lab = [device.label for device in devices_under(os.stat(lab.folder))]
    assert [device.label for device in devices_under(os.stat(image))] == [
        _disk_label(image),
        _disk_label(card),
        *below_lab,
    ]
    holders.append(holder := Holder(image, lab))
    for other in (card, on_card):  # the card itself, a folder on it
        with pytest.raises(TargetBusy, match=rf"\(pid {holder.pid}, .* device {Path(card).name}:"):
            refuse_if_busy(str(other))
    holder.stop()
    holders.append(holder := Holder(card, lab))
    with pytest.raises(TargetBusy, match=rf"\(pid {holder.pid}, .* device {Path(card).name}:"):
        refuse_if_busy(image)


def test_a_root_run_and_a_users_run_exclude_each_other_both_ways(lab, shared_locks, holders):
    card = lab.card(partitioned=True)
    one, two = lab.mount(card + "p1"), lab.mount(card + "p2")
    # The user runs first: the lock folder and file are the user's; root opens them read-only.
    holders.append(users := Holder(one, lab, user="nobody"))
    assert (
        shared_locks.stat().st_uid == pwd.getpwnam("nobody").pw_uid
        and shared_locks.stat().st_mode & 0o7777 == 0o1777
    )
    with pytest.raises(TargetBusy, match=rf"\(pid {users.pid}, .* device {Path(card).name}:"):
        refuse_if_busy(str(two))
    users.stop()
    # Root first: the user cannot open the device node, and still finds root's lock file.
    holders.append(roots := Holder(one, lab))
    said = _try_as("nobody", two, lab)
    assert said.startswith(f"{two} is being measured by another flashmark (pid {roots.pid}, ")
    assert said.endswith(f" on the same {_disk_label(card)}: {BUSY_TAIL}")
    roots.stop()
    assert _try_as("nobody", two, lab) == "free"
    assert {path.stat().st_mode & 0o777 for path in shared_locks.iterdir()} == {0o444}


@pytest.mark.fio
def test_a_second_run_on_another_folder_of_the_card_exits_4_and_the_first_is_not_disturbed(
    lab, shared_locks
):
    """What was reported: `flashmark run /mnt/card/one`, then `flashmark run /mnt/card/two`."""
    card = lab.card(partitioned=True)
    one, two = lab.mount(card + "p1"), lab.mount(card + "p2")
    options = ("--no-save", "--size", "4M", "--runtime", "1", "--ramp", "0", "--profile", "a1")
    lock_file = shared_locks / _lock_name(os.stat(card).st_rdev)
    with started("run", one, *options) as first:
        # Held, and writing: its test folder is made after the lock that lasts the run.
        deadline = time.monotonic() + 60
        while not (
            lock_file.exists()
            and holder_pid(lock_file.stat()) == first.pid
            and len(list(one.iterdir())) > 1
        ):
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.05)
        second = flashmark_script("run", two, *options, timeout=120)
        _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert second.returncode == ExitStatus.TARGET, second.stderr
    assert second.stderr.strip().splitlines() == [
        f"flashmark: error: {two} is being measured by another flashmark (pid {first.pid}, "
        f"flashmark run {one} {' '.join(options)}) on the same {_disk_label(card)}: {BUSY_TAIL}"
    ]
    assert list(two.iterdir()) == [two / "lost+found"]  # nothing written


PLANTED = {
    "symlink": "(a symbolic link)",
    "hard link": "is a hard link",
    "fifo": "is not a regular file",
}


def _made_by_nobody(argv: list[str]) -> None:
    run([*_as("nobody"), *argv])


def _lock_file_made_first(shared_locks: Path, folder: Path) -> Path:
    """The lock folder made (as whoever runs first makes it); the name of `folder`'s lock."""
    shared_locks.mkdir(mode=0o1777)
    shared_locks.chmod(0o1777)
    return shared_locks / _lock_name(os.stat(folder).st_dev)


@pytest.mark.parametrize("kind", ["symlink", "hard link", "fifo"])
def test_a_lock_file_another_user_planted_is_neither_followed_nor_used(lab, shared_locks, kind):
    """A user who makes the lock file first, as a link to a file of root's choice or as a
    FIFO: root's run stops, names it, and the file the link points to is not opened."""
    folder = lab.mount(lab.card())
    name = _lock_file_made_first(shared_locks, folder)
    victim = lab.folder / "victim"
    victim.write_text("precious\n")
    if kind == "symlink":
        _made_by_nobody(["ln", "-s", str(victim), str(name)])
    elif kind == "hard link":
        own = shared_locks / "nobodys-file"
        _made_by_nobody(["touch", str(own)])
        _made_by_nobody(["ln", str(own), str(name)])
        victim = own
    else:
        _made_by_nobody(["mkfifo", str(name)])
    before, text = victim.stat(), victim.read_text()
    with pytest.raises(LockUnusable) as refused:
        refuse_if_busy(str(folder))
    assert str(name) in str(refused.value)
    assert PLANTED[kind] in str(refused.value)
    assert holder_pid(before) is None  # root never locked the file the link names
    assert victim.read_text() == text
    assert _UNCHANGED(victim.stat()) == _UNCHANGED(before)
    assert name.is_symlink() or name.exists()  # left as it was: never removed


def test_a_plain_lock_file_another_user_made_first_is_used_read_only(lab, shared_locks):
    folder = lab.mount(lab.card())
    name = _lock_file_made_first(shared_locks, folder)
    _made_by_nobody(["sh", "-c", f"umask 022 && echo mine > '{name}'"])
    before = name.stat()
    with held_path(str(folder)):
        assert holder_pid(name.stat()) == os.getpid()
    assert name.read_text() == "mine\n"
    assert _UNCHANGED(name.stat()) == _UNCHANGED(before)


def test_a_lock_folder_that_is_a_symlink_is_not_followed(lab, monkeypatch):
    elsewhere = lab.folder / "elsewhere"
    elsewhere.mkdir()
    link = lab.folder / "locks"
    link.symlink_to(elsewhere)
    monkeypatch.setenv(LOCK_DIR_ENV, str(link))
    with pytest.raises(LockUnusable, match=f"cannot use flashmark's lock {link} "):
        refuse_if_busy(str(lab.folder))
    assert list(elsewhere.iterdir()) == []
