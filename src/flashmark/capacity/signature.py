"""Signature blocks: what the capacity probe writes, and what a block read back says. Pure.

Every 512-byte sector gets content no other sector or run can have: a header of the sector
format (flashmark.system.sector_format) naming the run's nonce and its own offset, and a body
filled from both (f3probe does the same per block: AltraMayor/f3
libprobe.c, fill_buffer_with_block). Per sector, so that a real size that is no multiple of the
4 KiB block still shows which sector went where: a sector read back is itself, another offset's
(the device wraps), zeros or 0xFF (dropped), its old content, or something else.
"""

from __future__ import annotations

import enum
import functools
import random
from dataclasses import dataclass

from flashmark.system.sector_format import BODY_AT, SECTOR, Use, header, read_header

FILL_BLOCK = 4096  # the fill is generated per 4 KiB of address space (speed), then sliced


class Found(enum.StrEnum):
    """What came back from a block the probe wrote (the worst of its sectors)."""

    OWN = "own"  # what was written there: stored
    ALIAS = "alias"  # another offset's data of this run: the two share storage (wrap)
    ZEROS = "zeros"  # all 0x00: the write was dropped, reads return zeros
    ERASED = "erased"  # all 0xFF: the write was dropped, reads return erased flash
    UNCHANGED = "unchanged"  # what was there before: the write was dropped
    OTHER = "other"  # anything else (corrupted, foreign data)


@dataclass(frozen=True)
class Reading:
    found: Found
    # ALIAS: the offset whose data came back, counted for the block's start (origin - offset
    # is the distance between two addresses that share storage).
    origin: int | None = None
    own_sectors: int = 0  # leading sectors that read back as written


@functools.lru_cache(maxsize=1024)
def _fill(nonce: bytes, block: int) -> bytes:
    # random.Random seeded from (nonce, block): deterministic, incompressible (a compressing
    # controller gains nothing), cheap to regenerate for checking.
    return random.Random(nonce + block.to_bytes(8, "big")).randbytes(FILL_BLOCK)


def signature(nonce: bytes, offset: int, length: int) -> bytes:
    """What the probe writes at `offset` (sector-aligned) for `length` bytes."""
    assert offset % SECTOR == 0 and length % SECTOR == 0
    out = bytearray()
    block = -1
    fill = b""
    for sector in range(offset, offset + length, SECTOR):
        start = sector // FILL_BLOCK * FILL_BLOCK
        if start != block:
            block, fill = start, _fill(nonce, start)
        within = sector - start
        out += header(Use.CAPACITY, nonce, sector)
        out += fill[within + BODY_AT : within + SECTOR]
    return bytes(out)


def is_signed(piece: bytes, nonce: bytes) -> bool:
    """Whether a sector holds a signature of the run with this nonce, for any offset (a
    wrapping device shows another address's there): the probe's own data."""
    return _origin(piece, nonce) is not None


def classify(data: bytes, nonce: bytes, offset: int, before: bytes | None = None) -> Reading:
    """What the block read back at `offset` is (`before`: its content before the probe)."""
    length = len(data)
    expected = signature(nonce, offset, length)
    if data == expected:
        return Reading(Found.OWN, own_sectors=length // SECTOR)
    kinds: list[Found] = []
    origin: int | None = None
    for index in range(length // SECTOR):
        piece = data[index * SECTOR : (index + 1) * SECTOR]
        previous = before[index * SECTOR : (index + 1) * SECTOR] if before else None
        mine = expected[index * SECTOR : (index + 1) * SECTOR]
        kind, source = _sector(piece, mine, nonce, previous)
        kinds.append(kind)
        if kind is Found.ALIAS and origin is None and source is not None:
            origin = source - index * SECTOR
    own = next((i for i, kind in enumerate(kinds) if kind is not Found.OWN), len(kinds))
    if origin is not None:
        return Reading(Found.ALIAS, origin, own)
    worst = next(kind for kind in kinds if kind is not Found.OWN)
    return Reading(worst, None, own)


def _sector(
    piece: bytes, mine: bytes, nonce: bytes, before: bytes | None
) -> tuple[Found, int | None]:
    if piece == mine:
        return Found.OWN, None
    origin = _origin(piece, nonce)
    if origin is not None:
        return Found.ALIAS, origin
    # Zeros and 0xFF first: a dropped write over a sector that held zeros reads as zeros.
    if piece == bytes(SECTOR):
        return Found.ZEROS, None
    if piece == b"\xff" * SECTOR:
        return Found.ERASED, None
    if before is not None and piece == before:
        return Found.UNCHANGED, None
    return Found.OTHER, None


def _origin(piece: bytes, nonce: bytes) -> int | None:
    """The offset whose signature of this run `piece` is, if it is one."""
    head = read_header(piece)
    if head is None or head.use != Use.CAPACITY or head.run != nonce or head.offset % SECTOR:
        return None
    return head.offset if piece == signature(nonce, head.offset, SECTOR) else None
