"""The filesystem mode: files written and fsync'd on a fresh ext4 or f2fs, checked after each
cut as a boot would check them.

Each record is a file (records/SEQ); every `flush_every` files each is fsync'd and then their
folder, when they are durable (fsync(2): the directory needs its own fsync). After a cut the
filesystem is checked and repaired as at boot (e2fsck(8) exit statuses; fsck.f2fs) before the
files are read back; one that cannot be repaired ends the run. mkfs, fsck and mount open the
device exclusively themselves, so it is checked before each rather than held.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from flashmark.errors import DeviceFailed, EnvironmentProblem
from flashmark.powercut.media import Session
from flashmark.powercut.result import FsCheck
from flashmark.system.device_safety import check_writable
from flashmark.system.disk_space import SpacePlan, SpaceWatch, plan_new_filesystem, reserve_bytes
from flashmark.system.file_space import fsync_folder
from flashmark.system.sysroot import SystemRoots

SETTLE_S = 3.0  # a fresh filesystem is left idle this long before the first cycle
SPACE_WATCH_S = 0.25  # statvfs(2) costs microseconds; a flush group is written in far less
_TOOL_TIMEOUT_S = 600.0  # mkfs and fsck of a large card take minutes
_MOUNT_TIMEOUT_S = 60.0
_PROBLEM_LINES = 20
_TOOLS = {
    "ext4": (("mkfs.ext4", "e2fsprogs"), ("e2fsck", "e2fsprogs")),
    "f2fs": (("mkfs.f2fs", "f2fs-tools"), ("fsck.f2fs", "f2fs-tools")),
}
# No lazy initialisation: its background writes would run into the first cycle's cut.
_MKFS = {
    "ext4": ["mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
    "f2fs": ["mkfs.f2fs", "-f", "-q"],
}
REPAIRED, CLEAN, ERRORS_LEFT, FAILED = "repaired", "clean", "errors left", "failed"


def filesystem_missing(mode: str, roots: SystemRoots) -> str | None:
    """Why this machine cannot run the filesystem mode `mode`, or None."""
    for tool, package in _TOOLS[mode]:
        if shutil.which(tool) is None:
            return f"--filesystem {mode} needs {tool} (apt-get install {package})"
    known = roots.read_proc("filesystems") or ""
    if mode not in known.split():
        return (
            f"this kernel has no {mode} (/proc/filesystems does not list it; "
            f"CONFIG_{mode.upper()}_FS)"
        )
    return None


def records_per_cycle(size_bytes: int, record_bytes: int) -> int:
    """How many records (files) one cycle writes at most on a filesystem made on a device of
    `size_bytes`: half the device, for its metadata and the last cycle's files (removed once
    checked) need the rest, and never into the reserve (flashmark.system.disk_space)."""
    room = min(size_bytes // 2, size_bytes - reserve_bytes(size_bytes))
    return max(1, room // max(record_bytes, 4096))


def filesystem_space(
    mode: str, node: str, size_bytes: int, record_bytes: int, roots: SystemRoots
) -> SpacePlan:
    """What the filesystem mode writes where: one cycle's records on the new filesystem (and
    into a sparse image below the device, on its host)."""
    written = records_per_cycle(size_bytes, record_bytes) * max(record_bytes, 4096)
    return plan_new_filesystem(node, mode, size_bytes, written, roots)


class FileJournal:
    """Records as files in a folder of the mounted filesystem: a RecordSink and its reader.
    With `watch`, the free space is read again after a flush (at most every
    SPACE_WATCH_S): DiskFilling stops the cycle when something fills the filesystem (or a
    sparse image's host) into its reserve."""

    def __init__(
        self, folder: Path, record_bytes: int, capacity: int, watch: SpaceWatch | None = None
    ) -> None:
        self.folder = folder
        self.record_bytes = record_bytes
        self.capacity = capacity
        folder.mkdir(exist_ok=True)
        self._pending: list[int] = []  # written files not flushed yet (their descriptors)
        self._watch = watch
        self._watched_at: float | None = None

    def offset_of(self, seq: int) -> int:
        return 0  # a record's sectors carry their offset in its file

    def path_of(self, seq: int) -> Path:
        return self.folder / f"{seq:012d}"

    def write(self, seq: int, record: bytes, *, fua: bool) -> None:
        fd = os.open(self.path_of(seq), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        self._pending.append(fd)
        view = memoryview(record)
        while view:
            view = view[os.write(fd, view) :]

    def flush(self) -> None:
        """Each file of the group, then their folder (the new names)."""
        try:
            for fd in self._pending:
                os.fsync(fd)
            fsync_folder(self.folder)
        finally:
            self._close_pending()
        self._watch_space()

    def _watch_space(self) -> None:
        now = time.monotonic()
        if self._watch is None or (
            self._watched_at is not None and now - self._watched_at < SPACE_WATCH_S
        ):
            return
        self._watched_at = now
        try:
            self._watch.check()
        except OSError:  # statvfs of a device being cut: its writes say what happened
            return

    def read(self, first_seq: int, count: int) -> Iterator[bytes | None]:
        for seq in range(first_seq, first_seq + count):
            try:
                yield self.path_of(seq).read_bytes()
            except FileNotFoundError:
                yield None
            except OSError as error:
                raise DeviceFailed(
                    f"reading {self.path_of(seq)} failed: {error.strerror}"
                ) from None

    def forget(self, first_seq: int, count: int) -> None:
        """Remove a checked cycle's files, so the filesystem does not fill up."""
        for seq in range(first_seq, first_seq + count):
            with contextlib.suppress(FileNotFoundError):
                self.path_of(seq).unlink()

    def close(self) -> None:
        self._close_pending()

    def _close_pending(self) -> None:
        for fd in self._pending:
            with contextlib.suppress(OSError):  # the device may be gone: close anyway
                os.close(fd)
        self._pending.clear()


class FsMedium:
    def __init__(self, mode: str, record_bytes: int, size_bytes: int, roots: SystemRoots) -> None:
        self.mode = mode
        self.record_bytes = record_bytes
        self.capacity = records_per_cycle(size_bytes, record_bytes)
        self._size_bytes = size_bytes
        self._roots = roots

    def prepare(self, node: str) -> None:
        reason = filesystem_missing(self.mode, self._roots)
        if reason is not None:
            raise EnvironmentProblem(reason)
        check_writable(node, self._roots)
        done = _run([*_MKFS[self.mode], node], _TOOL_TIMEOUT_S)
        if done.returncode != 0:
            raise DeviceFailed(f"mkfs.{self.mode} on {node} failed: {_tail(done.stdout)}")
        time.sleep(SETTLE_S)

    @contextlib.contextmanager
    def session(self, node: str, *, after_cut: bool) -> Iterator[Session]:
        check_writable(node, self._roots)
        fsck = _CHECKS[self.mode](node) if after_cut else None
        with _mounted(node, self.mode) as folder:
            if folder is None:
                yield Session(None, fsck)
                return
            space = filesystem_space(
                self.mode, node, self._size_bytes, self.record_bytes, self._roots
            )
            watch = SpaceWatch(space, folder)
            journal = FileJournal(
                folder / "flashmark-powercut", self.record_bytes, self.capacity, watch
            )
            try:
                yield Session(journal, fsck)
            finally:
                journal.close()


def check_ext4(node: str) -> FsCheck:
    replay = _run(["e2fsck", "-E", "journal_only", "-y", node], _TOOL_TIMEOUT_S)
    if replay.returncode >= 4:
        return FsCheck("e2fsck", replay.returncode, FAILED, _problems(replay.stdout))
    dry = _run(["e2fsck", "-f", "-n", node], _TOOL_TIMEOUT_S)
    if dry.returncode == 0:
        return FsCheck("e2fsck", 0, CLEAN)
    if dry.returncode >= 8:
        return FsCheck("e2fsck", dry.returncode, FAILED, _problems(dry.stdout))
    problems = _problems(dry.stdout)
    fix = _run(["e2fsck", "-f", "-y", node], _TOOL_TIMEOUT_S)
    state = {0: REPAIRED, 1: REPAIRED, 2: REPAIRED, 4: ERRORS_LEFT}.get(fix.returncode, FAILED)
    return FsCheck("e2fsck", fix.returncode, state, problems)


def check_f2fs(node: str) -> FsCheck:
    with _mounted(node, "f2fs") as folder:  # the kernel rolls the log forward at mount
        if folder is None:
            return FsCheck("fsck.f2fs", -1, FAILED, ("the filesystem could not be mounted",))
    dry = _run(["fsck.f2fs", "-f", "--dry-run", node], _TOOL_TIMEOUT_S)
    if dry.returncode == 0:
        return FsCheck("fsck.f2fs", 0, CLEAN)
    problems = _problems(dry.stdout)
    fix = _run(["fsck.f2fs", "-f", "-y", node], _TOOL_TIMEOUT_S)
    return FsCheck(
        "fsck.f2fs", fix.returncode, REPAIRED if fix.returncode == 0 else ERRORS_LEFT, problems
    )


_CHECKS = {"ext4": check_ext4, "f2fs": check_f2fs}  # each as a boot checks it after a cut


@contextlib.contextmanager
def _mounted(node: str, mode: str) -> Iterator[Path | None]:
    """The filesystem mounted on a private folder (None when it cannot be); unmounted after,
    lazily when the device went away under it."""
    folder = Path(tempfile.mkdtemp(prefix="flashmark-powercut-"))
    try:
        done = _run(["mount", "-t", mode, node, str(folder)], _MOUNT_TIMEOUT_S)
        if done.returncode != 0:
            yield None
            return
        try:
            yield folder
        finally:
            _unmount(folder)
    finally:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _unmount(folder: Path) -> None:
    for argv in (["umount", str(folder)], ["umount", "-l", str(folder)]):
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            if _run(argv, _MOUNT_TIMEOUT_S).returncode == 0:
                return


def _run(argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout_s,
            env={**os.environ, "LC_ALL": "C"},
        )
    except subprocess.TimeoutExpired:
        raise DeviceFailed(f"{argv[0]} did not finish within {timeout_s:g} s") from None
    except FileNotFoundError:
        raise EnvironmentProblem(f"{argv[0]} is not installed") from None


def _problems(output: str) -> tuple[str, ...]:
    """What a checker reported: its lines without the pass headers and version banners."""
    lines = []
    for line in output.splitlines():
        text = line.strip()
        if not text or text.startswith(("Pass ", "e2fsck ", "Info:", "Done:", "[FSCK]")):
            continue
        lines.append(text)
    return tuple(lines[:_PROBLEM_LINES])


def _tail(output: str) -> str:
    return output.strip()[-300:] or "no output"
