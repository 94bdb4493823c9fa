"""Everything whose data changes when a block device is written: its stack, read from sysfs
(Documentation/ABI/stable/sysfs-block): what it is built on (`slaves/`, a loop device's
`loop/backing_file`, a partition's disk) and what is built on it (`holders/`, partitions, other
loops on the same file). Sibling partitions are left out unless they overlap: the kernel keeps
a partition's I/O in its range (block/blk-core.c, bio_check_eod, blk_partition_remap). The loop
driver neither lists itself in its backing device's `holders/` nor claims it, so the walk
follows `backing_file` itself. LVM volumes on one physical volume count as one stack.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import struct
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from flashmark.errors import TargetError
from flashmark.system.sysroot import SystemRoots

# linux/loop.h: LOOP_GET_STATUS64 = 0x4C05 fills struct loop_info64, whose first three fields
# are __u64 lo_device, lo_inode, lo_rdevice: the backing file's st_dev, st_ino and st_rdev in
# the userspace dev_t encoding (drivers/block/loop.c loop_get_status, huge_encode_dev).
_LOOP_GET_STATUS64 = 0x4C05
_LOOP_INFO64_BYTES = 232
_DELETED_SUFFIX = " (deleted)"  # how d_path shows an unlinked file (fs/d_path.c)


class Role(StrEnum):
    TARGET = "target"
    BELOW = "below"  # the target's writes land in its bytes
    ABOVE = "above"  # built on bytes the target's writes change
    PARENT = "parent"  # the disk of a partition that is the target or below it


class MemberKind(StrEnum):
    DEVICE = "device"
    FILE = "file"  # a loop device's backing file


@dataclass(frozen=True)
class Link:
    """One step of the way from the target to a member: "<previous> is backed by /dev/loop2"."""

    relation: str  # "is backed by", "has partition", "is held by", ...
    member: str  # the member's label


@dataclass(frozen=True)
class FileIdentity:
    st_dev: int
    st_ino: int


@dataclass(frozen=True)
class StackMember:
    kind: MemberKind
    name: str  # kernel name ("loop2", "dm-0") or, for a file, its path
    label: str  # for messages: "/dev/dm-0 (LUKS 'cryptdata')", "/srv/disk.img"
    role: Role
    route: tuple[Link, ...]  # from the target; empty for the target itself
    majmin: str | None = None
    holders: tuple[str, ...] = ()  # kernel names of the devices built on it (sysfs holders/)
    whole: str | None = None  # the disk, for a partition
    is_mapper: bool = False  # a dm or md device: it holds (claims) the devices it is built on
    file_identity: FileIdentity | None = None  # live system only

    @property
    def node(self) -> str:
        return node_of(self.name)


@dataclass(frozen=True)
class DeviceStack:
    target: StackMember
    members: tuple[StackMember, ...]  # the target first, then in walking order

    def devices(self) -> tuple[StackMember, ...]:
        return tuple(m for m in self.members if m.kind is MemberKind.DEVICE)

    def claimable(self) -> tuple[StackMember, ...]:
        """The members to open with O_EXCL for a write, so nothing can mount or claim them.
        Left out, because another claim covers them and an O_EXCL open would fail: devices
        with holders (dm and md claim their slaves), a partition of a claimed disk and the
        PARENT disk of a claimed partition (block/bdev.c bd_may_claim), and files (O_EXCL
        without O_CREAT means nothing for them, open(2))."""
        claimable_names = {
            m.name
            for m in self.members
            if m.kind is MemberKind.DEVICE and m.role is not Role.PARENT and not m.holders
        }
        return tuple(
            m
            for m in self.members
            if m.name in claimable_names
            and m.kind is MemberKind.DEVICE
            and not (m.whole is not None and m.whole in claimable_names)
        )


@dataclass(frozen=True)
class LoopBacking:
    path: str  # as sysfs shows it, " (deleted)" removed
    device: str | None  # kernel name when the backing file is a block device
    identity: FileIdentity | None  # st_dev/st_ino of a backing file (live system only)
    deleted: bool = False


def kernel_name_of_node(node: str, roots: SystemRoots) -> str:
    """The kernel name of a block device node, as sysfs lists it ("/dev/sda1" -> "sda1").

    On a recorded tree (tests), /dev/NAME is looked up by name, since /dev is not recorded."""
    if not roots.is_live:
        found = _named_in_sysfs(node, roots)
        if found is not None:
            return found
    try:
        status = os.stat(node)
    except OSError as error:
        raise TargetError(f"{node}: cannot read the device: {error.strerror}") from None
    if not stat.S_ISBLK(status.st_mode):
        raise TargetError(f"{node}: not a block device")
    majmin = majmin_of(status.st_rdev)
    found = name_of_majmin(majmin, roots)
    if found is None:
        raise TargetError(f"{node}: the kernel lists no block device {majmin} in sysfs")
    return found


def source_device_name(source: str, roots: SystemRoots) -> str | None:
    """The kernel name of the block device a mount names as its source (mountinfo), for a
    filesystem whose st_dev is not its device's (btrfs gives each subvolume an anonymous
    0:N), or a mount or swap entry that only names it (/dev/mapper/NAME is dm-N); None when the
    source is no block device. A name sysfs lists is taken as it is, so a device is found even
    where /dev has no node for it (a container)."""
    found = _named_in_sysfs(source, roots)
    if found is not None or not source.startswith("/dev/"):
        return found
    try:
        return kernel_name_of_node(source, roots)
    except TargetError:
        return None


def _named_in_sysfs(node: str, roots: SystemRoots) -> str | None:
    """The kernel name a /dev path spells when sysfs lists it (/dev/mapper/NAME by its dm name)."""
    if not node.startswith("/dev/"):
        return None
    if node.startswith("/dev/mapper/"):
        found = dm_by_name(node.removeprefix("/dev/mapper/"), roots)
        if found is not None:
            return found
    name = name_in_dev(node)
    return name if roots.sys_path(f"class/block/{name}").exists() else None


def name_of_majmin(majmin: str, roots: SystemRoots) -> str | None:
    link = roots.sys_path(f"dev/block/{majmin}")
    return link.resolve().name if link.exists() else None


def block_folder(name: str, roots: SystemRoots) -> Path | None:
    """The sysfs folder of block device `name` (kernel name); None when sysfs has none."""
    link = roots.sys_path(f"class/block/{name}")
    return link.resolve() if link.exists() else None


def listed_in(name: str, listing: str, roots: SystemRoots) -> tuple[str, ...]:
    """The kernel names in a block device's `holders/` or `slaves/`, sorted."""
    folder = block_folder(name, roots)
    if folder is None or not (folder / listing).is_dir():
        return ()
    return tuple(sorted(entry.name for entry in (folder / listing).iterdir()))


def majmin_of(device: int) -> str:
    """A device number as sysfs and mountinfo write it: "179:2"."""
    return f"{os.major(device)}:{os.minor(device)}"


def node_of(name: str) -> str:
    """The /dev path of a kernel name (sysfs writes '/' in kernel names as '!')."""
    return "/dev/" + name.replace("!", "/")


def name_in_dev(node: str) -> str:
    """The kernel name a /dev path spells ("/dev/cciss/c0d0" -> "cciss!c0d0")."""
    return node.removeprefix("/dev/").replace("/", "!")


def dm_by_name(dm_name: str, roots: SystemRoots) -> str | None:
    """The kernel name of the device-mapper device named `dm_name` (/dev/mapper/NAME)."""
    block = roots.sys_path("class/block")
    for entry in sorted(block.iterdir()) if block.is_dir() else ():
        if roots.read_sys(f"class/block/{entry.name}/dm/name") == dm_name:
            return entry.name
    return None


def device_stack(target: str, roots: SystemRoots) -> DeviceStack:
    """Every member of `target`'s stack (a kernel name), each with the way it was reached."""
    return _Walk(roots).run(target)


class _Walk:
    def __init__(self, roots: SystemRoots) -> None:
        self.roots = roots
        self.members: dict[tuple[MemberKind, str], StackMember] = {}
        self.queue: deque[StackMember] = deque()
        self._loops: tuple[tuple[str, LoopBacking], ...] | None = None

    def run(self, target: str) -> DeviceStack:
        if block_folder(target, self.roots) is None:
            raise TargetError(f"/dev/{target}: sysfs has no block device {target}")
        first = self._add_device(target, Role.TARGET, None)
        assert first is not None
        while self.queue:
            member = self.queue.popleft()
            if member.kind is MemberKind.FILE:
                self._walk_file(member)
            else:
                self._walk_device(member)
        return DeviceStack(first, tuple(self.members.values()))

    # -- one step -------------------------------------------------------------------------

    def _walk_device(self, member: StackMember) -> None:
        name, role = member.name, member.role
        if role is not Role.PARENT:
            for partition in self._partitions(name):
                self._add_device(partition, Role.ABOVE, member, "has partition")
        for holder in member.holders:
            self._add_device(holder, Role.ABOVE, member, "is held by")
        for loop in self._loops_on_device(name):
            self._add_device(loop, Role.ABOVE, member, "is the backing device of")
        if role is Role.ABOVE:
            return  # writing the target does not change what an upper layer is built on
        for slave in listed_in(name, "slaves", self.roots):
            self._add_device(slave, Role.BELOW, member, "is built on")
        if member.whole is not None:
            self._add_parent(member)
        backing = self._backing(name)
        if backing is not None:
            if backing.device is not None:
                self._add_device(backing.device, Role.BELOW, member, "is backed by")
            else:
                self._add_file(backing, member)

    def _add_parent(self, partition: StackMember) -> None:
        assert partition.whole is not None
        self._add_device(partition.whole, Role.PARENT, partition, "is a partition of")
        mine = self._range(partition.name)
        for sibling in self._partitions(partition.whole):
            if sibling != partition.name and _overlap(mine, self._range(sibling)):
                self._add_device(sibling, Role.ABOVE, partition, "overlaps partition")

    def _walk_file(self, member: StackMember) -> None:
        for loop, backing in self._all_loops():
            if backing.device is None and _same_file(backing, member):
                self._add_device(loop, Role.ABOVE, member, "is also the backing file of")

    # -- adding members ---------------------------------------------------------------------

    def _add_device(
        self, name: str, role: Role, via: StackMember | None, relation: str = ""
    ) -> StackMember | None:
        key = (MemberKind.DEVICE, name)
        if key in self.members:
            return None
        folder = block_folder(name, self.roots)
        if folder is None:
            return None  # listed in holders/ or slaves/ but already gone
        label = self._label(name)
        route = () if via is None else (*via.route, Link(relation, label))
        member = StackMember(
            kind=MemberKind.DEVICE,
            name=name,
            label=label,
            role=role,
            route=route,
            majmin=self.roots.read_sys(f"class/block/{name}/dev"),
            holders=listed_in(name, "holders", self.roots),
            whole=folder.parent.name if (folder / "partition").exists() else None,
            is_mapper=(folder / "dm").is_dir() or (folder / "md").is_dir(),
        )
        self.members[key] = member
        self.queue.append(member)
        return member

    def _add_file(self, backing: LoopBacking, via: StackMember) -> None:
        key = (MemberKind.FILE, backing.path)
        if key in self.members:
            return
        label = backing.path + (_DELETED_SUFFIX if backing.deleted else "")
        member = StackMember(
            kind=MemberKind.FILE,
            name=backing.path,
            label=label,
            role=Role.BELOW,
            route=(*via.route, Link("is backed by", label)),
            file_identity=backing.identity,
        )
        self.members[key] = member
        self.queue.append(member)

    # -- sysfs ------------------------------------------------------------------------------

    def _partitions(self, name: str) -> tuple[str, ...]:
        folder = block_folder(name, self.roots)
        if folder is None:
            return ()
        return tuple(
            sorted(
                child.name
                for child in folder.iterdir()
                if child.is_dir() and (child / "partition").exists()
            )
        )

    def _range(self, name: str) -> tuple[int, int] | None:
        start = self.roots.read_sys(f"class/block/{name}/start")
        size = self.roots.read_sys(f"class/block/{name}/size")
        if start is None or size is None or not (start.isdigit() and size.isdigit()):
            return None
        return int(start), int(start) + int(size)

    def _label(self, name: str) -> str:
        node = node_of(name)
        dm_name = self.roots.read_sys(f"class/block/{name}/dm/name")
        if dm_name is not None:
            uuid = self.roots.read_sys(f"class/block/{name}/dm/uuid") or ""
            return f"{node} ({dm_kind(uuid)} '{dm_name}')"
        level = self.roots.read_sys(f"class/block/{name}/md/level")
        if level is not None:
            return f"{node} (md {level})"
        return node

    def _backing(self, name: str) -> LoopBacking | None:
        return dict(self._all_loops()).get(name)

    def _loops_on_device(self, name: str) -> tuple[str, ...]:
        return tuple(loop for loop, backing in self._all_loops() if backing.device == name)

    def _all_loops(self) -> tuple[tuple[str, LoopBacking], ...]:
        """Every bound loop device with what it maps (a bound loop has loop/backing_file)."""
        if self._loops is None:
            found: list[tuple[str, LoopBacking]] = []
            block = self.roots.sys_path("class/block")
            for entry in sorted(block.iterdir()) if block.is_dir() else ():
                text = self.roots.read_sys(f"class/block/{entry.name}/loop/backing_file")
                if text:
                    found.append((entry.name, self._read_backing(entry.name, text)))
            self._loops = tuple(found)
        return self._loops

    def _read_backing(self, loop: str, text: str) -> LoopBacking:
        deleted = text.endswith(_DELETED_SUFFIX)
        path = text.removesuffix(_DELETED_SUFFIX)
        if not self.roots.is_live:
            # A recorded tree: a /dev/NAME backing that sysfs lists is a block device.
            name = name_in_dev(path)
            known = path.startswith("/dev/") and block_folder(name, self.roots) is not None
            return LoopBacking(path, name if known else None, None, deleted)
        status = _loop_status(loop, self.roots)
        if status is None:
            with contextlib.suppress(OSError):  # the ioctl failed: the path is the next best
                found = os.stat(path)
                rdev = found.st_rdev if stat.S_ISBLK(found.st_mode) else 0
                status = found.st_dev, found.st_ino, rdev
        if status is None:
            return LoopBacking(path, None, None, deleted)
        st_dev, st_ino, st_rdev = status
        if st_rdev:  # only device files have one
            return LoopBacking(path, name_of_majmin(majmin_of(st_rdev), self.roots), None, deleted)
        return LoopBacking(path, None, FileIdentity(st_dev, st_ino), deleted)


def _loop_status(loop: str, roots: SystemRoots) -> tuple[int, int, int] | None:
    """(st_dev, st_ino, st_rdev) of a loop device's backing file, from LOOP_GET_STATUS64."""
    majmin = roots.read_sys(f"class/block/{loop}/dev")
    node = device_node(loop, majmin)
    if node is None:
        return None
    try:
        descriptor = os.open(node, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = bytearray(_LOOP_INFO64_BYTES)
        fcntl.ioctl(descriptor, _LOOP_GET_STATUS64, info)
    except OSError:
        return None  # detached meanwhile (ENXIO)
    finally:
        os.close(descriptor)
    st_dev, st_ino, st_rdev = struct.unpack_from("=QQQ", info)
    return st_dev, st_ino, st_rdev


def device_node(name: str, majmin: str | None) -> str | None:
    """A /dev path that really is device `majmin` (udev may name nodes otherwise, or be absent):
    /dev/NAME, else udev's /dev/block/MAJ:MIN link."""
    if majmin is None:
        return None
    for node in (node_of(name), f"/dev/block/{majmin}"):
        with contextlib.suppress(OSError):
            status = os.stat(node)
            if stat.S_ISBLK(status.st_mode) and majmin_of(status.st_rdev) == majmin:
                return node
    return None


def _same_file(backing: LoopBacking, member: StackMember) -> bool:
    if backing.identity is not None and member.file_identity is not None:
        return backing.identity == member.file_identity
    return backing.path == member.name  # a recorded tree, or the ioctl was refused


def _overlap(first: tuple[int, int] | None, second: tuple[int, int] | None) -> bool:
    if first is None or second is None:
        return True  # unknown range: assume the worst
    return first[0] < second[1] and second[0] < first[1]


def dm_kind(uuid: str) -> str:
    """What built a dm device, from the prefix its tool gives the dm uuid (cryptsetup: CRYPT-,
    CRYPT-LUKS1/2- for LUKS, CRYPT-VERITY- from veritysetup; lvm2: LVM-; multipath-tools:
    mpath-; kpartx: partN-); the first prefix that matches, the longer ones first."""
    return next((kind for prefix, kind in _DM_KINDS if uuid.startswith(prefix)), "device-mapper")


_DM_KINDS = (
    ("CRYPT-LUKS", "LUKS"),
    ("CRYPT-VERITY", "dm-verity"),
    ("CRYPT-", "dm-crypt"),
    ("LVM-", "LVM"),
    ("mpath-", "multipath"),
    ("part", "kpartx partition"),
)
