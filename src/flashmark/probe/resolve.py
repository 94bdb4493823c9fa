"""From a target (folder, file, partition, device) down to the physical block devices, through
the layers sysfs shows (Documentation/ABI/stable/sysfs-block), each recorded: filesystem
(mountinfo) -> partition -> loop (`loop/backing_file`, then its file's filesystem, recorded;
the loop device itself is the device measured) -> device-mapper (`dm/`, `slaves/`) -> md ->
the device. With recorded roots, /dev/NAME is looked
up in the recorded sysfs: /dev itself is not recorded.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import TargetError, TargetNotFound
from flashmark.probe.model import Layer
from flashmark.system.device_stack import (
    dm_kind,
    kernel_name_of_node,
    listed_in,
    majmin_of,
    name_of_majmin,
    source_device_name,
)
from flashmark.system.mounts import Mount, mount_of, read_mounts
from flashmark.system.sysroot import SystemRoots

_MAX_DEPTH = 8  # loop-on-file-on-loop chains deeper than this are not real set-ups


@dataclass(frozen=True)
class Resolution:
    given: str
    resolved: str
    target_type: str  # "folder", "file", "block device"
    mount: Mount | None
    layers: tuple[Layer, ...]
    physical: tuple[str, ...]  # kernel names of the whole physical devices


def resolve_target(given: str | Path, roots: SystemRoots) -> Resolution:
    path = os.path.abspath(os.fspath(given))
    walk = _Walk(roots, read_mounts(roots), [], [])

    device_name = _device_name_of_node(path, roots)
    if device_name is not None:
        walk.device(device_name, 0)
        return Resolution(
            str(given), path, "block device", None, tuple(walk.layers), tuple(walk.physical)
        )

    if not os.path.exists(path):
        raise TargetNotFound(
            f"{given}: no such file, folder or device (give an existing folder, file or "
            "block device, e.g. `flashmark probe /`)"
        )
    target_type = "folder" if os.path.isdir(path) else "file"
    real = os.path.realpath(path)
    mount = _mount_for_path(real, roots, walk.mounts)
    walk.mount(mount, real, 0)
    return Resolution(
        str(given), real, target_type, mount, tuple(walk.layers), tuple(walk.physical)
    )


def _mount_for_path(real: str, roots: SystemRoots, mounts: tuple[Mount, ...]) -> Mount | None:
    device = None
    if roots.is_live:
        device = majmin_of(os.stat(real).st_dev)
    return mount_of(real, mounts, device)


def _device_name_of_node(path: str, roots: SystemRoots) -> str | None:
    """The kernel name of a block device node; its node's own name when sysfs does not list its
    number (a node of this machine probed against a recorded tree); None for no block device."""
    try:
        return kernel_name_of_node(path, roots)
    except TargetError:
        pass
    with contextlib.suppress(OSError):
        if stat.S_ISBLK(os.stat(path).st_mode):
            return Path(os.path.realpath(path)).name
    return None


@dataclass
class _Walk:
    """One walk down the layers: what it records (`layers`, and the whole physical devices in
    `physical`) and what every step reads (the roots and the mount table)."""

    roots: SystemRoots
    mounts: tuple[Mount, ...]
    layers: list[Layer]
    physical: list[str]

    def mount(self, mount: Mount | None, path: str, depth: int) -> None:
        layers = self.layers
        if mount is None:
            layers.append(Layer("filesystem", path, "no mount found for this path in mountinfo"))
            return
        # A filesystem's device by its major:minor, else by its source (btrfs and others
        # report an anonymous 0:N device number).
        name = name_of_majmin(mount.majmin, self.roots) or source_device_name(
            mount.source, self.roots
        )
        detail = f"{mount.fstype} on {mount.source}, mounted at {mount.mount_point}"
        if name is None:
            layers.append(Layer("filesystem", mount.mount_point, f"{detail}: no block device"))
            return
        layers.append(Layer("filesystem", mount.mount_point, detail))
        self.device(name, depth)

    def device(self, name: str, depth: int) -> None:
        roots, layers = self.roots, self.layers
        if depth > _MAX_DEPTH:
            layers.append(Layer("device", name, f"stopped: more than {_MAX_DEPTH} nested layers"))
            return
        base = f"class/block/{name}"
        parent = roots.disk_of(name)
        if parent is not None:
            number = roots.read_sys(f"{base}/partition")
            layers.append(Layer("partition", name, f"partition {number} of {parent}"))
            self.device(parent, depth + 1)
            return
        if name.startswith("loop"):
            self._loop(name, base, depth)
            return
        slaves = listed_in(name, "slaves", roots)
        dm_name = roots.read_sys(f"{base}/dm/name")
        if dm_name is not None:
            uuid = roots.read_sys(f"{base}/dm/uuid") or ""
            kind = dm_kind(uuid)
            layers.append(
                Layer("device-mapper", name, f"{kind} '{dm_name}' on {', '.join(slaves)}")
            )
            for slave in slaves:
                self.device(slave, depth + 1)
            return
        level = roots.read_sys(f"{base}/md/level")
        if level is not None:
            layers.append(Layer("md", name, f"{level} of {', '.join(slaves) or 'no members'}"))
            for slave in slaves:
                self.device(slave, depth + 1)
            return
        if name not in self.physical:
            self.physical.append(name)
            layers.append(Layer("device", name, "physical device"))

    def _loop(self, name: str, base: str, depth: int) -> None:
        roots, layers = self.roots, self.layers
        backing = roots.read_sys(f"{base}/loop/backing_file")
        if backing is None:
            layers.append(Layer("loop", name, "no backing file (not attached)"))
            return
        layers.append(Layer("loop", name, f"backed by {backing}"))
        backing_path = backing.removesuffix(" (deleted)")
        real = os.path.realpath(backing_path) if roots.is_live else backing_path
        if roots.is_live and not os.path.exists(real):
            layers.append(Layer("file", backing, "backing file no longer exists"))
            return
        mount = _mount_for_path(real, roots, self.mounts)
        # The layers beneath say where the image lives, but the device measured is the loop
        # device: its image's size and contents, and speed through the backing filesystem.
        # Naming the disk under the image (the host's own) would file the run under that disk.
        beneath = _Walk(roots, self.mounts, [], [])
        beneath.mount(mount, real, depth + 1)
        layers.extend(
            Layer(layer.kind, layer.name, "holds the backing file, not the device measured")
            if layer.kind == "device"
            else layer
            for layer in beneath.layers
        )
        if name not in self.physical:
            self.physical.append(name)
