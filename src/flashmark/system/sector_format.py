"""The one sector format surface, capacity and power-cut write: every 512-byte sector describes
itself, so a sector read back says whose it is, where it was written, and whether it is whole.

A 56-byte header (docs/design.md, "The sector format"; little-endian) and a body the use fills:
the format and its version, the use, a CRC-32 when the use checksums, the run's identity, the
offset it was written at, and a power-cut record's place. Pure: no I/O.
"""

from __future__ import annotations

import enum
import struct
import zlib
from typing import NamedTuple

SECTOR = 512
MAGIC = b"FLASHMRK"
VERSION = 1
RUN_BYTES = 16
CHECKSUMMED = 0x0001  # flags: the checksum field holds the CRC-32
# magic, version, use, flags, checksum, run, offset, sequence, cycle, sector number, sectors
_HEADER = struct.Struct("<8sBBHI16sQQIHH")
_CHECKSUM_AT = 12
OFFSET_AT = 32  # where the offset is: a use that builds sectors as 64-bit words sets it there
BODY_AT = _HEADER.size  # 56
BODY_BYTES = SECTOR - BODY_AT


class Use(enum.IntEnum):
    SURFACE = 1
    CAPACITY = 2
    POWERCUT = 3


class Header(NamedTuple):
    use: int
    run: bytes
    offset: int
    sequence: int  # a power-cut record's number; 0 for the others
    cycle: int
    sector_number: int  # the sector's place in its record, of `sectors`
    sectors: int
    checksummed: bool


def header(
    use: Use,
    run: bytes,
    offset: int,
    *,
    sequence: int = 0,
    cycle: int = 0,
    sector_number: int = 0,
    sectors: int = 0,
    checksummed: bool = False,
) -> bytes:
    """A sector's header; with `checksummed`, `seal` writes its checksum once the body is in."""
    flags = CHECKSUMMED if checksummed else 0
    return _HEADER.pack(
        MAGIC, VERSION, use, flags, 0, run, offset, sequence, cycle, sector_number, sectors
    )


def seal(buffer: bytearray, at: int) -> None:
    """Write the checksum of the sector at `at` of `buffer` (its header and body written)."""
    struct.pack_into("<I", buffer, at + _CHECKSUM_AT, _crc(buffer, at))


def read_header(sector: bytes | bytearray | memoryview) -> Header | None:
    """The header of a sector read back; None when it holds no sector of this format."""
    magic, version, use, flags, _, run, offset, sequence, cycle, index, sectors = (
        _HEADER.unpack_from(sector)
    )
    if magic != MAGIC or version != VERSION:
        return None
    return Header(use, run, offset, sequence, cycle, index, sectors, bool(flags & CHECKSUMMED))


def checksum_holds(sector: bytes | bytearray | memoryview) -> bool:
    """Whether a sealed sector's CRC-32 matches its content (a torn or flipped one does not)."""
    return bool(struct.unpack_from("<I", sector, _CHECKSUM_AT)[0] == _crc(sector, 0))


def _crc(data: bytes | bytearray | memoryview, at: int) -> int:
    head = zlib.crc32(data[at : at + _CHECKSUM_AT])
    return zlib.crc32(data[at + _CHECKSUM_AT + 4 : at + SECTOR], head)
