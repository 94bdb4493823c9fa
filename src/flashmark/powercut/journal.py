"""The journal on the raw device: where each record goes, how it is written, flushed and read.

Record `seq` lives at area_start + (seq mod slots) x record_bytes, round and round; every
request is O_DIRECT. A flush is fsync(2) of the device, an empty REQ_PREFLUSH; a FUA write is
pwritev2(2) with RWF_DSYNC, marked REQ_FUA (Documentation/block/writeback_cache_control.rst,
block/fops.c). A device whose queue says "write through" completes a flush at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from flashmark.errors import DeviceFailed, TargetError, TargetPermissionDenied
from flashmark.system.sysroot import SystemRoots

_BLKSSZGET = 0x1268  # ioctl(2): the logical block size (linux/fs.h: _IO(0x12, 104))
_READ_CHUNK = 1 << 20  # the reader reads this much at a time


@dataclass(frozen=True)
class JournalLayout:
    area_start: int
    area_bytes: int
    record_bytes: int

    @property
    def slots(self) -> int:
        return self.area_bytes // self.record_bytes

    def offset_of(self, seq: int) -> int:
        return self.area_start + (seq % self.slots) * self.record_bytes


@dataclass(frozen=True)
class QueueFacts:
    """What the kernel says about the device's cache (sysfs-block queue/*)."""

    logical_block_bytes: int
    write_cache: str | None  # "write back": the device has a volatile cache to flush
    fua: bool | None  # the device takes FUA writes itself


def queue_facts(name: str, roots: SystemRoots) -> QueueFacts:
    base = f"class/block/{name}"
    if roots.read_sys(f"{base}/partition") is not None:
        base = f"class/block/{roots.sys_path(base).resolve().parent.name}"  # the disk's queue
    block = roots.read_sys(f"{base}/queue/logical_block_size")
    fua = roots.read_sys(f"{base}/queue/fua")
    return QueueFacts(
        logical_block_bytes=int(block) if block and block.isdigit() else 512,
        write_cache=roots.read_sys(f"{base}/queue/write_cache"),
        fua=None if fua is None else fua == "1",
    )


@contextlib.contextmanager
def opened(node: str, *, write: bool) -> Iterator[int]:
    """The device opened with O_DIRECT; closed on the way out."""
    flags = (os.O_RDWR if write else os.O_RDONLY) | os.O_DIRECT | os.O_CLOEXEC
    try:
        fd = os.open(node, flags)
    except PermissionError:
        raise TargetPermissionDenied(
            f"{node}: permission denied: a power-cut test needs root (sudo)"
        ) from None
    except OSError as error:
        raise TargetError(f"{node}: cannot open the device: {error.strerror}") from None
    try:
        yield fd
    finally:
        os.close(fd)


def logical_block_bytes(fd: int) -> int:
    raw = fcntl.ioctl(fd, _BLKSSZGET, struct.pack("i", 0))
    return int(struct.unpack("i", raw)[0]) or 512


class RawJournal:
    """The journal on an open device: a RecordSink for the writer, a reader for the check."""

    def __init__(self, fd: int, layout: JournalLayout) -> None:
        self._fd = fd
        self.layout = layout
        self.record_bytes = layout.record_bytes
        self.capacity = layout.slots
        self._buffer = mmap.mmap(-1, layout.record_bytes)  # page-aligned, as O_DIRECT wants

    def offset_of(self, seq: int) -> int:
        return self.layout.offset_of(seq)

    def write(self, seq: int, record: bytes, *, fua: bool) -> None:
        self._buffer[:] = record
        flags = os.RWF_DSYNC if fua else 0
        written = os.pwritev(self._fd, [self._buffer], self.offset_of(seq), flags)
        if written != len(record):
            raise OSError(f"short write of record {seq}: {written} of {len(record)} bytes")

    def flush(self) -> None:
        os.fsync(self._fd)

    def read(self, first_seq: int, count: int) -> Iterator[bytes | None]:
        """The records first_seq .. first_seq + count - 1 as they read back, in order;
        DeviceFailed when the device cannot be read."""
        per_chunk = max(1, _READ_CHUNK // self.record_bytes)
        with mmap.mmap(-1, per_chunk * self.record_bytes) as buffer:
            seq = first_seq
            end = first_seq + count
            while seq < end:
                slot = seq % self.layout.slots
                run = min(end - seq, per_chunk, self.layout.slots - slot)  # up to the area's end
                with memoryview(buffer)[: run * self.record_bytes] as view:
                    try:
                        got = os.preadv(self._fd, [view], self.offset_of(seq))
                    except OSError as error:
                        raise DeviceFailed(
                            f"reading the journal back failed at byte {self.offset_of(seq)}: "
                            f"{error.strerror}"
                        ) from None
                    size = self.record_bytes
                    records = [
                        bytes(view[at : at + size]) if at < got else None
                        for at in range(0, run * size, size)
                    ]
                yield from records
                seq += run

    def close(self) -> None:
        self._buffer.close()
