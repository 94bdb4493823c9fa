"""What apt and dpkg do to a disk, system call by system call, on a synthetic package set:
dpkg 1.21 (Debian 12), src/main/archives.c and lib/dpkg/dbmodify.c. Per package: the archive
downloaded and renamed into the apt cache; every file written as NAME.dpkg-new with writeback
started (sync_file_range), then fsynced and renamed; the info files written and their folder
fsynced; every status change a fsynced update file, the status file rewritten every MAXUPDATES
notes. Maintainer scripts and triggers are not modelled. docs/workloads.md has the steps.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import zlib
from dataclasses import dataclass
from pathlib import Path

from flashmark.system.file_space import fsync_folder, libc_function
from flashmark.workloads.packages import STATUS_STANZA_BYTES, SyntheticFile, SyntheticPackage

MAXUPDATES = 250  # dpkg lib/dpkg/dpkg.h: status notes between two checkpoints
INSTALL_NOTES = ("half-installed", "unpacked", "half-configured", "installed")
PURGE_NOTES = ("half-installed", "config-files", "not-installed")
MD5SUMS_LINE_OVERHEAD = 32 + 2 + 1  # hex digest, two spaces, newline (md5sum's format)
_CHUNK = 1024 * 1024
_POOL_BYTES = 4 * 1024 * 1024

# <linux/fs.h>: sync_file_range flags
SYNC_FILE_RANGE_WAIT_BEFORE = 1
SYNC_FILE_RANGE_WRITE = 2


def sync_file_range(fd: int, flags: int) -> bool:
    """sync_file_range(fd, 0, 0, flags) (Python's os lacks it); False when unavailable."""
    function = libc_function("sync_file_range")
    if function is None:
        return False
    result = function(ctypes.c_int(fd), ctypes.c_int64(0), ctypes.c_int64(0), ctypes.c_uint(flags))
    return int(result) == 0


def syncfs(path: Path) -> None:
    """Flush one filesystem (not the whole machine) when the C library offers syncfs(2)."""
    function = libc_function("syncfs")
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if function is None or int(function(ctypes.c_int(fd))) != 0:
            os.sync()
    finally:
        os.close(fd)


class Counters:
    """Running totals of one workload (mutable inside a workload, frozen in the result)."""

    def __init__(self) -> None:
        self.packages = 0
        self.files_written = 0
        self.files_removed = 0
        self.files_read = 0
        self.bytes_written = 0
        self.bytes_read = 0
        self.fsyncs = 0
        self.renames = 0
        self.status_notes = 0
        self.checkpoints = 0


class ContentPool:
    """Deterministic incompressible bytes: slices of a seeded 4 MiB random block."""

    def __init__(self, seed: int) -> None:
        block = random.Random(seed).randbytes(_POOL_BYTES)
        self._doubled = memoryview(block + block)  # any slice up to 4 MiB is contiguous

    def write(self, fd: int, size: int, key: int) -> None:
        offset = key % _POOL_BYTES
        remaining = size
        while remaining > 0:
            length = min(remaining, _POOL_BYTES, _CHUNK)
            written = os.write(fd, self._doubled[offset : offset + length])
            remaining -= written
            offset = (offset + written) % _POOL_BYTES


def write_file(
    pool: ContentPool,
    path: Path,
    size: int,
    key: int,
    counters: Counters,
    *,
    fsync: bool,
) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        pool.write(fd, size, key)
        if fsync:
            os.fsync(fd)
            counters.fsyncs += 1
    finally:
        os.close(fd)
    counters.files_written += 1
    counters.bytes_written += size


def write_atomically(pool: ContentPool, path: Path, size: int, key: int, c: Counters) -> None:
    """dpkg's atomic_file: write PATH-new, fsync, rename over PATH."""
    temporary = path.with_name(path.name + "-new")
    write_file(pool, temporary, size, key, c, fsync=True)
    os.replace(temporary, path)
    c.renames += 1


def read_file(path: Path, counters: Counters) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        while True:
            data = os.read(fd, _CHUNK)
            if not data:
                break
            counters.bytes_read += len(data)
    finally:
        os.close(fd)
    counters.files_read += 1


@dataclass(frozen=True)
class Layout:
    """The emulated system's folders inside the workload folder."""

    root: Path

    @property
    def archives(self) -> Path:
        return self.root / "var/cache/apt/archives"

    @property
    def partial(self) -> Path:
        return self.archives / "partial"

    @property
    def dpkg(self) -> Path:
        return self.root / "var/lib/dpkg"

    @property
    def info(self) -> Path:
        return self.dpkg / "info"

    @property
    def updates(self) -> Path:
        return self.dpkg / "updates"

    def create(self) -> None:
        for folder in (self.partial, self.info, self.updates):
            folder.mkdir(parents=True, exist_ok=True)

    def archive(self, package: SyntheticPackage) -> Path:
        return self.archives / f"{package.name}.deb"


class StatusDatabase:
    """dpkg's status file plus its journal of update files (see module doc)."""

    def __init__(self, layout: Layout, pool: ContentPool, stanzas: int) -> None:
        self.layout = layout
        self.pool = pool
        self.stanzas = stanzas  # packages the status file describes
        self.next_update = 0

    def write_initial(self, counters: Counters) -> None:
        self._write_status(counters)

    def note(self, package: SyntheticPackage, state: str, counters: Counters) -> None:
        temporary = self.layout.updates / "tmp.i"
        key = package.content_key ^ zlib.crc32(state.encode())
        write_file(self.pool, temporary, STATUS_STANZA_BYTES, key, counters, fsync=True)
        os.replace(temporary, self.layout.updates / f"{self.next_update:04d}")
        counters.renames += 1
        fsync_folder(self.layout.updates)
        counters.fsyncs += 1
        counters.status_notes += 1
        self.next_update += 1
        if self.next_update > MAXUPDATES:
            self.checkpoint(counters)

    def checkpoint(self, counters: Counters) -> None:
        self._write_status(counters)
        for number in range(self.next_update):
            (self.layout.updates / f"{number:04d}").unlink(missing_ok=True)
        fsync_folder(self.layout.updates)
        counters.fsyncs += 1
        counters.checkpoints += 1
        self.next_update = 0

    def _write_status(self, counters: Counters) -> None:
        size = max(1, self.stanzas) * STATUS_STANZA_BYTES
        write_atomically(self.pool, self.layout.dpkg / "status", size, self.stanzas, counters)


def list_file_bytes(package: SyntheticPackage) -> int:
    """info/PKG.list: one line per file and per folder, each '/path\\n'."""
    paths = [*package.directories, *(f.path for f in package.files)]
    return sum(len(p) + 2 for p in paths)


def md5sums_bytes(package: SyntheticPackage) -> int:
    return sum(len(f.path) + MD5SUMS_LINE_OVERHEAD for f in package.files)


# -- apt -------------------------------------------------------------------------------------
def download(layout: Layout, pool: ContentPool, package: SyntheticPackage, c: Counters) -> None:
    """apt's fetch: the archive lands in partial/ and is renamed into the cache (no fsync)."""
    partial = layout.partial / f"{package.name}.deb"
    write_file(pool, partial, package.archive_bytes, package.content_key, c, fsync=False)
    os.replace(partial, layout.archive(package))
    c.renames += 1


# -- dpkg --unpack ---------------------------------------------------------------------------
def unpack(
    layout: Layout,
    pool: ContentPool,
    status: StatusDatabase,
    package: SyntheticPackage,
    counters: Counters,
    *,
    safe: bool = True,
) -> None:
    """dpkg --unpack of one package. `safe=False` is dpkg's --force-unsafe-io (used to set
    up a workload's starting state quickly: no writeback, no fsync, no status notes)."""
    if safe:
        status.note(package, INSTALL_NOTES[0], counters)
    archive = layout.archive(package)
    if archive.exists():
        read_file(archive, counters)  # dpkg-deb reads the .deb (from the page cache, if warm)
    for folder in package.directories:
        (layout.root / folder).mkdir(exist_ok=True)
    new_names = []
    for entry in package.files:
        target = layout.root / entry.path
        new_name = target.with_name(target.name + ".dpkg-new")
        _extract(pool, new_name, entry, counters, safe=safe)
        new_names.append((new_name, target))
    if safe:
        for new_name, _ in new_names:  # tar_writeback_barrier
            _wait_writeback(new_name)
    for new_name, target in new_names:  # tar_deferred_extract
        if safe:
            fd = os.open(new_name, os.O_WRONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            counters.fsyncs += 1
        os.replace(new_name, target)
        counters.renames += 1
    # Control files go to the info folder, then the file list is written atomically.
    md5sums = layout.info / f"{package.name}.md5sums"
    write_file(pool, md5sums, md5sums_bytes(package), package.content_key, counters, fsync=False)
    list_path = layout.info / f"{package.name}.list"
    if safe:
        write_atomically(pool, list_path, list_file_bytes(package), package.content_key, counters)
        fsync_folder(layout.info)
        counters.fsyncs += 1
        status.note(package, INSTALL_NOTES[1], counters)
    else:
        size = list_file_bytes(package)
        write_file(pool, list_path, size, package.content_key, counters, fsync=False)
    counters.packages += 1


def _extract(
    pool: ContentPool, path: Path, entry: SyntheticFile, counters: Counters, *, safe: bool
) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        pool.write(fd, entry.size_bytes, entry.content_key)
        if safe:
            sync_file_range(fd, SYNC_FILE_RANGE_WRITE)  # fd_writeback_init
    finally:
        os.close(fd)
    counters.files_written += 1
    counters.bytes_written += entry.size_bytes


def _wait_writeback(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        sync_file_range(fd, SYNC_FILE_RANGE_WAIT_BEFORE)
    finally:
        os.close(fd)


# -- dpkg --configure ------------------------------------------------------------------------
def configure(status: StatusDatabase, package: SyntheticPackage, counters: Counters) -> None:
    for state in INSTALL_NOTES[2:]:
        status.note(package, state, counters)


# -- dpkg --purge ----------------------------------------------------------------------------
def purge(
    layout: Layout, status: StatusDatabase, package: SyntheticPackage, counters: Counters
) -> None:
    status.note(package, PURGE_NOTES[0], counters)
    for entry in reversed(package.files):
        (layout.root / entry.path).unlink()
        counters.files_removed += 1
    for folder in reversed(package.directories):
        with contextlib.suppress(OSError):  # shared folders stay while other packages use them
            (layout.root / folder).rmdir()
    status.note(package, PURGE_NOTES[1], counters)
    for suffix in (".list", ".md5sums"):
        (layout.info / f"{package.name}{suffix}").unlink(missing_ok=True)
        counters.files_removed += 1
    fsync_folder(layout.info)
    counters.fsyncs += 1
    status.note(package, PURGE_NOTES[2], counters)
    counters.packages += 1
