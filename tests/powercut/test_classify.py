"""Classifying a cycle's records as they read back, against what the device acknowledged:
what an honest card, a lying one, an out-of-order one and a torn write each leave."""

from __future__ import annotations

from collections.abc import Sequence

from flashmark.powercut.classify import classify
from flashmark.powercut.record import make_record
from flashmark.system.sector_format import SECTOR

NONCE = bytes(16)
RECORD = 4096
CYCLE = 3
FIRST = 1000


def record(seq: int) -> bytes:
    return make_record(NONCE, CYCLE, seq, offset(seq), RECORD)


def offset(seq: int) -> int:
    return (seq % 512) * RECORD


def judged(found: Sequence[bytes | None], flushed_through: int):
    return classify(
        found,
        first_seq=FIRST,
        nonce=NONCE,
        cycle=CYCLE,
        record_bytes=RECORD,
        offset_of=offset,
        flushed=lambda seq: seq <= flushed_through,
    )


def test_an_honest_card_keeps_every_flushed_record():
    found = [record(FIRST + n) for n in range(40)] + [None] * 3  # the unflushed tail is gone
    tally = judged(found, flushed_through=FIRST + 39)
    assert (tally.durable, tally.lost_after_flush, tally.lost_unflushed) == (40, 0, 3)
    assert not tally.reordered


def test_a_lying_card_loses_flushed_records_at_the_end():
    found = [record(FIRST + n) for n in range(30)] + [bytes(RECORD)] * 13
    tally = judged(found, flushed_through=FIRST + 39)
    assert (tally.durable, tally.lost_after_flush, tally.lost_unflushed) == (30, 10, 3)
    assert tally.first_lost_seq == FIRST + 30
    assert not tally.reordered


def test_an_out_of_order_card_leaves_holes_before_records_it_kept():
    found = [record(FIRST + n) if n % 3 else None for n in range(40)]
    tally = judged(found, flushed_through=FIRST + 31)
    assert tally.lost_after_flush == 11  # 0, 3, ..., 30
    assert tally.reordered
    assert tally.first_lost_seq == FIRST


def test_a_torn_record_is_counted_and_a_flushed_one_is_also_a_loss():
    torn = record(FIRST + 1)[: 2 * SECTOR] + bytes(RECORD - 2 * SECTOR)
    tally = judged([record(FIRST), torn, None], flushed_through=FIRST)
    assert (tally.torn, tally.lost_after_flush, tally.lost_unflushed) == (1, 0, 1)
    tally = judged([record(FIRST), torn, None], flushed_through=FIRST + 1)
    assert (tally.torn, tally.lost_after_flush, tally.lost_unflushed) == (1, 1, 1)
