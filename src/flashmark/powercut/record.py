"""The journal record: what the power-cut test writes, and how a read-back record is judged.
Every 512-byte sector is one of the sector format's (flashmark.system.sector_format), sealed
with its CRC-32 and naming its record (sequence, cycle, its index of the record's sectors),
so a torn record shows. The body: SHAKE-128 of (nonce, sequence), nothing a controller could
compress.
"""

from __future__ import annotations

import enum
import hashlib
import secrets
from collections.abc import Sequence

from flashmark.system.sector_format import (
    BODY_AT,
    BODY_BYTES,
    RUN_BYTES,
    SECTOR,
    Use,
    checksum_holds,
    header,
    read_header,
    seal,
)

NONCE_BYTES = RUN_BYTES


def new_nonce() -> bytes:
    return secrets.token_bytes(NONCE_BYTES)


def make_record(nonce: bytes, cycle: int, seq: int, offset: int, record_bytes: int) -> bytes:
    """The record with sequence number `seq`, written at `offset` in cycle `cycle`."""
    if record_bytes % SECTOR or record_bytes <= 0:
        raise ValueError(f"a record is a positive multiple of {SECTOR} bytes, not {record_bytes}")
    sectors = record_bytes // SECTOR
    payload = hashlib.shake_128(nonce + seq.to_bytes(8, "little")).digest(sectors * BODY_BYTES)
    out = bytearray(record_bytes)
    for index in range(sectors):
        at = index * SECTOR
        out[at : at + BODY_AT] = header(
            Use.POWERCUT,
            nonce,
            offset + at,
            sequence=seq,
            cycle=cycle,
            sector_number=index,
            sectors=sectors,
            checksummed=True,
        )
        out[at + BODY_AT : at + SECTOR] = payload[index * BODY_BYTES : (index + 1) * BODY_BYTES]
        seal(out, at)
    return bytes(out)


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
    head = read_header(found)
    if head is None or head.use != Use.POWERCUT or head.run != nonce:
        return SectorState.FOREIGN
    if not head.checksummed or not checksum_holds(found):
        return SectorState.DAMAGED
    mine = read_header(expected)
    # An intact sector of this run that is not the expected one: an older record left there
    # (the slot's previous round), or this very record's sector with other content (damage).
    return (
        SectorState.STALE if mine is None or head.sequence != mine.sequence else SectorState.DAMAGED
    )


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
