"""Owner-stamped names for what flashmark puts on disk while it runs, and finding the ones whose
owner is gone.

A SIGKILL or a power cut leave a run no exit at which to remove its files, so every such name
says who made it: pid, start time (proc(5), stat field 22), boot id (random(4)) and pid
namespace (namespaces(7)). An owner is dead when the boot differs or the pid is gone or started
at another time; unknown, and left alone, in another namespace or when /proc hides the pid.
docs/leftovers.md has the names and verdicts.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import (
    EnvironmentProblem,
    TargetError,
    TargetNotFound,
    TargetPermissionDenied,
)
from flashmark.system.signals import signals_held

# /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so fields
# are counted after the last ")". Field 22 (starttime) is the 20th after it (proc(5)).
_STAT_FIELDS_BEFORE_COMM = 2
_STARTTIME_FIELD = 22
_BOOT_ID_DIGITS = 8
_TOKEN_BYTES = 4  # 8 hex digits

_OWNER = (
    r"(?P<pid>[1-9][0-9]{0,9})-(?P<start>[0-9a-f]{1,16})-"
    r"(?P<boot>[0-9a-f]{8})-(?P<pidns>[0-9a-f]{1,16})"
)
_TOKEN = r"[0-9a-f]{8}"
_TEST_FILE = re.compile(rf"\.flashmark-{_OWNER}-{_TOKEN}\.tmp")
_PRIVATE_FOLDER = re.compile(rf"\.flashmark-{_OWNER}-{_TOKEN}\.d")
_WORK_FOLDER = re.compile(rf"flashmark-(?P<purpose>fio|workload)-{_OWNER}-{_TOKEN}")
# Names of flashmark 0.1 (before owners were recorded): secrets.token_hex(4) in target.py, and
# tempfile.mkdtemp's 8 characters from [a-z0-9_] (CPython's tempfile._RandomNameSequence).
_LEGACY_TEST_FILE = re.compile(r"\.flashmark-(?P<pid>[1-9][0-9]{0,9})-[0-9a-f]{8}\.tmp")
_LEGACY_WORK_FOLDER = re.compile(r"flashmark-(?P<purpose>fio|workload)-[a-z0-9_]{8}")


class LeftoverKind(enum.Enum):
    TEST_FILE = "test file"
    PRIVATE_FOLDER = "private folder"
    FIO_FOLDER = "fio work folder"
    WORKLOAD_FOLDER = "workload folder"


_PURPOSE_KIND = {"fio": LeftoverKind.FIO_FOLDER, "workload": LeftoverKind.WORKLOAD_FOLDER}


class OwnerState(enum.Enum):
    ALIVE = "alive"
    DEAD = "dead"
    UNKNOWN = "unknown"


class Action(enum.Enum):
    REMOVED = "removed"
    WOULD_REMOVE = "would-remove"  # --dry-run
    LEFT = "left"  # the owner is alive or unknown
    FAILED = "failed"  # dead, but removing it failed (see the error)


@dataclass(frozen=True)
class Owner:
    """The process that made an entry, as its name records it."""

    pid: int
    start_ticks: int
    boot_id: str  # the first 8 hex digits of the boot id
    pid_namespace: int

    def stamp(self) -> str:
        return f"{self.pid}-{self.start_ticks:x}-{self.boot_id}-{self.pid_namespace:x}"


@dataclass(frozen=True)
class Leftover:
    path: Path
    kind: LeftoverKind
    pid: int | None  # None: an old work folder that named no owner
    owner: Owner | None  # None: an old name (pid at most)
    state: OwnerState
    reason: str  # why the owner is alive, dead or unknown, for people
    size_bytes: int | None  # None when it could not be read (another user's folder)

    @property
    def legacy(self) -> bool:
        return self.owner is None


@dataclass(frozen=True)
class Outcome:
    leftover: Leftover
    action: Action
    error: str | None = None  # why a removal failed, for people
    error_code: int | None = None  # its errno, for callers (EACCES: try as root)

    @property
    def denied(self) -> bool:
        return self.error_code in (errno.EACCES, errno.EPERM)


@dataclass(frozen=True)
class CleanReport:
    folders: tuple[Path, ...]
    outcomes: tuple[Outcome, ...]
    dry_run: bool

    def with_action(self, *actions: Action) -> tuple[Outcome, ...]:
        return tuple(outcome for outcome in self.outcomes if outcome.action in actions)

    @property
    def removed_bytes(self) -> int:
        return sum(o.leftover.size_bytes or 0 for o in self.with_action(Action.REMOVED))


@dataclass(frozen=True)
class ProcessTable:
    """What the kernel says about processes, read from a procfs.

    Commands pass the real /proc, never FLASHMARK_PROCFS_ROOT: a recorded tree describes another
    machine, and deciding on it that this machine's runs are dead would remove live runs' files.
    `ask_kernel` adds kill(pid, 0) (kill(2): EPERM means the process exists) for a pid /proc
    does not show, as with `hidepid=`; off for a synthetic procfs, whose pids are not this host's.
    """

    procfs: Path = Path("/proc")
    ask_kernel: bool = True

    def boot_id(self) -> str | None:
        try:
            text = (self.procfs / "sys/kernel/random/boot_id").read_text().strip()
        except OSError:
            return None
        digits = text.replace("-", "").lower()
        if len(digits) < _BOOT_ID_DIGITS or not re.fullmatch(r"[0-9a-f]+", digits):
            return None
        return digits[:_BOOT_ID_DIGITS]

    def start_ticks(self, pid: int) -> int | None:
        """/proc/PID/stat field 22, or None when there is no such process to read."""
        try:
            text = (self.procfs / str(pid) / "stat").read_text()
        except OSError:
            return None
        after_comm = text[text.rfind(")") + 1 :].split()
        index = _STARTTIME_FIELD - _STAT_FIELDS_BEFORE_COMM - 1
        if len(after_comm) <= index or not after_comm[index].isdigit():
            return None
        return int(after_comm[index])

    def pid_namespace(self, pid: int) -> int | None:
        """The inode in the /proc/PID/ns/pid link, "pid:[4026531836]" (namespaces(7))."""
        try:
            link = os.readlink(self.procfs / str(pid) / "ns" / "pid")
        except OSError:
            return None
        match = re.fullmatch(r"pid:\[([0-9]+)\]", link)
        return int(match.group(1)) if match else None

    def exists_hidden(self, pid: int) -> bool:
        """True when /proc does not show `pid` but the kernel says it exists."""
        if not self.ask_kernel:
            return False
        try:
            os.kill(pid, 0)
        except (ProcessLookupError, OverflowError):  # no such pid (or beyond any pid_t)
            return False
        except PermissionError:
            return True
        return True

    def owner(self, pid: int) -> Owner | None:
        boot = self.boot_id()
        start = self.start_ticks(pid)
        namespace = self.pid_namespace(pid)
        if boot is None or start is None or namespace is None:
            return None
        return Owner(pid=pid, start_ticks=start, boot_id=boot, pid_namespace=namespace)


_stamps: dict[int, str] = {}


def owner_stamp() -> str:
    """This process's stamp (pid, start, boot, pid namespace), read once per process.

    Raises EnvironmentProblem when /proc cannot tell it: without an owner a killed run's files
    could never be told from a live run's, and flashmark would rather not make them.
    """
    pid = os.getpid()  # keyed by pid: a forked child is another owner
    if pid not in _stamps:
        owner = ProcessTable().owner(pid)
        if owner is None:
            raise EnvironmentProblem(
                f"cannot read this process's start time and boot id from /proc/{pid}/stat and "
                "/proc/sys/kernel/random/boot_id, which name flashmark's temporary files: "
                "is /proc mounted?"
            )
        _stamps[pid] = owner.stamp()
    return _stamps[pid]


def test_file_name() -> str:
    """A new test file name (no folder), owned by this process."""
    return f".flashmark-{owner_stamp()}-{secrets.token_hex(_TOKEN_BYTES)}.tmp"


test_file_name.__test__ = False  # type: ignore[attr-defined]  # pytest: not a test


def private_folder_name() -> str:
    """A new private folder name (no parent), owned by this process."""
    return f".flashmark-{owner_stamp()}-{secrets.token_hex(_TOKEN_BYTES)}.d"


def work_folder_name(purpose: str) -> str:
    """A new work folder name (no parent), owned by this process; `purpose` is "fio" or
    "workload"."""
    if purpose not in _PURPOSE_KIND:
        raise ValueError(f"unknown work folder purpose {purpose!r}")
    return f"flashmark-{purpose}-{owner_stamp()}-{secrets.token_hex(_TOKEN_BYTES)}"


def make_work_folder(purpose: str, parent: Path | None = None) -> Path:
    """Create an owned work folder, mode 0700, in `parent` (default: the temp folder).

    For folders no other user can change (fio's, in a temp folder checked by
    fio_work_parent); in a target folder, flashmark.system.private_folder makes them. Raises OSError
    as os.mkdir does."""
    folder = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    while True:
        path = folder / work_folder_name(purpose)
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:  # 1 in 2**32 for this process; pick another token
            continue
        return path


@contextlib.contextmanager
def temporary_work_folder(purpose: str, parent: Path | None = None) -> Iterator[Path]:
    """`make_work_folder`, removed with everything in it on the way out."""
    path = make_work_folder(purpose, parent)
    try:
        yield path
    finally:
        # Not raising here: a folder that cannot be removed must not cost a finished run its
        # result, and its name lets `flashmark clean` find it later. Held: a signal in the
        # middle of the removal would leave the rest of the folder.
        with signals_held():
            shutil.rmtree(path, ignore_errors=True)


def leftover_folder(given: str | Path) -> Path:
    """The folder a run on `given` writes in: a folder itself, or a file's folder.

    Raises TargetNotFound, TargetPermissionDenied, or TargetError for anything else."""
    path = Path(given).expanduser()
    try:
        status = path.stat()
    except FileNotFoundError:
        raise TargetNotFound(f"{given}: no such folder: give the folder a run measured") from None
    except PermissionError:
        raise TargetPermissionDenied(
            f"{given}: permission denied (run as its owner, or with sudo)"
        ) from None
    if stat.S_ISDIR(status.st_mode):
        return path.resolve()
    if stat.S_ISREG(status.st_mode):
        return path.resolve().parent
    raise TargetError(
        f"{given}: not a folder; flashmark leaves files only in folders (a device holds none)"
    )


def find_leftovers(folder: Path, processes: ProcessTable) -> tuple[Leftover, ...]:
    """flashmark's entries directly in `folder`, each with its owner's state, sorted by name.

    Only a regular file (not a link) named like a test file, or a real folder named like a work
    folder, is one; anything else is not flashmark's. Raises TargetError (and subclasses) when
    the folder cannot be listed."""
    with _opened(folder) as descriptor:
        return _find(descriptor, Path(folder), _Judge(processes))


def clean_folders(
    folders: Iterable[Path], processes: ProcessTable, *, dry_run: bool = False
) -> CleanReport:
    """Find leftovers in each folder (each once) and remove those of dead owners.

    Live and unknown owners' entries are left. A failed removal is an outcome, not an error;
    a folder that cannot be listed raises (see find_leftovers). Each folder is opened once, and
    found and removed through that descriptor: a folder renamed or replaced by a link meanwhile
    cannot redirect a removal."""
    judge = _Judge(processes)
    unique = _unique_folders(folders)
    outcomes: list[Outcome] = []
    for folder in unique:
        with _opened(folder) as descriptor:
            for leftover in _find(descriptor, folder, judge):
                if leftover.state is not OwnerState.DEAD:
                    outcomes.append(Outcome(leftover, Action.LEFT))
                elif dry_run:
                    outcomes.append(Outcome(leftover, Action.WOULD_REMOVE))
                else:
                    outcomes.append(_remove(descriptor, leftover))
    return CleanReport(folders=unique, outcomes=tuple(outcomes), dry_run=dry_run)


# -- judging owners ----------------------------------------------------------------------------
class _Judge:
    def __init__(self, processes: ProcessTable) -> None:
        self.processes = processes
        self.boot_id = processes.boot_id()
        self.pid_namespace = processes.pid_namespace(os.getpid())

    def owner(self, owner: Owner) -> tuple[OwnerState, str]:
        if self.boot_id is None:
            return OwnerState.UNKNOWN, "this machine's boot id cannot be read from /proc"
        if owner.boot_id != self.boot_id:
            return OwnerState.DEAD, "made before the machine last started"
        if owner.pid_namespace != self.pid_namespace:
            return OwnerState.UNKNOWN, (
                f"made in another pid namespace (a container?), where pid {owner.pid} "
                "cannot be checked from here"
            )
        start = self.processes.start_ticks(owner.pid)
        if start is None:
            if self.processes.exists_hidden(owner.pid):
                return OwnerState.UNKNOWN, f"pid {owner.pid} exists but /proc hides it"
            return OwnerState.DEAD, f"pid {owner.pid} is no longer running"
        if start != owner.start_ticks:
            return OwnerState.DEAD, (
                f"pid {owner.pid} is no longer running (the pid now belongs to another process)"
            )
        return OwnerState.ALIVE, f"pid {owner.pid} is still running"

    def legacy_pid(self, pid: int) -> tuple[OwnerState, str]:
        if self.processes.start_ticks(pid) is None and not self.processes.exists_hidden(pid):
            return OwnerState.DEAD, f"pid {pid} is no longer running"
        return OwnerState.UNKNOWN, (
            f"pid {pid} is running; older flashmark names record no start time, so it may be "
            "the run that made it"
        )


@contextlib.contextmanager
def _opened(folder: Path) -> Iterator[int]:
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise TargetNotFound(f"{folder}: no such folder") from None
    except NotADirectoryError:
        raise TargetError(f"{folder}: not a folder") from None
    except OSError as error:
        raise _unusable("open", folder, error) from None
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def _find(descriptor: int, folder: Path, judge: _Judge) -> tuple[Leftover, ...]:
    found = []
    try:
        with os.scandir(descriptor) as entries:
            for entry in entries:
                leftover = _leftover(descriptor, folder, entry, judge)
                if leftover is not None:
                    found.append(leftover)
    except OSError as error:
        raise _unusable("list", folder, error) from None
    return tuple(sorted(found, key=lambda leftover: leftover.path.name))


def _unusable(verb: str, folder: Path, error: OSError) -> TargetError:
    if isinstance(error, PermissionError):
        return TargetPermissionDenied(
            f"cannot {verb} {folder}: permission denied (run as its owner, or with sudo)"
        )
    return TargetError(f"cannot {verb} {folder}: {_describe(error)}")


def _leftover(
    descriptor: int, folder: Path, entry: os.DirEntry[str], judge: _Judge
) -> Leftover | None:
    name = entry.name
    try:
        is_file = entry.is_file(follow_symlinks=False)
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError:
        return None
    kind: LeftoverKind
    owner: Owner | None = None
    pid: int | None = None
    if is_file and (match := _TEST_FILE.fullmatch(name)):
        kind, owner = LeftoverKind.TEST_FILE, _owner_of(match)
    elif is_dir and (match := _PRIVATE_FOLDER.fullmatch(name)):
        kind, owner = LeftoverKind.PRIVATE_FOLDER, _owner_of(match)
    elif is_dir and (match := _WORK_FOLDER.fullmatch(name)):
        kind, owner = _PURPOSE_KIND[match.group("purpose")], _owner_of(match)
    elif is_file and (match := _LEGACY_TEST_FILE.fullmatch(name)):
        kind, pid = LeftoverKind.TEST_FILE, int(match.group("pid"))
    elif is_dir and (match := _LEGACY_WORK_FOLDER.fullmatch(name)):
        kind = _PURPOSE_KIND[match.group("purpose")]
    else:
        return None
    if owner is not None:
        pid = owner.pid
        state, reason = judge.owner(owner)
    elif pid is not None:
        state, reason = judge.legacy_pid(pid)
    else:
        state, reason = (
            OwnerState.UNKNOWN,
            (
                "made by an older flashmark, which did not record its owner; remove it by hand "
                "when no flashmark is running"
            ),
        )
    return Leftover(
        path=folder / name,
        kind=kind,
        pid=pid,
        owner=owner,
        state=state,
        reason=reason,
        size_bytes=_size(descriptor, entry, is_dir),
    )


def _owner_of(match: re.Match[str]) -> Owner:
    return Owner(
        pid=int(match.group("pid")),
        start_ticks=int(match.group("start"), 16),
        boot_id=match.group("boot"),
        pid_namespace=int(match.group("pidns"), 16),
    )


def _size(descriptor: int, entry: os.DirEntry[str], is_dir: bool) -> int | None:
    try:
        if not is_dir:
            return entry.stat(follow_symlinks=False).st_size
        total = 0
        for _root, _folders, files, root_fd in os.fwalk(
            entry.name, dir_fd=descriptor, onerror=_raise
        ):
            for name in files:
                total += os.stat(name, dir_fd=root_fd, follow_symlinks=False).st_size
        return total
    except OSError:
        return None


def _raise(error: OSError) -> None:
    raise error


# -- removing ----------------------------------------------------------------------------------
def _unique_folders(folders: Iterable[Path]) -> tuple[Path, ...]:
    seen: set[tuple[int, int]] = set()
    unique: list[Path] = []
    for folder in folders:
        try:
            status = os.stat(folder)
        except OSError:
            unique.append(Path(folder))  # find_leftovers says what is wrong with it
            continue
        key = (status.st_dev, status.st_ino)
        if key not in seen:
            seen.add(key)
            unique.append(Path(folder))
    return tuple(unique)


def _remove(folder_fd: int, leftover: Leftover) -> Outcome:
    """Remove by name relative to the folder's descriptor; rmtree never follows links inside."""
    name = leftover.path.name
    try:
        status = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        if leftover.kind is LeftoverKind.TEST_FILE:
            if not stat.S_ISREG(status.st_mode):
                return Outcome(leftover, Action.LEFT, "replaced by something else since the scan")
            os.unlink(name, dir_fd=folder_fd)
        else:
            if not stat.S_ISDIR(status.st_mode):
                return Outcome(leftover, Action.LEFT, "replaced by something else since the scan")
            shutil.rmtree(name, dir_fd=folder_fd)
    except FileNotFoundError:
        pass  # gone already (a second clean at the same time): that is what was wanted
    except OSError as error:
        return Outcome(leftover, Action.FAILED, _describe(error), error.errno)
    return Outcome(leftover, Action.REMOVED)


def _describe(error: OSError) -> str:
    return error.strerror or str(error)
