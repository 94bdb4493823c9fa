"""Running workloads in a folder: setup, timing, monitoring, and removing everything after.

Workloads run in order in one private folder (flashmark.system.private_folder) and share its
state: `pkg-remove` removes what `pkg-install` put there, `pkg-reinstall` installs it again. A
workload run alone first builds its starting state quickly (no fsync, one syncfs) and untimed,
so it measures the same operations either way.
"""

from __future__ import annotations

import errno
import functools
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flashmark.errors import (
    DeviceFailed,
    NotEnoughSpace,
    ReadOnlyTarget,
    TargetError,
    TargetNotFound,
    TargetPermissionDenied,
    UsageError,
)
from flashmark.monitor.sampler import DiskMonitor, optional_monitor
from flashmark.system.disk_space import SpacePlan, SpaceWatch, plan_space, reserve_bytes
from flashmark.system.diskstats import device_for_path
from flashmark.system.leftovers import work_folder_name
from flashmark.system.private_folder import (
    PrivateFolder,
    make_private_folder,
    open_checked_folder,
    refuse_foreign_links,
    remove_private_folder,
)
from flashmark.system.signals import signals_held
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import held, refuse_if_busy
from flashmark.units import format_size
from flashmark.workloads import cold_read, dpkg
from flashmark.workloads.needs import SPACE_MARGIN_BYTES, check_room, workload_needs
from flashmark.workloads.packages import (
    DEFAULT_SEED,
    PackageSet,
    SyntheticFile,
    boot_file_set,
    generate_package_set,
)
from flashmark.workloads.result import WORKLOAD_NAMES, PhaseTime, WorkloadCounts, WorkloadResult

DESCRIPTIONS = {
    "pkg-install": "install a desktop's packages as apt and dpkg do (seed 002's 1st install)",
    "pkg-remove": "purge the autoremove subset with dpkg's metadata updates (DE removal)",
    "pkg-reinstall": "install the removed subset again from cached archives (2nd install)",
    "cold-read": "drop the page cache and read a boot-like set of files (boot)",
}

Progress = Callable[[float], None]


class UnknownWorkload(UsageError):
    pass


def run_workloads(
    names: Sequence[str],
    folder: Path,
    *,
    scale: float = 1.0,
    roots: SystemRoots,
    progress: Progress | None = None,
    interval_s: float = 1.0,
    seed: int = DEFAULT_SEED,
    random_write_iops: float | None = None,
    say_space: Callable[[str], None] | None = None,
) -> tuple[WorkloadResult, ...]:
    """Run workloads in order, sharing one folder (see module doc); always removes it.

    `random_write_iops`, the device's measured 4K random-write IOPS when known (`flashmark
    run` measures it first), lets the monitor say how close the workload came to it.
    `say_space` is given the `space` line (where they write, how much) once the checks passed,
    before anything is written."""
    names = tuple(names)
    for name in names:
        if name not in WORKLOAD_NAMES:
            raise UnknownWorkload(
                f"unknown workload {name!r}: choose from {', '.join(WORKLOAD_NAMES)} or all"
            )
    if len(set(names)) != len(names):
        raise UsageError(f"each workload can run once per call, got {', '.join(names)}")
    if not scale > 0:
        raise UsageError(f"--scale must be larger than zero, got {scale}")
    folder, identity = _check_folder(folder)
    try:  # the folder may be moved away by another user at any moment until it is open
        # A scale far too large for the disk would take long just to generate: estimate first.
        _check_space(folder, scale, _needed_bytes(names, *_full_scale_bytes(seed)) * scale)
        package_set = generate_package_set(scale, seed)
        boot_files = boot_file_set(scale, seed) if "cold-read" in names else ()
        check_room(folder, names, scale, option="--scale", seed=seed)  # bytes and inodes
        # Read again before each workload: another writer filling the disk meanwhile stops them.
        space = workloads_space(names, folder, scale, roots, seed)
        watch = SpaceWatch(space)
        if say_space is not None:
            say_space(space.line())
        device = device_for_path(folder, roots)
    except OSError as error:
        raise _target_error(error, folder) from error
    with signals_held():  # a signal in between would leak the descriptor
        try:
            folder_fd = open_checked_folder(str(folder), identity)
        except OSError as error:
            raise _target_error(error, folder) from error
    try:
        # One flashmark per device (flashmark.system.target_lock), from before the first write.
        with held(folder_fd, str(folder)):

            def session_in(private: PrivateFolder) -> _Session:
                share = _ProgressShare(progress, len(names))
                return _Session(
                    private, package_set, boot_files, roots, device, interval_s, seed, share,
                    random_write_iops,
                )  # fmt: skip

            return _run_in_private_folder(names, folder, folder_fd, session_in, watch.check)
    finally:
        os.close(folder_fd)


def _run_in_private_folder(
    names: tuple[str, ...],
    folder: Path,
    folder_fd: int,
    session_in: Callable[[PrivateFolder], _Session],
    before_each: Callable[[], None],
) -> tuple[WorkloadResult, ...]:
    """The workloads in a new private folder of `folder`, always removed afterwards;
    `before_each` runs before each (it raises to stop them)."""
    private: PrivateFolder | None = None
    try:
        # Held: a signal waits until the folder exists and is named here, to be removed below.
        with signals_held():
            try:
                private = make_private_folder(folder_fd, str(folder), work_folder_name("workload"))
            except OSError as error:
                raise _target_error(error, folder) from error
        session = session_in(private)
        results = []
        for name in names:
            before_each()
            results.append(session.run(name))
    except BaseException:
        if private is not None:
            with signals_held():
                remove_private_folder(folder_fd, private)
        raise
    # Held: a signal in the middle of the removal would leave the rest of the folder.
    with signals_held():
        failure = remove_private_folder(folder_fd, private)
    if failure is not None:
        raise TargetError(
            f"the workloads finished but {private.shown} could not be removed: {failure}; "
            "remove it by hand"
        ) from failure
    return tuple(results)


def workloads_space(
    names: Sequence[str], folder: Path, scale: float, roots: SystemRoots,
    seed: int = DEFAULT_SEED,
) -> SpacePlan:  # fmt: skip
    """What the workloads write in `folder`'s filesystem at most, and its reserve
    (flashmark.system.disk_space): the `space` line said before they run."""
    return plan_space(folder, workload_needs(tuple(names), scale, seed).bytes, roots)


def _check_folder(folder: Path) -> tuple[Path, tuple[int, int]]:
    """The folder, resolved, and its (st_dev, st_ino): the folder opened later must be this
    one (FolderReplaced otherwise)."""
    refuse_foreign_links(str(folder))
    if not folder.exists():
        raise TargetNotFound(f"{folder} does not exist: give an existing folder as TARGET")
    if not folder.is_dir():
        raise TargetError(
            f"{folder} is not a folder: workloads run on a mounted filesystem; mount the "
            "device and give the folder it is mounted on"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise TargetPermissionDenied(
            f"cannot write in {folder}: choose a folder you can write to, or use sudo"
        )
    resolved = folder.resolve()
    status = resolved.stat()
    refuse_if_busy(str(resolved))  # before the space checks: a run there holds space too
    return resolved, (status.st_dev, status.st_ino)


@functools.lru_cache(maxsize=4)
def _full_scale_bytes(seed: int) -> tuple[int, int]:
    """Bytes the packages (installed + archives) and the boot set take at scale 1."""
    package_set = generate_package_set(1.0, seed)
    return package_set.installed_bytes + package_set.archive_bytes, _total(boot_file_set(1.0, seed))


def _total(files: tuple[SyntheticFile, ...]) -> int:
    return sum(f.size_bytes for f in files)


def _needed_bytes(names: tuple[str, ...], packages_bytes: float, boot_bytes: float) -> float:
    needed = boot_bytes if "cold-read" in names else 0.0
    if any(name.startswith("pkg-") for name in names):
        needed += packages_bytes
    return needed


def _check_space(folder: Path, scale: float, needed_bytes: float) -> None:
    needed = needed_bytes + SPACE_MARGIN_BYTES
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    room = free - reserve_bytes(stats.f_blocks * stats.f_frsize)  # always left free
    if needed > room:
        fitting = scale * (room - SPACE_MARGIN_BYTES) / needed_bytes * 0.9
        raise NotEnoughSpace(
            f"the workloads need about {format_size(int(needed))} in {folder} but "
            f"{format_size(free)} is free, of which flashmark always leaves "
            f"{format_size(free - room)}: free some space or use --scale {max(fitting, 0):.2g}"
        )


def _target_error(error: OSError, place: Path) -> Exception:
    """The flashmark error for an OSError hit while writing the workload's files."""
    where = f"{place}: {error.strerror or error}"
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return TargetNotFound.moved(place)
    if error.errno == errno.ENOSPC:
        return NotEnoughSpace(f"the filesystem {_full_of(place)} at {where}; free some space")
    if error.errno == errno.EROFS:
        return ReadOnlyTarget(f"read-only filesystem at {where}; remount it read-write")
    if error.errno in (errno.EACCES, errno.EPERM):
        return TargetPermissionDenied(f"permission denied at {where}; use a writable folder")
    if error.errno == errno.EIO:
        return DeviceFailed(f"I/O error at {where}: the device may be failing (see dmesg)")
    return error


def _full_of(place: Path) -> str:
    """What ran out: the inodes (files) or the space (ENOSPC says either)."""
    try:
        stats = os.statvfs(place if place.is_dir() else place.parent)
    except OSError:
        return "filled up"
    return "ran out of inodes (files)" if stats.f_files and not stats.f_favail else "filled up"


class _ProgressShare:
    """Maps each workload's own 0..1 progress onto an equal share of the whole call."""

    def __init__(self, progress: Progress | None, parts: int) -> None:
        self._progress = progress
        self._parts = max(1, parts)
        self._index = 0
        self._last = -1.0

    def begin(self, index: int) -> None:
        self._index = index
        self.update(0.0)

    def update(self, fraction: float) -> None:
        if self._progress is None:
            return
        overall = (self._index + min(max(fraction, 0.0), 1.0)) / self._parts
        if overall - self._last >= 0.002 or fraction >= 1.0:  # a few hundred calls at most
            self._last = overall
            self._progress(overall)

    def steps(self, total: int) -> Callable[[], None]:
        """What to call after each of the workload's `total` steps: its progress moves one."""
        done = 0

        def step() -> None:
            nonlocal done
            done += 1
            self.update(done / total)

        return step


@dataclass
class _Timer:
    monitor: DiskMonitor | None
    phases: list[PhaseTime] = field(default_factory=list)
    _current: tuple[str, float] | None = None

    def phase(self, name: str) -> None:
        now = time.perf_counter()
        if self._current is not None:
            self.phases.append(PhaseTime(self._current[0], now - self._current[1]))
        self._current = (name, now)
        if self.monitor is not None:
            self.monitor.mark(name)

    def finish(self) -> None:
        if self._current is not None:
            now = time.perf_counter()
            self.phases.append(PhaseTime(self._current[0], now - self._current[1]))
            self._current = None


@dataclass(eq=False)
class _Session:
    private: PrivateFolder
    package_set: PackageSet
    boot_files: tuple[SyntheticFile, ...]
    roots: SystemRoots
    device: str | None
    interval_s: float
    seed: int
    progress: _ProgressShare
    random_write_iops: float | None = None
    installed: set[int] = field(default_factory=set, init=False)
    cached: set[int] = field(default_factory=set, init=False)  # archives in the apt cache
    status: dpkg.StatusDatabase | None = field(default=None, init=False)
    _index: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.workdir = self.private.path  # through the descriptor: no name to swap (private_folder)
        self.shown = Path(self.private.shown)  # for messages
        self.pool = dpkg.ContentPool(self.seed)
        self.layout = dpkg.Layout(self.workdir / "root")

    def run(self, name: str) -> WorkloadResult:
        self.progress.begin(self._index)
        self._index += 1
        if name == "cold-read":
            return self._cold_read()
        setup = {"pkg-install": self._setup_install, "pkg-remove": self._setup_remove,
                 "pkg-reinstall": self._setup_reinstall}[name]  # fmt: skip
        body = {"pkg-install": self._install, "pkg-remove": self._remove,
                "pkg-reinstall": self._reinstall}[name]  # fmt: skip
        setup_started = time.perf_counter()
        try:
            setup()
        except OSError as error:
            raise _target_error(error, self.shown) from error
        setup_seconds = time.perf_counter() - setup_started
        return self._timed(name, body, setup_seconds)

    def _timed(
        self,
        name: str,
        body: Callable[[dpkg.Counters, _Timer], None],
        setup_seconds: float,
    ) -> WorkloadResult:
        counters = dpkg.Counters()
        with optional_monitor(
            self.device, self.roots, self.interval_s, random_write_iops=self.random_write_iops
        ) as monitor:
            timer = _Timer(monitor)
            started = time.perf_counter()
            try:
                body(counters, timer)
            except OSError as error:
                raise _target_error(error, self.shown) from error
            seconds = time.perf_counter() - started
            timer.finish()
        self.progress.update(1.0)
        return WorkloadResult(
            name=name,
            seconds=seconds,
            skipped=None,
            scale=self.package_set.scale,
            seed=self.seed,
            counts=_freeze(counters),
            phases=tuple(timer.phases),
            setup_seconds=setup_seconds,
            device=self.device,
            monitor=None if monitor is None else monitor.series(),
            description=DESCRIPTIONS[name],
        )

    # -- state --------------------------------------------------------------------------------
    def _status(self) -> dpkg.StatusDatabase:
        if self.status is None:
            self.layout.create()
            stanzas = self.package_set.base_packages + len(self.package_set.packages)
            self.status = dpkg.StatusDatabase(self.layout, self.pool, stanzas)
            self.status.write_initial(dpkg.Counters())
        return self.status

    def _quick_install(self, indexes: Sequence[int]) -> None:
        status = self._status()
        scratch = dpkg.Counters()
        for index in indexes:
            if index not in self.installed:
                package = self.package_set.packages[index]
                dpkg.unpack(self.layout, self.pool, status, package, scratch, safe=False)
                self.installed.add(index)

    def _quick_remove(self, indexes: Sequence[int]) -> None:
        for index in indexes:
            if index in self.installed:
                package = self.package_set.packages[index]
                for entry in package.files:
                    (self.layout.root / entry.path).unlink()
                for suffix in (".list", ".md5sums"):
                    (self.layout.info / f"{package.name}{suffix}").unlink(missing_ok=True)
                self.installed.discard(index)

    def _quick_download(self, indexes: Sequence[int]) -> None:
        self._status()
        scratch = dpkg.Counters()
        for index in indexes:
            if index not in self.cached:
                dpkg.download(self.layout, self.pool, self.package_set.packages[index], scratch)
                self.cached.add(index)

    # -- pkg-install --------------------------------------------------------------------------
    def _setup_install(self) -> None:
        self._quick_remove(sorted(self.installed))
        self._status()
        dpkg.syncfs(self.workdir)

    def _install(self, counters: dpkg.Counters, timer: _Timer) -> None:
        indexes = range(len(self.package_set.packages))
        self._install_packages(indexes, counters, timer, download=True)

    def _install_packages(
        self, indexes: Sequence[int], counters: dpkg.Counters, timer: _Timer, *, download: bool
    ) -> None:
        status = self._status()
        packages = [self.package_set.packages[i] for i in indexes]
        step = self.progress.steps(len(packages) * (3 if download else 2))
        if download:
            timer.phase("download")
            for index, package in zip(indexes, packages, strict=True):
                if index not in self.cached:
                    dpkg.download(self.layout, self.pool, package, counters)
                    self.cached.add(index)
                step()
        timer.phase("unpack")
        for index, package in zip(indexes, packages, strict=True):
            dpkg.unpack(self.layout, self.pool, status, package, counters)
            self.installed.add(index)
            step()
        timer.phase("configure")
        for package in packages:
            dpkg.configure(status, package, counters)
            step()

    # -- pkg-remove ---------------------------------------------------------------------------
    def _setup_remove(self) -> None:
        self._quick_install(self.package_set.removed)
        dpkg.syncfs(self.workdir)

    def _remove(self, counters: dpkg.Counters, timer: _Timer) -> None:
        status = self._status()
        timer.phase("purge")
        for done, index in enumerate(self.package_set.removed, start=1):
            dpkg.purge(self.layout, status, self.package_set.packages[index], counters)
            self.installed.discard(index)
            self.progress.update(done / len(self.package_set.removed))

    # -- pkg-reinstall ------------------------------------------------------------------------
    def _setup_reinstall(self) -> None:
        self._quick_remove(self.package_set.removed)
        self._quick_download(self.package_set.removed)
        dpkg.syncfs(self.workdir)

    def _reinstall(self, counters: dpkg.Counters, timer: _Timer) -> None:
        self._install_packages(self.package_set.removed, counters, timer, download=False)

    # -- cold-read ----------------------------------------------------------------------------
    def _cold_read(self) -> WorkloadResult:
        reason = cold_read.drop_caches_problem(self.roots)
        if reason is not None:
            return WorkloadResult(
                name="cold-read", seconds=None, skipped=reason, scale=self.package_set.scale,
                seed=self.seed, counts=WorkloadCounts(), phases=(), setup_seconds=0.0,
                device=self.device, monitor=None, description=DESCRIPTIONS["cold-read"],
            )  # fmt: skip
        root = self.workdir / "boot"
        started = time.perf_counter()
        try:
            cold_read.prepare(root, self.boot_files, self.pool, dpkg.Counters())
            cold_read.drop_caches(self.roots, self.workdir)
        except OSError as error:
            raise _target_error(error, self.shown / "boot") from error
        setup_seconds = time.perf_counter() - started
        step = self.progress.steps(len(self.boot_files))

        def body(counters: dpkg.Counters, timer: _Timer) -> None:
            timer.phase("read")
            cold_read.read_all(root, self.boot_files, counters, step)

        return self._timed("cold-read", body, setup_seconds)


def _freeze(counters: dpkg.Counters) -> WorkloadCounts:
    return WorkloadCounts(**vars(counters))
