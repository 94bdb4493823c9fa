"""The journal record: what the power-cut test writes, and how a read-back record is judged.
Every 512-byte sector describes itself (integers little-endian), so a torn record shows:

    0 magic b"FMPCUT01" (8) | 8 run nonce (16) | 24 sequence (u64) | 32 where written (u64)
    40 cycle (u32) | 44 sector index (u16) | 46 sectors (u16) | 48 CRC-32 of the rest (u32)
    52 payload (460): SHAKE-128 of (nonce, sequence), nothing a controller could compress
"""

from __future__ import annotations

import enum
import hashlib
import secrets
import struct
import zlib
from collections.abc import Sequence

SECTOR = 512
MAGIC = b"FMPCUT01"
NONCE_BYTES = 16
_HEADER = struct.Struct("<8s16sQQIHH")  # magic, nonce, seq, offset, cycle, index, sectors
_CRC = struct.Struct("<I")
_CRC_AT = _HEADER.size  # 48
_PAYLOAD_AT = _CRC_AT + _CRC.size  # 52
_PAYLOAD_BYTES = SECTOR - _PAYLOAD_AT


def new_nonce() -> bytes:
    return secrets.token_bytes(NONCE_BYTES)


def make_record(nonce: bytes, cycle: int, seq: int, offset: int, record_bytes: int) -> bytes:
    """The record with sequence number `seq`, written at `offset` in cycle `cycle`."""
    if record_bytes % SECTOR or record_bytes <= 0:
        raise ValueError(f"a record is a positive multiple of {SECTOR} bytes, not {record_bytes}")
    sectors = record_bytes // SECTOR
    payload = hashlib.shake_128(nonce + seq.to_bytes(8, "little")).digest(sectors * _PAYLOAD_BYTES)
    out = bytearray(record_bytes)
    for index in range(sectors):
        at = index * SECTOR
        _HEADER.pack_into(out, at, MAGIC, nonce, seq, offset + at, cycle, index, sectors)
        chunk = payload[index * _PAYLOAD_BYTES : (index + 1) * _PAYLOAD_BYTES]
        out[at + _PAYLOAD_AT : at + SECTOR] = chunk
        _CRC.pack_into(out, at + _CRC_AT, _sector_crc(out, at))
    return bytes(out)


def _sector_crc(data: bytes | bytearray | memoryview, at: int) -> int:
    head = zlib.crc32(data[at : at + _CRC_AT])
    return zlib.crc32(data[at + _PAYLOAD_AT : at + SECTOR], head)


class SectorState(enum.StrEnum):
    NEW = "new"  # exactly what this record wrote there
    STALE = "stale"  # an intact sector of another record of this run (an older one)
    DAMAGED = "damaged"  # a sector of this run whose CRC or content does not hold
    FOREIGN = "foreign"  # anything else: what was there before the run, zeros, garbage


class RecordState(enum.StrEnum):
    INTACT = "intact"  # every sector as written
    LOST = "lost"  # no sector of it: the old content, or nothing of this run
    TORN = "torn"  # some sectors new, the others not: a write cut in the middle
    CORRUPT = "corrupt"  # nothing of it intact and a sector of this run damaged


def sector_state(
    found: bytes | memoryview, expected: bytes | memoryview, nonce: bytes
) -> SectorState:
    """What one 512-byte sector read back holds, against what the record put there."""
    if found == expected:
        return SectorState.NEW
    magic, run = bytes(found[:8]), bytes(found[8 : 8 + NONCE_BYTES])
    if magic != MAGIC or run != nonce:
        return SectorState.FOREIGN
    stored = _CRC.unpack_from(found, _CRC_AT)[0]
    if stored != _sector_crc(found, 0):
        return SectorState.DAMAGED
    seq_found = _HEADER.unpack_from(found, 0)[2]
    seq_expected = _HEADER.unpack_from(expected, 0)[2]
    # An intact sector of this run that is not the expected one: an older record left there
    # (the slot's previous round), or this very record's sector with other content (damage).
    return SectorState.STALE if seq_found != seq_expected else SectorState.DAMAGED


def record_state(found: bytes | memoryview, expected: bytes, nonce: bytes) -> RecordState:
    """Judge a read-back record (shorter than expected: the rest counts as never written)."""
    states = [
        sector_state(found[at : at + SECTOR], expected[at : at + SECTOR], nonce)
        if at + SECTOR <= len(found)
        else SectorState.FOREIGN
        for at in range(0, len(expected), SECTOR)
    ]
    return judge_sectors(states)


def judge_sectors(states: Sequence[SectorState]) -> RecordState:
    new = sum(state is SectorState.NEW for state in states)
    if new == len(states):
        return RecordState.INTACT
    if new:
        return RecordState.TORN
    if any(state is SectorState.DAMAGED for state in states):
        return RecordState.CORRUPT
    return RecordState.LOST
