"""May flashmark write to this block device? The guard every command that writes a device uses.

    with claim_for_writing("/dev/sdb", roots) as claim:   # raises UnsafeDevice with the reason
        ...write to /dev/sdb...                           # claim.claimed: what is held

Refused when a member of its stack (device_stack.py) is mounted, swap, or held by dm or md;
then every member that can be is held open with O_EXCL, and the kernel refuses to mount it or
swap on it meanwhile (open(2), "O_EXCL"), in any mount namespace. Checked again once held.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import TargetPermissionDenied, UnsafeDevice
from flashmark.system.device_stack import (
    DeviceStack,
    FileIdentity,
    Link,
    MemberKind,
    Role,
    StackMember,
    device_node,
    device_stack,
    kernel_name_of_node,
    majmin_of,
    source_device_name,
)
from flashmark.system.mounts import Mount, read_mounts, swap_sources
from flashmark.system.pending_backups import refuse_if_pending
from flashmark.system.sysroot import SystemRoots


@dataclass(frozen=True)
class WriteClaim:
    """What `claim_for_writing` holds: the stack it checked and the members opened with O_EXCL."""

    node: str
    stack: DeviceStack
    claimed: tuple[str, ...]  # labels, the target first


# Opens one member exclusively and returns what releases it.
Claimer = Callable[[StackMember], Callable[[], None]]


def open_exclusive(member: StackMember) -> Callable[[], None]:
    """The live claimer: an O_RDONLY | O_EXCL descriptor on the member's device node.

    Read-only is enough: exclusivity is about who may claim the device, not about how it is
    opened (block/bdev.c), and flashmark's writes go through fio's own descriptors."""
    node = device_node(member.name, member.majmin)
    if node is None:
        raise FileNotFoundError(errno.ENOENT, f"no device node for {member.majmin}", member.node)
    descriptor = os.open(node, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    return functools.partial(os.close, descriptor)


@contextlib.contextmanager
def claim_for_writing(
    node: str,
    roots: SystemRoots,
    *,
    claimer: Claimer | None = None,
    restoring: Path | None = None,
) -> Iterator[WriteClaim]:
    """Refuse `node` when its stack is in use (UnsafeDevice, naming the member and why) or
    holds blocks of a killed capacity probe not put back yet (naming the `--restore` line;
    `restoring` is the backup being put back), else hold every claimable member with O_EXCL
    until the block ends."""
    if claimer is None:
        if not roots.is_live:
            raise UnsafeDevice(
                f"refusing to write to {node}: /sys or /proc point at a recorded system "
                "(FLASHMARK_SYSFS_ROOT, FLASHMARK_PROCFS_ROOT), so what uses the device "
                "cannot be checked; unset them"
            )
        claimer = open_exclusive
    name = kernel_name_of_node(node, roots)
    stack = device_stack(name, roots)
    _refuse_if_used(node, stack, roots)
    refuse_if_pending(node, stack, roots, allowed=restoring)
    releases: list[Callable[[], None]] = []
    try:
        claimed: list[StackMember] = []
        for member in stack.claimable():
            releases.append(_claim(node, member, claimer))
            claimed.append(member)
        # Read again with the claims held: anything mounted or stacked since the first look
        # either made a claim fail (EBUSY) or shows up now.
        again = device_stack(name, roots)
        _refuse_if_used(node, again, roots)
        held = {(m.name, m.majmin) for m in claimed}
        new = [m.label for m in again.claimable() if (m.name, m.majmin) not in held]
        if new:
            raise UnsafeDevice(
                f"refusing to write to {node}: its device stack changed while it was being "
                f"checked ({', '.join(new)} appeared); run the command again"
            )
        yield WriteClaim(node, again, tuple(m.label for m in claimed))
    finally:
        for release in reversed(releases):
            with contextlib.suppress(OSError):  # close(2) fails only on a bad descriptor
                release()


def check_writable(node: str, roots: SystemRoots) -> WriteClaim:
    """Refuse now (before asking the user to confirm) what `claim_for_writing` would refuse;
    the claims are released at once."""
    with claim_for_writing(node, roots) as claim:
        return claim


def _claim(node: str, member: StackMember, claimer: Claimer) -> Callable[[], None]:
    try:
        return claimer(member)
    except OSError as error:
        if error.errno == errno.EBUSY:
            why = (
                "is busy according to the kernel (an O_EXCL open failed): mounted (maybe in "
                "another mount namespace), used as swap or by device-mapper/md, or opened "
                "exclusively by another program"
            )
            raise UnsafeDevice(
                f"refusing to write to {node}: {_sentence(member.route, why)}"
            ) from None
        if error.errno in (errno.EACCES, errno.EPERM):
            # Not a device in use: one this user may not open (say so as `run` does).
            raise TargetPermissionDenied(
                f"{member.label}: permission denied: writing a device needs root (sudo)"
            ) from None
        why = f"cannot be held unused during the run (O_EXCL open failed: {error.strerror})"
        raise UnsafeDevice(f"refusing to write to {node}: {_sentence(member.route, why)}") from None


def refusal_reasons(stack: DeviceStack, roots: SystemRoots) -> tuple[str, ...]:
    """Why writing to the stack's target would destroy data in use; empty when it looks free."""
    flagged: list[tuple[StackMember, str]] = []
    mounts = read_mounts(roots)
    for member in stack.devices():
        for mount in mounts:
            if (
                mount.majmin == member.majmin
                or source_device_name(mount.source, roots) == member.name
            ):
                flagged.append((member, _mounted_state(mount)))
    for source in swap_sources(roots):
        swapping = _swap_member(stack, source, roots)
        if swapping is not None:
            flagged.append((swapping, "is used as swap"))
    reasons = [_sentence(member.route, state) for member, state in flagged]
    for member in stack.members:
        # A dm or md device built on the stack holds its members even when nothing is mounted
        # on it (an open LUKS mapping, an active volume group or array). Said once, and only
        # when no mount or swap further up already explains it.
        explained = any(_passes_through(other.route, member.route) for other, _ in flagged)
        if member.role is Role.ABOVE and member.is_mapper and not explained:
            reasons.append(_sentence(member.route, ""))
    return tuple(dict.fromkeys(reasons))


def _refuse_if_used(node: str, stack: DeviceStack, roots: SystemRoots) -> None:
    reasons = refusal_reasons(stack, roots)
    if reasons:
        raise UnsafeDevice(f"refusing to write to {node}: " + "; ".join(reasons))


def _sentence(route: tuple[Link, ...], state: str) -> str:
    """ "it is backed by /dev/loop2, which has partition /dev/loop2p1, which is mounted on /x"."""
    words = "it"
    for number, link in enumerate(route):
        words += (" " if number == 0 else ", which ") + f"{link.relation} {link.member}"
    if not state:
        return words
    return f"{words} {state}" if not route else f"{words}, which {state}"


def _passes_through(route: tuple[Link, ...], prefix: tuple[Link, ...]) -> bool:
    return route[: len(prefix)] == prefix


def _mounted_state(mount: Mount) -> str:
    if mount.mount_point == "/":
        return f"holds the root filesystem ({mount.source} on /)"
    return f"is mounted on {mount.mount_point}"


def _swap_member(stack: DeviceStack, source: str, roots: SystemRoots) -> StackMember | None:
    """The member a /proc/swaps entry (a device or a swap file) is, if any."""
    path = source.removesuffix(" (deleted)")
    if roots.is_live:
        with contextlib.suppress(OSError):
            found = os.stat(path)
            if stat.S_ISBLK(found.st_mode):
                majmin = majmin_of(found.st_rdev)
                return next((m for m in stack.devices() if m.majmin == majmin), None)
            identity = FileIdentity(found.st_dev, found.st_ino)
            for member in stack.members:
                if member.kind is MemberKind.FILE and member.file_identity == identity:
                    return member
    name = source_device_name(path, roots)
    for member in stack.members:
        if (member.kind is MemberKind.DEVICE and member.name == name) or (
            member.kind is MemberKind.FILE and member.name == path
        ):
            return member
    return None
