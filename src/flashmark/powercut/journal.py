"""The journal on the raw device: where each record goes, how it is written, flushed and read.

Record `seq` lives at area_start + (seq mod slots) x record_bytes, round and round. The device
I/O, its flush and FUA writes: flashmark.system.block_device.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from flashmark.errors import DeviceFailed
from flashmark.system.block_device import BlockDevice, aligned_buffer

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


class RawJournal:
    """The journal on an open device: a RecordSink for the writer, a reader for the check
    (media.Journal)."""

    def __init__(self, device: BlockDevice, layout: JournalLayout) -> None:
        self._device = device
        self.layout = layout
        self.record_bytes = layout.record_bytes
        self.capacity = layout.slots
        self._buffer = aligned_buffer(layout.record_bytes)

    def offset_of(self, seq: int) -> int:
        return self.layout.offset_of(seq)

    def write(self, seq: int, record: bytes, *, fua: bool) -> None:
        self._buffer[:] = record
        self._device.write(self._buffer, self.offset_of(seq), fua=fua)

    def flush(self) -> None:
        self._device.sync()

    def read(self, first_seq: int, count: int) -> Iterator[bytes]:
        """The records first_seq .. first_seq + count - 1 as they read back, in order;
        DeviceFailed when the device cannot be read."""
        per_chunk = max(1, _READ_CHUNK // self.record_bytes)
        with aligned_buffer(per_chunk * self.record_bytes) as buffer:
            seq = first_seq
            end = first_seq + count
            while seq < end:
                slot = seq % self.layout.slots
                run = min(end - seq, per_chunk, self.layout.slots - slot)  # up to the area's end
                size = self.record_bytes
                with memoryview(buffer)[: run * size] as view:
                    try:
                        self._device.read(view, self.offset_of(seq))
                    except OSError as error:
                        raise DeviceFailed(
                            f"reading the journal back failed at byte {self.offset_of(seq)}: "
                            f"{error.strerror}"
                        ) from None
                    records = [bytes(view[at : at + size]) for at in range(0, run * size, size)]
                yield from records
                seq += run

    def forget(self, first_seq: int, count: int) -> None:
        return None  # the journal's slots are simply written again

    def close(self) -> None:
        self._buffer.close()
