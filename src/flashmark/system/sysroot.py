"""The one layer through which flashmark reads /sys, /proc and debugfs.

Every root can be moved (FLASHMARK_SYSFS_ROOT, FLASHMARK_PROCFS_ROOT, FLASHMARK_DEBUGFS_ROOT),
so tests and users debugging a report can point flashmark at a recorded tree laid out like the
real one; FLASHMARK_TOOLS_ROOT holds that tree's recorded tool outputs (flashmark.probe.tools).
Reads return None for a file that does not exist or cannot be read (many sysfs attributes are
optional or root-only); callers decide whether that is worth a warning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SYSFS_ENV = "FLASHMARK_SYSFS_ROOT"
PROCFS_ENV = "FLASHMARK_PROCFS_ROOT"
DEBUGFS_ENV = "FLASHMARK_DEBUGFS_ROOT"
TOOLS_ENV = "FLASHMARK_TOOLS_ROOT"
# The unit of a block device's sysfs `size` and of diskstats' sectors, 512 bytes whatever the
# device's own sector (sysfs-block ABI, Documentation/block/stat.rst, sector_t).
SECTOR_BYTES = 512


@dataclass(frozen=True)
class SystemRoots:
    sysfs: Path = Path("/sys")
    procfs: Path = Path("/proc")
    debugfs: Path = Path("/sys/kernel/debug")
    tools: Path | None = None  # recorded tool outputs; None: run the tools themselves

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> SystemRoots:
        env = os.environ if environ is None else environ
        return cls(
            sysfs=Path(env.get(SYSFS_ENV) or "/sys"),
            procfs=Path(env.get(PROCFS_ENV) or "/proc"),
            debugfs=Path(env.get(DEBUGFS_ENV) or "/sys/kernel/debug"),
            tools=Path(env[TOOLS_ENV]) if env.get(TOOLS_ENV) else None,
        )

    @property
    def is_live(self) -> bool:
        """True when every root is the real one, i.e. readings describe this machine now."""
        return self == SystemRoots()

    def sys_path(self, relative: str) -> Path:
        return self.sysfs / relative.lstrip("/")

    def proc_path(self, relative: str) -> Path:
        return self.procfs / relative.lstrip("/")

    def debug_path(self, relative: str) -> Path:
        return self.debugfs / relative.lstrip("/")

    def read_sys(self, relative: str) -> str | None:
        return read_text(self.sys_path(relative))

    def read_proc(self, relative: str) -> str | None:
        return read_text(self.proc_path(relative))

    def read_debug(self, relative: str) -> str | None:
        return read_text(self.debug_path(relative))

    def size_bytes(self, name: str) -> int | None:
        """The size of block device `name` (kernel name) from sysfs; None when it does not say."""
        sectors = self.read_sys(f"class/block/{name}/size")
        return int(sectors) * SECTOR_BYTES if sectors and sectors.isdigit() else None

    def disk_of(self, name: str) -> str | None:
        """The disk holding partition `name` (mmcblk0p2 -> mmcblk0); None when `name` is no
        partition (a partition's sysfs folder has `partition` and sits in its disk's)."""
        folder = self.sys_path(f"class/block/{name}")
        return folder.resolve().parent.name if (folder / "partition").exists() else None


def read_text(path: Path) -> str | None:
    """The file's text with surrounding white space removed, or None if it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
