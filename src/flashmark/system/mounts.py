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

from flashmark.errors import ReadOnlyTarget
from flashmark.system.sysroot import SystemRoots

# Filesystems that live in RAM, O_DIRECT opens and all: what is measured or scanned there is
# memory, not a device.
MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class Mount:
    majmin: str  # "8:1"; 0:N for filesystems without a block device (tmpfs, btrfs subvolumes)
    root: str  # the folder of the filesystem mounted here ("/" unless a bind mount)
    mount_point: str
    options: str  # per-mount options, e.g. "rw,relatime"
    fstype: str
    source: str  # e.g. "/dev/mmcblk0p2"
    super_options: str

    @property
    def read_only(self) -> bool:
        return "ro" in self.options.split(",") or "ro" in self.super_options.split(",")

    @property
    def in_memory(self) -> bool:
        return self.fstype in MEMORY_FILESYSTEMS

    @property
    def all_options(self) -> str:
        """The mount's options then the superblock's, each once (as `findmnt -o OPTIONS`)."""
        options = (*self.options.split(","), *self.super_options.split(","))
        return ",".join(dict.fromkeys(option for option in options if option))


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
                root=_unescape(fields[3]),
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


def mount_of(path: str, mounts: tuple[Mount, ...], majmin: str | None = None) -> Mount | None:
    """The mount holding `path` (an absolute, resolved path): the longest matching mount point,
    the last one mounted where several share it (the one visible). With `majmin` (the device a
    live stat() of the path names), mounts of that device are preferred."""
    target = PurePosixPath(path)
    candidates = [
        mount
        for mount in mounts
        if target == PurePosixPath(mount.mount_point)
        or PurePosixPath(mount.mount_point) in target.parents
    ]
    if majmin is not None and any(mount.majmin == majmin for mount in candidates):
        candidates = [mount for mount in candidates if mount.majmin == majmin]
    best: Mount | None = None
    for mount in candidates:
        depth = len(PurePosixPath(mount.mount_point).parts)
        if best is None or depth >= len(PurePosixPath(best.mount_point).parts):
            best = mount
    return best


def refuse_read_only(folder: object, mount: Mount | None) -> None:
    """ReadOnlyTarget when `folder`, on `mount`, cannot be written to."""
    if mount is not None and mount.read_only:
        raise ReadOnlyTarget(
            f"{folder} is on a read-only filesystem ({mount.fstype} on {mount.mount_point}): "
            "remount it read-write or pick another folder"
        )


def swap_sources(roots: SystemRoots) -> tuple[str, ...]:
    """The 'Filename' column of /proc/swaps: swap devices and swap files, unescaped (it escapes
    paths as mountinfo does, seq_file_path)."""
    text = roots.read_proc("swaps") or ""
    return tuple(_unescape(line.split()[0]) for line in text.splitlines()[1:] if line.split())
