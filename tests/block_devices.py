"""Loop devices, partitions, filesystems, mounts and swap that root tests make from image files
and undo: each command checked, and each device detached even while udev still probes it."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def require_tools(*tools: str) -> None:
    """Skip the test, naming the first of `tools` this machine lacks."""
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian packages util-linux, fdisk, e2fsprogs)")


class LoopLab:
    """A temporary folder with the images, loop devices, filesystems, mounts and swap one test
    makes: all undone, the last made first, when `cleanup` closes, the folder last."""

    def __init__(self, cleanup: contextlib.ExitStack, prefix: str = "flashmark-loops-") -> None:
        self.folder = Path(tempfile.mkdtemp(prefix=prefix))
        cleanup.callback(shutil.rmtree, self.folder)
        self.cleanup = cleanup
        self.count = 0

    def image(
        self, size_bytes: int, partition_table: str | None = None, folder: Path | None = None
    ) -> Path:
        """A sparse image file in `folder` (else the lab's), partitioned by `partition_table`
        (an sfdisk(8) script)."""
        self.count += 1
        path = (folder or self.folder) / f"image-{self.count}.img"
        with path.open("wb") as handle:
            handle.truncate(size_bytes)
        if partition_table is not None:
            run(["sfdisk", "--quiet", str(path)], stdin=partition_table)
        return path

    def attach(self, backing: Path | str, partitions: bool = False) -> str:
        """A loop device over `backing` (a file or a device); with `partitions`, its
        partitions appear as NODEpN."""
        node = run(["losetup", "--find", "--show", *(["--partscan"] * partitions), str(backing)])
        node = node.strip()
        self.cleanup.callback(detach, node)
        if partitions and not Path(node + "p1").exists():
            # Kernels built without partition table parsers (no MSDOS_PARTITION) leave the
            # table unread; partx reads it in user space and adds the partitions (BLKPG). They
            # go away with the loop device.
            run(["partx", "--add", node])
        return node

    def mount(self, node: str) -> Path:
        """A new ext4 on `node`, mounted in the lab's folder."""
        run(["mkfs.ext4", "-q", "-F", node])
        self.count += 1
        point = self.folder / f"mount-{self.count}"
        point.mkdir()
        run(["mount", node, str(point)])
        self.cleanup.callback(unmount, point)
        return point

    def swap(self, node: str) -> None:
        run(["mkswap", "-q", node])
        run(["swapon", node])
        self.cleanup.callback(run, ["swapoff", node])


def run(argv: list[str], stdin: str | None = None) -> str:
    """The command's output; the test fails with its stderr if it fails."""
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{argv}: {done.stderr}"
    return done.stdout


def unmount(point: Path) -> None:
    if os.path.ismount(point):
        run(["umount", str(point)])


def detach(node: str) -> None:
    # udev may still be probing a device it just saw: detaching is then refused for a moment
    for _ in range(50):
        if subprocess.run(["losetup", "--detach", node], capture_output=True).returncode == 0:
            return
        if not Path(f"/sys/block/{Path(node).name}/loop").exists():
            return
        time.sleep(0.1)
    raise AssertionError(f"could not detach {node}")
