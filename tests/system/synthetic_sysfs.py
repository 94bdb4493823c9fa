"""A synthetic /sys and /proc, laid out like the kernel's, for device stacks this kernel cannot
build (it has no device-mapper or md): LUKS, LVM, md RAID, partitions, loop chains.

Layout (Documentation/ABI/stable/sysfs-block): a device's folder under devices/, a partition's
folder inside its disk's, class/block/NAME and dev/block/MAJ:MIN as relative links to it,
`holders/` and `slaves/` as links between device folders, dm/name + dm/uuid, md/level,
loop/backing_file; proc/self/mountinfo (proc(5)) and proc/swaps.
"""

from __future__ import annotations

import os
from pathlib import Path

from flashmark.system.sysroot import SystemRoots

_PHYSICAL = "devices/pci0000:00/0000:00:14.0/usb2/2-1/host0/target0:0:0/0:0:0:0/block"
_VIRTUAL = "devices/virtual/block"


class SyntheticSystem:
    def __init__(self, base: Path) -> None:
        self.sys = base / "sys"
        self.proc = base / "proc"
        for folder in ("class/block", "dev/block", _PHYSICAL, _VIRTUAL):
            (self.sys / folder).mkdir(parents=True, exist_ok=True)
        (self.proc / "self").mkdir(parents=True)
        self._mounts: list[str] = []
        self._swaps: list[str] = []
        self._write_proc()

    @property
    def roots(self) -> SystemRoots:
        return SystemRoots(sysfs=self.sys, procfs=self.proc, debugfs=self.sys / "kernel/debug")

    # -- devices ----------------------------------------------------------------------------

    def disk(self, name: str, majmin: str, *, sectors: int = 1 << 21) -> None:
        self._device(self.sys / _PHYSICAL / name, name, majmin, sectors)

    def partition(self, disk: str, name: str, majmin: str, *, start: int, sectors: int) -> None:
        folder = self._folder(disk) / name
        self._device(folder, name, majmin, sectors)
        (folder / "partition").write_text(name.removeprefix(disk).lstrip("p") + "\n")
        (folder / "start").write_text(f"{start}\n")

    def dm(self, name: str, majmin: str, dm_name: str, uuid: str, *, on: list[str]) -> None:
        folder = self.sys / _VIRTUAL / name
        self._device(folder, name, majmin, 1 << 20)
        (folder / "dm").mkdir()
        (folder / "dm/name").write_text(dm_name + "\n")
        (folder / "dm/uuid").write_text(uuid + "\n")
        self._stack(name, on)

    def md(self, name: str, majmin: str, level: str, *, on: list[str]) -> None:
        folder = self.sys / _VIRTUAL / name
        self._device(folder, name, majmin, 1 << 20)
        (folder / "md").mkdir()
        (folder / "md/level").write_text(level + "\n")
        self._stack(name, on)

    def loop(self, name: str, majmin: str, backing: str | None = None) -> None:
        folder = self.sys / _VIRTUAL / name
        self._device(folder, name, majmin, 1 << 17)
        if backing is not None:
            (folder / "loop").mkdir()
            (folder / "loop/backing_file").write_text(backing + "\n")

    # -- use --------------------------------------------------------------------------------

    def mount(self, name: str, mount_point: str, *, source: str | None = None) -> None:
        majmin = (self._folder(name) / "dev").read_text().strip()
        number = 30 + len(self._mounts)
        self._mounts.append(
            f"{number} 1 {majmin} / {mount_point} rw,relatime shared:{number} - ext4 "
            f"{source or '/dev/' + name} rw"
        )
        self._write_proc()

    def swap(self, path: str) -> None:
        self._swaps.append(f"{path}\t\t\t\tpartition\t1048572\t\t0\t\t-2")
        self._write_proc()

    # -- plumbing ---------------------------------------------------------------------------

    def _device(self, folder: Path, name: str, majmin: str, sectors: int) -> None:
        folder.mkdir(parents=True)
        (folder / "dev").write_text(majmin + "\n")
        (folder / "size").write_text(f"{sectors}\n")
        (folder / "holders").mkdir()
        (folder / "slaves").mkdir()
        _link(self.sys / "class/block" / name, folder)
        _link(self.sys / "dev/block" / majmin, folder)

    def _stack(self, upper: str, lowers: list[str]) -> None:
        for lower in lowers:
            _link(self._folder(lower) / "holders" / upper, self._folder(upper))
            _link(self._folder(upper) / "slaves" / lower, self._folder(lower))

    def _folder(self, name: str) -> Path:
        return (self.sys / "class/block" / name).resolve()

    def _write_proc(self) -> None:
        (self.proc / "self/mountinfo").write_text(
            "\n".join(["1 0 254:1 / / rw shared:1 - ext4 /dev/vda1 rw", *self._mounts]) + "\n"
        )
        header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority"
        (self.proc / "swaps").write_text("\n".join([header, *self._swaps]) + "\n")


def _link(link: Path, target: Path) -> None:
    link.symlink_to(os.path.relpath(target, link.parent))
