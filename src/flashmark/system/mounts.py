"""Which filesystems are mounted where, and what is used as swap, read through SystemRoots.

Source of the format: proc(5), /proc/[pid]/mountinfo: "36 35 98:0 /mnt1 /mnt2 rw,noatime
master:1 - ext3 /dev/root rw,errors=continue": mount id, parent id, major:minor, root, mount
point, mount options, optional fields, a "-" separator, filesystem type, mount source, super
options. Paths escape space, tab, newline and backslash as octal (\\040 ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from flashmark.system.sysroot import SystemRoots

_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class Mount:
    majmin: str  # "8:1"; 0:N for filesystems without a block device (tmpfs, btrfs subvolumes)
    mount_point: str
    options: str  # per-mount options, e.g. "rw,relatime"
    fstype: str
    source: str  # e.g. "/dev/mmcblk0p2"
    super_options: str

    @property
    def read_only(self) -> bool:
        return "ro" in self.options.split(",") or "ro" in self.super_options.split(",")

    @property
    def all_options(self) -> str:
        return ",".join(dict.fromkeys([*self.options.split(","), *self.super_options.split(",")]))


def _unescape(text: str) -> str:
    return _OCTAL_ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), text)


def parse_mountinfo(text: str) -> tuple[Mount, ...]:
    mounts: list[Mount] = []
    for line in text.splitlines():
        fields = line.split()
        if "-" not in fields or len(fields) < 7:
            continue  # not a mountinfo line; nothing useful to take from it
        separator = fields.index("-")
        if len(fields) < separator + 3:
            continue
        mounts.append(
            Mount(
                majmin=fields[2],
                mount_point=_unescape(fields[4]),
                options=fields[5],
                fstype=fields[separator + 1],
                source=_unescape(fields[separator + 2]),
                super_options=fields[separator + 3] if len(fields) > separator + 3 else "",
            )
        )
    return tuple(mounts)


def read_mounts(roots: SystemRoots) -> tuple[Mount, ...]:
    return parse_mountinfo(roots.read_proc("self/mountinfo") or "")


def mount_of(path: str, mounts: tuple[Mount, ...]) -> Mount | None:
    """The mount holding `path` (an absolute, resolved path): the longest matching mount point,
    the last one mounted where several share it (the one visible)."""
    best: Mount | None = None
    target = PurePosixPath(path)
    for mount in mounts:
        point = PurePosixPath(mount.mount_point)
        if (target == point or point in target.parents) and (
            best is None or len(point.parts) >= len(PurePosixPath(best.mount_point).parts)
        ):
            best = mount
    return best


def swap_sources(roots: SystemRoots) -> tuple[str, ...]:
    """The 'Filename' column of /proc/swaps: swap devices and swap files."""
    text = roots.read_proc("swaps") or ""
    return tuple(line.split()[0] for line in text.splitlines()[1:] if line.split())
