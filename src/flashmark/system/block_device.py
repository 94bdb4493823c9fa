"""Raw block-device I/O: the one way surface, capacity and power-cut read and write a device.

Every request is O_DIRECT, so every byte goes to the device and back: without it a block just
written would be read back from the host's memory whatever the device did with it
(docs/emulated-flash.md: a buffered loop device hides aliasing the same way). O_DIRECT needs
buffers, offsets and lengths aligned to the logical block size (open(2), "O_DIRECT");
anonymous mmap memory is page-aligned (`aligned_buffer`). A flush is fsync(2) of the node, an
empty REQ_PREFLUSH; a FUA write is pwritev2(2) with RWF_DSYNC, marked REQ_FUA
(Documentation/block/writeback_cache_control.rst, block/fops.c). A device whose queue says
"write through" completes a flush at once. A device that stops answering is the watchdog's
(flashmark.system.watchdog): these calls block as the kernel does.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from flashmark.errors import DeviceFailed, TargetError, TargetPermissionDenied
from flashmark.system.sysroot import SystemRoots

_BLKSSZGET = 0x1268  # ioctl(2): the logical block size (linux/fs.h: _IO(0x12, 104))
Buffer = memoryview | mmap.mmap


def aligned_buffer(length: int) -> mmap.mmap:
    """`length` bytes of page-aligned memory, as O_DIRECT wants."""
    return mmap.mmap(-1, length)


def logical_block_bytes(fd: int) -> int:
    """The unit O_DIRECT offsets and lengths must be multiples of (512 or 4096)."""
    raw = fcntl.ioctl(fd, _BLKSSZGET, struct.pack("i", 0))
    return int(struct.unpack("i", raw)[0]) or 512


def transfer(fd: int, buffer: Buffer, offset: int, *, write: bool, fua: bool = False) -> None:
    """All of `buffer` written at (or read from) `offset` of `fd`; OSError as the kernel says
    it, EIO when the device or file ends first (no caller asks beyond it)."""
    done = 0
    flags = os.RWF_DSYNC if fua else 0
    # Every view is released on the way out, however it ends (a signal mid-request): a view
    # left alive would keep the caller's buffer from being closed.
    with memoryview(buffer) as view:
        while done < len(view):
            at = offset + done
            with view[done:] as part:
                moved = os.pwritev(fd, [part], at, flags) if write else os.preadv(fd, [part], at)
            if moved <= 0:
                raise OSError(errno.EIO, f"short {'write' if write else 'read'} at {at}")
            done += moved


@dataclass
class BlockDevice:
    """A block device node opened with O_DIRECT (by `open_direct`, or inherited as `fd`).

    `read`, `write` and `sync` raise OSError, for callers that map errors themselves (a
    surface scan's error map); `read_bytes`, `write_bytes` and `sync_checked` raise
    DeviceFailed naming the node and the place (a capacity probe, which stops at the first)."""

    node: str
    fd: int
    size_bytes: int
    sector_bytes: int  # the logical block size: the smallest request

    def read(self, buffer: Buffer, offset: int) -> None:
        transfer(self.fd, buffer, offset, write=False)

    def write(self, buffer: Buffer, offset: int, *, fua: bool = False) -> None:
        transfer(self.fd, buffer, offset, write=True, fua=fua)

    def sync(self) -> None:
        """Make what was written durable: the device's volatile cache flushed."""
        os.fsync(self.fd)

    def read_bytes(self, offset: int, length: int) -> bytes:
        with aligned_buffer(length) as buffer:
            try:
                self.read(buffer, offset)
            except OSError as error:
                raise self._failed("read", length, offset, error) from None
            return bytes(buffer)

    def write_bytes(self, offset: int, data: bytes) -> None:
        with aligned_buffer(len(data)) as buffer:
            buffer.write(data)
            try:
                self.write(buffer, offset)
            except OSError as error:
                raise self._failed("write", len(data), offset, error) from None

    def sync_checked(self) -> None:
        try:
            self.sync()
        except OSError as error:
            raise DeviceFailed(
                f"{self.node}: flushing its write cache failed: {error.strerror}"
            ) from None

    def _failed(self, what: str, length: int, offset: int, error: OSError) -> DeviceFailed:
        return DeviceFailed(
            f"{self.node}: {what} of {length} bytes at byte {offset} failed: {error.strerror}"
        )


def open_failed(node: str, error: OSError, permission: str) -> TargetError:
    """The one line of a device node that cannot be opened; `permission` says what it needs
    when the cause is a denied permission."""
    if isinstance(error, PermissionError):
        return TargetPermissionDenied(f"{node}: permission denied: {permission}")
    return TargetError(f"{node}: cannot open the device: {error.strerror}")


@contextlib.contextmanager
def open_direct(node: str, *, write: bool, needs_root: str) -> Iterator[BlockDevice]:
    """The device opened with O_DIRECT (read-only unless `write`), closed on the way out.
    `needs_root` says what needs it, for the message when permission is denied ("a power-cut
    test"). For a write the caller holds flashmark.system.device_safety.claim_for_writing."""
    flags = (os.O_RDWR if write else os.O_RDONLY) | os.O_DIRECT | os.O_CLOEXEC
    try:
        fd = os.open(node, flags)
    except OSError as error:
        raise open_failed(node, error, f"{needs_root} needs root (sudo)") from None
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        yield BlockDevice(node, fd, size, logical_block_bytes(fd))
    finally:
        os.close(fd)


@dataclass(frozen=True)
class QueueFacts:
    """What the kernel says about the device's cache (sysfs-block queue/*)."""

    logical_block_bytes: int
    write_cache: str | None  # "write back": the device has a volatile cache to flush
    fua: bool | None  # the device takes FUA writes itself


def queue_facts(name: str, roots: SystemRoots) -> QueueFacts:
    """The cache facts of block device `name` (kernel name); a partition's are its disk's."""
    base = f"class/block/{roots.disk_of(name) or name}"
    block = roots.read_sys(f"{base}/queue/logical_block_size")
    fua = roots.read_sys(f"{base}/queue/fua")
    return QueueFacts(
        logical_block_bytes=int(block) if block and block.isdigit() else 512,
        write_cache=roots.read_sys(f"{base}/queue/write_cache"),
        fua=None if fua is None else fua == "1",
    )
