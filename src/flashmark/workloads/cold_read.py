"""cold-read: read a boot-like set of files with an empty page cache.

Seed 002's boot read about 130 MB and wrote under 1 MB. The files are written first (not
timed) and flushed; then the page cache is dropped (`echo 3 > /proc/sys/vm/drop_caches`,
Documentation/admin-guide/sysctl/vm.rst "drop_caches": only clean pages are dropped, hence the
sync before it) so every byte comes from the device, and the files are read whole in a
shuffled order. Dropping caches needs root; without it the workload is skipped with the reason
rather than reporting page-cache speed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from flashmark.system.sysroot import SystemRoots
from flashmark.workloads.dpkg import ContentPool, Counters, read_file, syncfs, write_file
from flashmark.workloads.packages import SyntheticFile

DROP_CACHES = "sys/vm/drop_caches"
DROP_ALL = "3\n"  # vm.rst: 1 = page cache, 2 = dentries and inodes, 3 = both


def drop_caches_problem(roots: SystemRoots) -> str | None:
    """Why the page cache cannot be dropped here, or None when it can."""
    if os.geteuid() != 0:
        return (
            "cold-read needs root to drop the page cache (/proc/sys/vm/drop_caches); "
            "run flashmark with sudo to measure it"
        )
    path = roots.proc_path(DROP_CACHES)
    if not os.access(path, os.W_OK):
        return f"cold-read cannot drop the page cache: {path} is not writable (a container?)"
    return None


def prepare(
    root: Path, files: tuple[SyntheticFile, ...], pool: ContentPool, counters: Counters
) -> None:
    for entry in files:
        path = root / entry.path
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(pool, path, entry.size_bytes, entry.content_key, counters, fsync=False)
    syncfs(root)


def drop_caches(roots: SystemRoots, folder: Path) -> None:
    syncfs(folder)
    roots.proc_path(DROP_CACHES).write_text(DROP_ALL)


def read_all(
    root: Path,
    files: tuple[SyntheticFile, ...],
    counters: Counters,
    step: Callable[[], None] | None = None,
) -> None:
    for entry in files:
        read_file(root / entry.path, counters)
        if step is not None:
            step()
