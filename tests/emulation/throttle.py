"""Emulated storage devices whose true speed is known: loop devices under the kernel block throttle.

Processes feel the caps only inside the throttling cgroup, so every command meant to measure
the device is started through `EmulatedDevice.command()`. Needs root, loop devices and the
throttle (cgroup v1 `blkio.throttle.*_device` or v2 `io.max`, "MAJ:MIN value" per device:
Documentation/admin-guide/cgroup-v1/blkio-controller.rst, cgroup-v2.rst); it dispatches per
100 ms slice, so IOPS caps should be multiples of 10 (`effective_iops`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from flashmark.units import MiB

CGROUP_ROOT = Path("/sys/fs/cgroup")
_V1_BLKIO = "blkio"
_GROUP_PREFIX = "flashmark-emu-"
# mkfs.ext4 writing its inode tables and journal at once, so that ext4lazyinit does not write
# in the background while a test measures the device (ext4(5) "init_itable"); add the device.
MKFS_EXT4 = ("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0")


@dataclass(frozen=True)
class DeviceCaps:
    """The true speed of an emulated device. None leaves that dimension unthrottled."""

    name: str
    read_iops: int | None = None
    write_iops: int | None = None
    read_bps: int | None = None  # bytes per second
    write_bps: int | None = None

    def effective_iops(self, cap: int | None) -> int | None:
        """What the throttle really allows: it works in 100 ms slices (see module doc)."""
        return None if cap is None else (cap // 10) * 10


class EmulationUnavailable(RuntimeError):
    pass


class Emulation:
    """A device made for a test, as a context manager: `_unavailable` says why this machine
    cannot make it (None: it can), `_setup` makes it, and `close` removes everything it made
    (idempotent), also when `_setup` fails halfway or the test inside fails."""

    def _unavailable(self) -> str | None:
        raise NotImplementedError

    def _setup(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        reason = self._unavailable()
        if reason is not None:
            raise EmulationUnavailable(reason)
        try:
            self._setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def unavailable_reason(cgroup_root: Path = CGROUP_ROOT) -> str | None:
    """None when this machine can emulate devices, else the reason (for pytest skips)."""
    if os.geteuid() != 0:
        return "emulated devices need root (loop devices and the block throttle)"
    for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
        if shutil.which(tool) is None:
            return f"emulated devices need {tool} (Debian packages util-linux, e2fsprogs, mount)"
    if not Path("/dev/loop-control").exists():
        return "emulated devices need loop devices (/dev/loop-control is missing)"
    return throttle_unavailable_reason(cgroup_root)


def _throttle_flavour(cgroup_root: Path) -> str | None:
    if (cgroup_root / _V1_BLKIO / "blkio.throttle.read_iops_device").exists():
        return "v1"
    controllers = cgroup_root / "cgroup.controllers"
    if controllers.exists() and "io" in controllers.read_text().split():
        return "v2"
    return None


class EmulatedDevice(Emulation):
    """A throttled loop device, optionally with an ext4 filesystem mounted on it.

    Use as a context manager; everything it creates (backing file, loop device, mount, cgroup)
    is removed on exit, whatever happened inside.
    """

    def __init__(
        self,
        caps: DeviceCaps,
        *,
        size_bytes: int = 512 * MiB,
        filesystem: bool = True,
        cgroup_root: Path = CGROUP_ROOT,
        fstype: str = "ext4",
    ) -> None:
        self.caps = caps
        self.size_bytes = size_bytes
        self.filesystem = filesystem
        self.fstype = fstype  # "ext4" or "btrfs" (mkfs.btrfs, Debian btrfs-progs)
        self._cgroup_root = cgroup_root
        self._stack = contextlib.ExitStack()
        self._workdir: Path | None = None
        self.device: str = ""
        self.majmin: str = ""
        self.mount_point: Path | None = None
        self.cgroup: Path | None = None

    # -- life cycle ---------------------------------------------------------------------------
    def _unavailable(self) -> str | None:
        return unavailable_reason(self._cgroup_root)

    def close(self) -> None:
        self._stack.close()

    def _setup(self) -> None:
        workdir = Path(tempfile.mkdtemp(prefix="flashmark-emu-"))
        self._workdir = workdir
        self._stack.callback(shutil.rmtree, workdir, True)

        # The backing file lives in RAM, on a tmpfs of the device's size: a flush of the loop
        # device (every end_fsync, every journal commit) is an fsync of its backing file, which
        # on a disk-backed folder writes the data back to the host's disk and waits for it
        # (50 to 500 ms on a busy shared host, 17% of a 3 s window), a cost the caps do not
        # describe. tmpfs has nothing to write back: a flush costs nothing, as on a device
        # without a write cache. Memory is taken only for what is written (a sparse file).
        ram = workdir / "ram"
        ram.mkdir()
        run_tool(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size_bytes},mode=0700", "tmpfs", str(ram)]
        )
        # Lazily: the loop device may hold the file a moment after its detach (udev's probe).
        self._stack.callback(_run_quietly, ["umount", "--lazy", str(ram)])
        backing = ram / "backing.img"
        with backing.open("wb") as handle:
            handle.truncate(self.size_bytes)
        self.device = run_tool(["losetup", "--find", "--show", str(backing)]).strip()
        self._stack.callback(_run_quietly, ["losetup", "--detach", self.device])
        self.majmin = device_number(self.device)

        if self.filesystem:
            if self.fstype == "btrfs":
                run_tool(["mkfs.btrfs", "-q", "-f", self.device])
            else:
                run_tool([*MKFS_EXT4, self.device])
            mount_point = workdir / "mnt"
            mount_point.mkdir()
            run_tool(["mount", self.device, str(mount_point)])
            self._stack.callback(_unmount, mount_point)
            self.mount_point = mount_point

        wait_for_udev()
        self.cgroup = self._create_cgroup()

    def _create_cgroup(self) -> Path:
        return create_throttle_group(self.caps, self.majmin, self._stack, self._cgroup_root)

    # -- use ----------------------------------------------------------------------------------
    def command(self, argv: Sequence[str]) -> list[str]:
        """argv wrapped so that it runs inside the throttling cgroup (and so do its children)."""
        if self.cgroup is None:
            raise EmulationUnavailable("the emulated device is not set up (use it in a with block)")
        return command_in_group(self.cgroup, argv)

    @property
    def target(self) -> Path:
        """Where a benchmark should point: the mounted folder, or the device node."""
        return self.mount_point if self.mount_point is not None else Path(self.device)


def create_throttle_group(
    caps: DeviceCaps, majmin: str, stack: contextlib.ExitStack, cgroup_root: Path = CGROUP_ROOT
) -> Path:
    """A new cgroup capping device `majmin` at `caps`; `stack` removes it when closed.

    Shared with the emulated flash devices (tests.emulation.flash), which can run inside
    the same caps.
    """
    flavour = _throttle_flavour(cgroup_root)
    name = f"{_GROUP_PREFIX}{uuid.uuid4().hex[:10]}"
    if flavour == "v1":
        group = cgroup_root / _V1_BLKIO / name
        group.mkdir()
        stack.callback(_remove_cgroup, group, cgroup_root / _V1_BLKIO)
        for attribute, value in (
            ("blkio.throttle.read_iops_device", caps.read_iops),
            ("blkio.throttle.write_iops_device", caps.write_iops),
            ("blkio.throttle.read_bps_device", caps.read_bps),
            ("blkio.throttle.write_bps_device", caps.write_bps),
        ):
            if value is not None:
                (group / attribute).write_text(f"{majmin} {value}\n")
        return group
    if flavour is None:
        raise EmulationUnavailable(f"no block throttle under {cgroup_root}")
    # cgroup v2: the io controller must be enabled for the children of the root.
    (cgroup_root / "cgroup.subtree_control").write_text("+io\n")
    group = cgroup_root / name
    group.mkdir()
    stack.callback(_remove_cgroup, group, cgroup_root)
    limits = {
        "riops": caps.read_iops,
        "wiops": caps.write_iops,
        "rbps": caps.read_bps,
        "wbps": caps.write_bps,
    }
    settings = " ".join(f"{key}={value}" for key, value in limits.items() if value is not None)
    if settings:
        (group / "io.max").write_text(f"{majmin} {settings}\n")
    return group


def command_in_group(group: Path, argv: Sequence[str]) -> list[str]:
    """argv wrapped so that it runs inside cgroup `group` (and so do its children)."""
    join_then_exec = 'echo 0 > "$0/cgroup.procs" && exec "$@"'
    return ["sh", "-c", join_then_exec, str(group), *argv]


def throttle_unavailable_reason(cgroup_root: Path = CGROUP_ROOT) -> str | None:
    """None when the block throttle can be used here, else the reason."""
    if _throttle_flavour(cgroup_root) is None:
        return (
            f"no block throttle under {cgroup_root}: need cgroup v1 blkio with "
            "blkio.throttle.*_device, or cgroup v2 with the io controller"
        )
    return None


def c_locale() -> dict[str, str]:
    """This environment with the C locale: the tools' messages as the code reads them."""
    return {**os.environ, "LC_ALL": "C"}


def run_tool(argv: list[str]) -> str:
    """What a tool printed; EmulationUnavailable, with its error, when it fails."""
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=c_locale())
    if completed.returncode != 0:
        raise EmulationUnavailable(
            f"{' '.join(argv)} failed ({completed.returncode}): {completed.stderr.strip()}"
        )
    return completed.stdout


def wait_for_udev() -> None:
    """Let udev finish probing the new device (blkid reads it) before anything is measured.

    Those reads would land in the measured device's counters; machines without udev skip this.
    """
    if shutil.which("udevadm") is not None:
        _run_quietly(["udevadm", "settle", "--timeout=10"])


def _run_quietly(argv: list[str]) -> None:
    with contextlib.suppress(EmulationUnavailable, OSError, subprocess.TimeoutExpired):
        run_tool(argv)


def device_number(device: str) -> str:
    """A block device's MAJOR:MINOR, as the block throttle names it."""
    status = os.stat(device)
    return f"{os.major(status.st_rdev)}:{os.minor(status.st_rdev)}"


def _unmount(mount_point: Path) -> None:
    try:
        run_tool(["umount", str(mount_point)])
    except (EmulationUnavailable, subprocess.TimeoutExpired):
        # Still busy (a process left behind): detach it lazily so the loop device can go.
        _run_quietly(["umount", "--lazy", str(mount_point)])


def _remove_cgroup(group: Path, parent: Path) -> None:
    """Move any process left in the group to its parent, then remove the group. A process
    killed just before (a writer's fio threads) may still be exiting: the kernel refuses the
    rmdir (EBUSY) until it is gone, so it is tried again for a few seconds."""
    deadline = time.monotonic() + 5
    while True:
        with contextlib.suppress(OSError):
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    (parent / "cgroup.procs").write_text(pid)
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if error.errno != errno.EBUSY or time.monotonic() > deadline:
                return
        time.sleep(0.05)
