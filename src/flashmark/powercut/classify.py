"""Every record of a cycle, read back after the cut, against what the device acknowledged:
durable (intact), lost after a flush (a recorded flush or FUA write covered it: a broken
promise), lost unflushed (allowed: a cache may lose it), torn or corrupt (record.py; also a
loss after a flush when flushed). A flushed record lost while a later one survived means the
cache was written back out of order (`reordered`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from flashmark.powercut.record import RecordState, make_record, record_state


@dataclass(frozen=True)
class Tally:
    records: int  # classified
    durable: int
    lost_after_flush: int
    lost_unflushed: int
    torn: int
    corrupt: int
    reordered: bool
    first_lost_seq: int | None


def classify(
    found: Iterable[bytes | None],
    *,
    first_seq: int,
    nonce: bytes,
    cycle: int,
    record_bytes: int,
    offset_of: Callable[[int], int],
    flushed: Callable[[int], bool],
) -> Tally:
    """`found` holds the records first_seq, first_seq + 1, ... as read back (None: nothing
    there, such as a missing file)."""
    durable = lost_after_flush = lost_unflushed = torn = corrupt = records = 0
    first_lost: int | None = None
    last_intact: int | None = None
    for seq, data in enumerate(found, start=first_seq):
        records += 1
        expected = make_record(nonce, cycle, seq, offset_of(seq), record_bytes)
        state = RecordState.LOST if data is None else record_state(data, expected, nonce)
        if state is RecordState.INTACT:
            durable += 1
            last_intact = seq
            continue
        torn += state is RecordState.TORN
        corrupt += state is RecordState.CORRUPT
        if flushed(seq):
            lost_after_flush += 1
            first_lost = seq if first_lost is None else first_lost
        elif state is RecordState.LOST:
            lost_unflushed += 1
    reordered = first_lost is not None and last_intact is not None and last_intact > first_lost
    return Tally(
        records, durable, lost_after_flush, lost_unflushed, torn, corrupt, reordered, first_lost
    )
