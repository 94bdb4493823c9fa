"""One flashmark at a time per device, so that no run measures another's I/O.

Two folders of one card share its I/O, so the lock belongs to the disk under the target, not to
the target: a measuring command holds, from before its first write until its last, an exclusive
flock(2) on a lock file per device its I/O goes through (devices_under.py: the target's device,
what it is built on, a loop image's filesystem and its disk, down to the disks), named by the
device's number in flashmark's shared lock folder (lock_files.py, which also says why that is
safe against other users). A lock file and not the device node, because a user's folder run
cannot open the node, and a root run and a user's run must exclude each other. Named by the
device's number and not by its identity (device_identity.py), because every user reads the
same number from sysfs, while a loop device's identity needs its backing file, which a user may
not reach; a number names one device for as long as it is attached, which is as long as a lock
matters. It also holds the folder's descriptor or the device node itself, as flashmark did
before it locked devices, so that a flashmark of that time is excluded as well.

The kernel drops every lock when the holder ends, even by SIGKILL. A second run refuses at once
(TargetBusy, exit 4), naming the holder's pid from /proc/locks (proc(5)) and its command line
from /proc/PID/cmdline: what `ps` shows this user, nothing when /proc hides it (hidepid). What
only looks whether a device is measured (`flashmark health`) finds the holder in /proc/locks
too, never by taking a lock, which would refuse a run starting in that instant. A lock this
process already holds is held once more; a filesystem without flock leaves its folder unlocked
(its devices are still locked). A lock folder or file that cannot be used stops the run
(LockUnusable): no run goes on unlocked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import TargetError, printable
from flashmark.system.devices_under import Underlying, devices_under
from flashmark.system.lock_files import (
    lock_folder_path,
    open_lock_file,
    open_lock_folder,
    still_named,
)

_PROC = Path("/proc")
_PROC_LOCKS = _PROC / "locks"
# errno values of a filesystem that has no flock to offer (nfs(5) emulates it with byte-range
# locks, which need a descriptor open for writing: EBADF on a folder).
_NO_FLOCK = {errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP, errno.EBADF}
_COMMAND_CHARS = 160  # a holder's command line is cut here: the message stays one line
_ATTEMPTS = 5  # a lock file removed while it was being locked is opened again


class TargetBusy(TargetError):
    """Another flashmark (or another program) holds the folder or device."""


# What this process holds, and how many times: a device by its number (with its lock file's
# descriptor), a folder or node by (st_dev, st_ino).
_devices: dict[str, tuple[int, int]] = {}
_files: dict[tuple[int, int], int] = {}
_held_lock = threading.Lock()


@contextlib.contextmanager
def held(descriptor: int, shown: str) -> Iterator[None]:
    """Hold every device under the open file `descriptor` (a folder or a device node), and
    the file itself, for the block; TargetBusy at once when another process holds one. The
    descriptor stays the caller's: closing it releases its own lock."""
    status = os.fstat(descriptor)
    with devices_held(status, shown), _file_held(descriptor, status, shown):
        yield


@contextlib.contextmanager
def held_path(path: str, shown: str | None = None) -> Iterator[None]:
    """`held` on `path` (a device node or a folder), opened read-only for the block."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        with held(descriptor, shown or path):
            yield
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def devices_held(status: os.stat_result, shown: str) -> Iterator[None]:
    """Hold the devices under the file of `status` (a folder, a file, a device node) for the
    block, without keeping it open: for a device whose power is cut meanwhile (an open node
    would keep it from going, or from coming back under its name)."""
    with contextlib.ExitStack() as stack:
        # Nearest first: a refusal names the device the two targets share that is nearest to
        # them (the card, not the disk its image file is on). Never waiting, no order can
        # deadlock.
        for device in devices_under(status):
            stack.enter_context(_device_held(device, shown))
        yield


def device_held(node: str) -> contextlib.AbstractContextManager[None]:
    """`devices_held` for the device node `node`, which is not kept open."""
    try:
        status = os.stat(node)
    except OSError as error:
        raise TargetError(f"{printable(node)}: cannot read the device: {error.strerror}") from None
    return devices_held(status, node)


def refuse_if_busy(path: str, shown: str | None = None) -> None:
    """TargetBusy now when another process holds `path` or a device under it: said before
    anything else about the target (a held folder's free space is the other run's test file).
    The hold that counts is taken later, from before the first write (`held`)."""
    with held_path(path, shown):
        pass


@dataclass(frozen=True)
class Measurer:
    """A process holding the lock of a device under a target: a flashmark measuring it."""

    pid: int | None  # None when /proc/locks does not tell it (another pid namespace)
    device: str  # the device it holds, as a message names it ("disk vda")

    def __str__(self) -> str:
        """'flashmark (pid 1234)', or 'another flashmark' without its pid."""
        return f"flashmark (pid {self.pid})" if self.pid is not None else "another flashmark"


def measured_by(path: str) -> Measurer | None:
    """Who holds a device under `path` (the nearest), or None: no other process does, or
    `path` does not exist. It looks in /proc/locks and takes no lock itself, so a run starting
    at that instant is never refused because of the look; what cannot be told (an unreadable
    /proc/locks) counts as not held."""
    try:
        devices = devices_under(os.stat(path))
    except OSError:
        return None
    for device in devices:
        if device.majmin in _devices:
            continue  # this process's own hold
        try:
            status = os.lstat(lock_folder_path() / (device.majmin + ".lock"))
        except OSError:
            continue  # no lock file: never locked since the folder was made
        pids = _flock_pids(status)
        if pids:
            return Measurer(next((pid for pid in pids if pid > 0), None), device.label)
    return None


def wait_while_measured(
    path: str, bound_s: float, waiting: Callable[[str], None], poll_s: float = 1.0
) -> None:
    """Return once no flashmark holds a device under `path`, for a reading that must not fall
    inside a run (`flashmark health --record`): `waiting` is told once who holds it; TargetBusy
    when it is still held after `bound_s`. It looks through `measured_by`, which takes no lock,
    so it never keeps a run from starting; a run that starts right after it returns is not
    waited for. A path that does not exist has no lock to wait for (the reading says it is
    missing)."""
    deadline = time.monotonic() + bound_s
    said = False
    while True:
        measurer = measured_by(path)
        if measurer is None:
            return
        holder = f"{_described(measurer.pid, 'flashmark')} on the same {measurer.device}"
        if not said:
            waiting(f"{printable(path)} is being measured by {holder}: waiting for it to end")
            said = True
        left = deadline - time.monotonic()
        if left <= 0:
            raise TargetBusy(
                f"{printable(path)} is still being measured by {holder} after "
                f"{_duration(bound_s)}: no reading taken (one taken now would count that "
                "run's writes as the device's own)"
            )
        time.sleep(min(poll_s, left))


def _duration(seconds: float) -> str:
    return f"{seconds:g} seconds" if seconds < 60 else f"{seconds / 60:g} minutes"


@contextlib.contextmanager
def _device_held(device: Underlying, shown: str) -> Iterator[None]:
    with _held_lock:
        if device.majmin in _devices:
            lock_file, count = _devices[device.majmin]
            _devices[device.majmin] = (lock_file, count + 1)
        else:
            _devices[device.majmin] = (_lock_device(device, shown), 1)
    try:
        yield
    finally:
        with _held_lock:
            lock_file, count = _devices.pop(device.majmin)
            if count > 1:
                _devices[device.majmin] = (lock_file, count - 1)
            else:
                os.close(lock_file)  # the kernel drops the flock with its last descriptor


def _lock_device(device: Underlying, shown: str) -> int:
    """The lock file of `device`, open and locked; TargetBusy when another process holds it."""
    name = device.majmin + ".lock"
    folder, folder_path = open_lock_folder()
    try:
        for _ in range(_ATTEMPTS):
            lock_file = open_lock_file(folder, folder_path, name)
            try:
                fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = holder_pid(os.fstat(lock_file))
                os.close(lock_file)
                raise TargetBusy(
                    f"{printable(shown)} is being measured by {_described(holder, 'flashmark')} "
                    f"on the same {device.label}: two runs would each measure the other's "
                    "I/O; wait until it ends, or stop it"
                ) from None
            except BaseException:
                os.close(lock_file)
                raise
            if still_named(folder, name, lock_file):
                return lock_file
            os.close(lock_file)  # removed meanwhile: lock the file that has the name now
        raise TargetBusy(f"{printable(str(folder_path / name))} keeps being replaced; run again")
    finally:
        os.close(folder)


@contextlib.contextmanager
def _file_held(descriptor: int, status: os.stat_result, shown: str) -> Iterator[None]:
    key = (status.st_dev, status.st_ino)
    with _held_lock:
        if key in _files:
            _files[key] += 1
            locked = False
        else:
            locked = _lock_file(descriptor, status, shown)
            _files[key] = 1
    try:
        yield
    finally:
        with _held_lock:
            _files[key] -= 1
            if not _files[key]:
                del _files[key]
                if locked:
                    with contextlib.suppress(OSError):
                        fcntl.flock(descriptor, fcntl.LOCK_UN)


def _lock_file(descriptor: int, status: os.stat_result, shown: str) -> bool:
    """True when locked; False when this filesystem has no flock."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = holder_pid(status)
        raise TargetBusy(
            f"{printable(shown)} is being measured by {_described(holder, 'program')}: two "
            "runs would each measure the other's I/O; wait until it ends, or stop it"
        ) from None
    except OSError as error:
        if error.errno in _NO_FLOCK:
            return False
        raise
    return True


def _described(pid: int | None, unknown: str) -> str:
    """The holder as a message names it: "another flashmark (pid 1234, flashmark run
    /mnt/card/one)", without the command when /proc hides it, "another UNKNOWN" without a pid."""
    if pid is None:
        return f"another {unknown}"
    command = holder_command(pid)
    return f"another flashmark (pid {pid}{', ' + command if command else ''})"


def holder_command(pid: int, proc: Path = _PROC) -> str | None:
    """The command line of `pid` as `ps` shows it to this user, from "flashmark" on when it is
    one (`python -m flashmark run X` and `/opt/.../flashmark run X` both show "flashmark run
    X"), one line, cut to _COMMAND_CHARS; None when /proc does not show it."""
    try:
        raw = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    argv = [part.decode("utf-8", "replace") for part in raw.rstrip(b"\0").split(b"\0")]
    if not argv or not argv[0]:
        return None  # a kernel thread, or a process ending
    # The program, its script or its module: "flashmark", "python flashmark", "python -m flashmark".
    for index, part in enumerate(argv[:3]):
        if os.path.basename(part) == "flashmark":
            argv = ["flashmark", *argv[index + 1 :]]
            break
    else:
        argv[0] = os.path.basename(argv[0])
    command = printable(" ".join(argv))
    return command if len(command) <= _COMMAND_CHARS else command[: _COMMAND_CHARS - 1] + "…"


def holder_pid(status: os.stat_result, locks: Path = _PROC_LOCKS) -> int | None:
    """The pid holding a FLOCK lock on the file of `status`, from /proc/locks; None when it
    cannot be told (another pid namespace shows 0, a hidden /proc)."""
    return next((pid for pid in _flock_pids(status, locks) if pid > 0), None)


def _flock_pids(status: os.stat_result, locks: Path = _PROC_LOCKS) -> list[int]:
    """The pids of the FLOCK locks held on the file of `status`, from /proc/locks, e.g.
    "1: FLOCK  ADVISORY  WRITE 1234 08:02:131074 0 EOF" (device numbers in hex, proc(5)); 0 for
    a holder in another pid namespace; none when /proc/locks cannot be read."""
    wanted = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    try:
        text = locks.read_text()
    except OSError:
        return []
    pids = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":  # "->" marks a waiter, not a holder
            continue
        if fields[5] == wanted and fields[4].isdigit():
            pids.append(int(fields[4]))
    return pids
