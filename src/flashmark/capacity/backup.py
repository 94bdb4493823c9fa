"""The undo log of a non-destructive capacity probe: every range is read and kept before the
probe first writes it, and put back newest first when the probe ends, however it ends. Newest
first is exact also where addresses wrap: the earliest backup of each piece of flash holds its
original content and is written last. The log is in memory and in a file on another device,
fsync'd before the writes it covers, so `flashmark capacity --restore FILE` works after a
SIGKILL; a record cut short at its end is ignored (its write never happened). The file's
format: docs/capacity.md, "Never losing data".
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from flashmark.capacity.signature import is_signed
from flashmark.errors import DeviceFailed, UsageError
from flashmark.system.durable_files import write_new
from flashmark.system.pending_backups import MAGIC, RECORD
from flashmark.system.sector_format import SECTOR


class RawDevice(Protocol):
    """What the probe needs of a device (flashmark.system.block_device.BlockDevice): its claimed
    size, its logical block, and reads, writes and flushes that raise DeviceFailed."""

    @property
    def size_bytes(self) -> int: ...

    @property
    def sector_bytes(self) -> int: ...

    def read_bytes(self, offset: int, length: int) -> bytes: ...

    def write_bytes(self, offset: int, data: bytes) -> None: ...

    def sync_checked(self) -> None: ...


@dataclass(frozen=True)
class Record:
    offset: int
    data: bytes
    pre_write: bool  # taken before the probe wrote anything


@dataclass(frozen=True)
class RestoreOutcome:
    ranges: int
    bytes_restored: int
    differing_after_aliasing: int  # ranges backed up after writes began that read differently
    # `--restore` after a kill: ranges (and their bytes) written over since the probe, not put
    # back, and bytes that already held their original content
    changed_ranges: int = 0
    changed_bytes: int = 0
    in_place_bytes: int = 0


class Journal:
    """Writes to `device` through the undo log, kept in memory and, with `path`, in that file.
    `backup=False` (--destructive) writes without backing anything up."""

    def __init__(self, device: RawDevice, path: Path | None, *, backup: bool = True) -> None:
        self.device = device
        self.path = path if backup else None
        self.backing_up = backup
        self.records: list[Record] = []
        self._seen: set[tuple[int, int]] = set()
        self._writes_started = False
        self._stream: BinaryIO | None = None
        if self.path is not None:
            self._stream = self.path.open("ab")

    def write(self, writes: Sequence[tuple[int, bytes]]) -> None:
        """Back up what these writes will overwrite (once per range), persist it, then write."""
        if self.backing_up:
            fresh = [(o, len(d)) for o, d in writes if (o, len(d)) not in self._seen]
            for offset, length in fresh:
                self._seen.add((offset, length))
                record = Record(
                    offset, self.device.read_bytes(offset, length), not self._writes_started
                )
                self.records.append(record)
                if self._stream is not None:
                    self._stream.write(RECORD.pack(b"R", offset, length, int(record.pre_write)))
                    self._stream.write(record.data)
            if fresh and self._stream is not None:
                self._stream.flush()
                os.fsync(self._stream.fileno())
        self._writes_started = True
        for offset, data in writes:
            self.device.write_bytes(offset, data)

    def restore(self) -> RestoreOutcome:
        """Put every backed-up range back (newest first) and check it; the file is removed when
        everything checked out. DeviceFailed (file kept) when a range does not read back."""
        outcome = restore_records(self.device, self.records, str(self.path or "memory"))
        self.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        return outcome

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def restore_records(device: RawDevice, records: Sequence[Record], source: str) -> RestoreOutcome:
    differing = _put_back(device, [(r, r.offset, r.data) for r in records], source)
    return RestoreOutcome(len(records), sum(len(r.data) for r in records), differing)


def _put_back(device: RawDevice, writes: Sequence[tuple[Record, int, bytes]], source: str) -> int:
    """Write each (record, offset, content) back, newest first, flush, and check it reads
    back; how many differ where a later range aliased onto them. DeviceFailed when a range
    backed up before the first write (so it says what the device held) does not read back."""
    for _, offset, data in reversed(writes):
        device.write_bytes(offset, data)
    if writes:
        device.sync_checked()
    differing = 0
    failed: list[int] = []
    for record, offset, data in writes:
        if device.read_bytes(offset, len(data)) == data:
            continue
        if record.pre_write:
            failed.append(offset)
        else:
            differing += 1
    if failed:
        where = ", ".join(str(offset) for offset in failed[:5])
        raise DeviceFailed(
            f"the device did not read back {len(failed)} restored range(s) (at bytes {where}"
            f"{', ...' if len(failed) > 5 else ''}); the backup stays in {source}"
        )
    return differing


def restore_ours(
    device: RawDevice, records: Sequence[Record], nonce: bytes, source: str
) -> RestoreOutcome:
    """Put back only what the device still holds of the probe's (`--restore` after a kill,
    when anything may have written to the device since): each logical block of a backed-up
    range is written back when every sector of it holds a signature of this probe's nonce
    (signature.is_signed); one that already holds its original content is left; any other
    was written over since (a new image, a filesystem) and is left too, as "changed since".
    Checked first, for every range, then written newest first, as `restore_records` does.
    DeviceFailed (the file kept) when a restored block does not read back."""
    unit = max(SECTOR, device.sector_bytes)
    writes: list[tuple[Record, int, bytes]] = []  # (its record, offset, original content)
    changed_ranges = changed_bytes = in_place = 0
    for record in records:
        current = device.read_bytes(record.offset, len(record.data))
        changed = 0
        run: int | None = None  # the start of blocks to put back, within this record
        for at in range(0, len(record.data), unit):
            now, then = current[at : at + unit], record.data[at : at + unit]
            if now != then and all(
                is_signed(now[s : s + SECTOR], nonce) for s in range(0, unit, SECTOR)
            ):
                run = at if run is None else run
                continue
            if run is not None:
                writes.append((record, record.offset + run, record.data[run:at]))
                run = None
            if now == then:
                in_place += unit
            else:
                changed += unit
        if run is not None:
            writes.append((record, record.offset + run, record.data[run:]))
        # Only a range backed up before the first write says what the device held; a later
        # one (a wrapping device) may hold the probe's data of another address.
        if changed and record.pre_write:
            changed_ranges += 1
            changed_bytes += changed
    differing = _put_back(device, writes, source)
    return RestoreOutcome(
        ranges=len({id(record) for record, _, _ in writes}),
        bytes_restored=sum(len(data) for _, _, data in writes),
        differing_after_aliasing=differing,
        changed_ranges=changed_ranges,
        changed_bytes=changed_bytes,
        in_place_bytes=in_place,
    )


def create_backup_file(folder: Path, device_name: str, header: Mapping[str, Any]) -> Path:
    """A new backup file holding only its header, fsync'd with its folder entry."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(dict(header), sort_keys=True).encode()
    return write_new(folder, f"{device_name.replace('/', '_')}-", ".backup", MAGIC + text + b"\n")


def read_backup(path: Path) -> tuple[dict[str, Any], list[Record]]:
    """Header and records of a backup file; UsageError naming the file if it is not one."""
    try:
        with path.open("rb") as stream:
            if stream.readline() != MAGIC:
                raise UsageError(f"{path} is not a flashmark capacity backup")
            try:
                header = json.loads(stream.readline())
            except ValueError:
                raise UsageError(f"{path}: the backup's header is damaged") from None
            if not isinstance(header, dict):
                raise UsageError(f"{path}: the backup's header is damaged")
            return header, list(_records(stream))
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror}") from None


def _records(stream: BinaryIO) -> Iterator[Record]:
    while True:
        head = stream.read(RECORD.size)
        if len(head) < RECORD.size:
            return  # end, or a record cut short before its fsync (its write never happened)
        tag, offset, length, pre_write = RECORD.unpack(head)
        if tag != b"R":
            return
        data = stream.read(length)
        if len(data) < length:
            return
        yield Record(offset, data, bool(pre_write))
