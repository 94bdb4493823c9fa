"""Raw block I/O for the capacity probe: O_DIRECT reads and writes at exact offsets.

O_DIRECT keeps the page cache out of the way: without it, a block just written would be read
back from the host's memory whatever the device did with it (docs/emulated-flash.md: a
buffered loop device hides aliasing the same way). O_DIRECT needs buffers, offsets and lengths
aligned to the logical block size (open(2), "O_DIRECT"); anonymous mmap memory is page-aligned.
A direct write returns when the device acknowledged it; `sync()` (fsync(2) on the node: a cache
flush command to the device) makes a batch of them durable, cheaper than O_SYNC on each.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
from typing import Protocol

from flashmark.errors import DeviceFailed, TargetError, TargetPermissionDenied


class RawDevice(Protocol):
    """What the probe needs from a device: its claimed size, reads and writes at offsets."""

    @property
    def size_bytes(self) -> int: ...

    @property
    def logical_block_bytes(self) -> int: ...

    def read(self, offset: int, length: int) -> bytes: ...

    def write(self, offset: int, data: bytes) -> None: ...

    def sync(self) -> None: ...


class DirectDevice:
    """A block device node opened with O_DIRECT (a context manager)."""

    def __init__(self, node: str) -> None:
        self.node = node
        try:
            self._fd = os.open(node, os.O_RDWR | os.O_DIRECT | os.O_CLOEXEC)
        except PermissionError:
            raise TargetPermissionDenied(
                f"{node}: permission denied: writing a device needs root (sudo)"
            ) from None
        except OSError as error:
            raise TargetError(f"{node}: cannot open for direct I/O: {error.strerror}") from None
        self._size = os.lseek(self._fd, 0, os.SEEK_END)
        # BLKSSZGET (linux/fs.h, _IO(0x12, 104)): the logical block size, the unit O_DIRECT
        # offsets and lengths must be multiples of (512 or 4096).
        answer = fcntl.ioctl(self._fd, 0x1268, struct.pack("i", 0))
        self._logical = struct.unpack("i", answer)[0] or 512

    @property
    def logical_block_bytes(self) -> int:
        return self._logical

    @property
    def size_bytes(self) -> int:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        with mmap.mmap(-1, length) as buffer:
            try:
                done = os.preadv(self._fd, [buffer], offset)
            except OSError as error:
                raise self._failed("read", len(buffer), offset, error) from None
            if done != length:
                raise DeviceFailed(
                    f"{self.node}: short read at byte {offset}: {done} of {length} bytes"
                )
            return bytes(buffer)

    def write(self, offset: int, data: bytes) -> None:
        with mmap.mmap(-1, len(data)) as buffer:
            buffer.write(data)
            try:
                done = os.pwritev(self._fd, [buffer], offset)
            except OSError as error:
                raise self._failed("write", len(buffer), offset, error) from None
            if done != len(data):
                raise DeviceFailed(
                    f"{self.node}: short write at byte {offset}: {done} of {len(data)} bytes"
                )

    def sync(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError as error:
            raise DeviceFailed(
                f"{self.node}: flushing its write cache failed: {error.strerror}"
            ) from None

    def _failed(self, what: str, length: int, offset: int, error: OSError) -> DeviceFailed:
        return DeviceFailed(
            f"{self.node}: {what} of {length} bytes at byte {offset} failed: {error.strerror}"
        )

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> DirectDevice:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
