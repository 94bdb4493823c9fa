"""What the workloads need from their folder's filesystem at a scale: bytes and inodes, known
before they run (generated from the scale and seed alone), so `flashmark run` checks them
before its first test rather than lose its tests to a full disk; the bytes beyond the reserve
the filesystem always keeps (flashmark.system.disk_space). An upper bound: each
package's files, folders (shared ones counted again), archive, info files and status note, the
boot set, and margins for dpkg's database and the filesystem's journal and metadata.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import NotEnoughSpace
from flashmark.system.disk_space import reserve_bytes
from flashmark.units import format_size
from flashmark.workloads.packages import DEFAULT_SEED, boot_file_set, generate_package_set

SPACE_MARGIN_BYTES = 64 * 1024 * 1024  # journal, metadata, folders: ext4 needs headroom
_INODES_PER_PACKAGE = 4  # archive, .list, .md5sums, status update note
_INODE_MARGIN = 256  # dpkg's database, apt's folders, the work folder itself


@dataclass(frozen=True)
class WorkloadNeeds:
    bytes: int
    inodes: int


@functools.lru_cache(maxsize=16)
def workload_needs(names: tuple[str, ...], scale: float, seed: int = DEFAULT_SEED) -> WorkloadNeeds:
    """What running `names` at `scale` takes in its folder (module doc)."""
    if not names or not scale > 0:
        return WorkloadNeeds(0, 0)
    needed_bytes, inodes = SPACE_MARGIN_BYTES, _INODE_MARGIN
    if any(name.startswith("pkg-") for name in names):
        packages = generate_package_set(scale, seed)
        needed_bytes += packages.installed_bytes + packages.archive_bytes
        inodes += sum(
            len(p.files) + len(p.directories) + _INODES_PER_PACKAGE for p in packages.packages
        )
    if "cold-read" in names:
        boot = boot_file_set(scale, seed)
        needed_bytes += sum(f.size_bytes for f in boot)
        inodes += len(boot) + len({f.path.rsplit("/", 1)[0] for f in boot})
    return WorkloadNeeds(needed_bytes, inodes)


def fitting_scale(
    names: Sequence[str], scale: float, free_bytes: int, free_inodes: int | None,
    seed: int = DEFAULT_SEED,
) -> float | None:  # fmt: skip
    """The largest scale up to `scale`, rounded down to two significant digits, whose needs
    fit (bisection); None when not even 1% of `scale` fits."""
    names = tuple(names)

    def fits(candidate: float) -> bool:
        needs = workload_needs(names, candidate, seed)
        return needs.bytes <= free_bytes and (free_inodes is None or needs.inodes <= free_inodes)

    low, high = _two_digits_down(scale / 100), scale
    if not fits(low):
        return None
    for _ in range(12):
        middle = _two_digits_down((low + high) / 2)
        if middle <= low:
            break
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def check_room(
    folder: Path, names: Sequence[str], scale: float, *, option: str, seed: int = DEFAULT_SEED
) -> None:
    """NotEnoughSpace, with a scale that fits (`option` names the flag), when the workloads
    would not fit in `folder`'s filesystem now."""
    needs = workload_needs(tuple(names), scale, seed)
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    # What flashmark always leaves free there (flashmark.system.disk_space).
    reserve = reserve_bytes(stats.f_blocks * stats.f_frsize)
    room = max(0, free - reserve)
    # f_files == 0: a filesystem without an inode limit (btrfs reports 0 on some kernels)
    free_inodes = stats.f_favail if stats.f_files else None
    short_of = []
    if needs.bytes > room:
        short_of.append(
            f"about {format_size(needs.bytes)} ({format_size(free)} free, of which flashmark "
            f"always leaves {format_size(reserve)})"
        )
    if free_inodes is not None and needs.inodes > free_inodes:
        short_of.append(f"{needs.inodes:,} inodes ({free_inodes:,} free)")
    if not short_of:
        return
    fitting = fitting_scale(names, scale, room, free_inodes, seed)
    remedy = (f"free some, or use {option} {fitting:g}" if fitting is not None else "free some") + (
        f" ({option} 0 skips them)" if option == "--workload-scale" else ""
    )
    raise NotEnoughSpace(
        f"the workloads ({', '.join(names)}) at scale {scale:g} need {' and '.join(short_of)} "
        f"in {folder}: {remedy}"
    )


def _two_digits_down(value: float) -> float:
    if value <= 0:
        return 0.0
    unit = 10 ** (math.floor(math.log10(value)) - 1)
    return float(f"{math.floor(value / unit) * unit:.12g}")
