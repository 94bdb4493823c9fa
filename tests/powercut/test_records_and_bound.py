"""The journal record and the loss-rate bound, exactly: what a read-back record is judged to
be, and the Clopper-Pearson bound against published values and its own definition."""

from __future__ import annotations

import math

import pytest

from flashmark.powercut.bound import loss_rate_upper_bound, trials_for
from flashmark.powercut.record import (
    RecordState,
    SectorState,
    make_record,
    new_nonce,
    record_state,
    sector_state,
)
from flashmark.system.sector_format import SECTOR

NONCE = bytes(range(16))
RECORD = 4096


def test_a_record_is_the_same_every_time_and_differs_from_every_other():
    first = make_record(NONCE, 1, 7, 28672, RECORD)
    assert first == make_record(NONCE, 1, 7, 28672, RECORD)
    assert first != make_record(NONCE, 1, 8, 28672, RECORD)
    assert first != make_record(new_nonce(), 1, 7, 28672, RECORD)
    assert len(first) == RECORD


def test_a_record_read_back_whole_is_intact():
    record = make_record(NONCE, 1, 7, 0, RECORD)
    assert record_state(record, record, NONCE) is RecordState.INTACT


def test_a_record_half_new_half_old_is_torn():
    new = make_record(NONCE, 2, 109, 0, RECORD)
    old = make_record(NONCE, 1, 9, 0, RECORD)  # the slot's previous round
    found = new[: 3 * SECTOR] + old[3 * SECTOR :]
    assert record_state(found, new, NONCE) is RecordState.TORN


def test_a_record_never_written_is_lost_whatever_was_there_before():
    new = make_record(NONCE, 2, 109, 0, RECORD)
    older = make_record(NONCE, 1, 9, 0, RECORD)
    assert sector_state(older[:SECTOR], new[:SECTOR], NONCE) is SectorState.STALE
    assert record_state(older, new, NONCE) is RecordState.LOST
    assert record_state(bytes(RECORD), new, NONCE) is RecordState.LOST
    assert record_state(b"\xff" * RECORD, new, NONCE) is RecordState.LOST
    other_run = make_record(new_nonce(), 2, 9, 0, RECORD)
    assert record_state(other_run, new, NONCE) is RecordState.LOST


def test_a_sector_of_this_run_with_a_bad_checksum_makes_the_record_corrupt():
    new = make_record(NONCE, 2, 109, 0, RECORD)
    older = bytearray(make_record(NONCE, 1, 1, 0, RECORD))
    older[100] ^= 0x01  # a bit flipped in a stale sector: damaged, not just old
    assert sector_state(bytes(older[:SECTOR]), new[:SECTOR], NONCE) is SectorState.DAMAGED
    assert record_state(bytes(older), new, NONCE) is RecordState.CORRUPT


def test_the_right_header_with_other_content_is_damage_not_a_match():
    new = bytearray(make_record(NONCE, 2, 109, 0, RECORD))
    new[200] ^= 0xFF
    expected = make_record(NONCE, 2, 109, 0, RECORD)
    assert sector_state(bytes(new[:SECTOR]), expected[:SECTOR], NONCE) is SectorState.DAMAGED
    assert record_state(bytes(new), expected, NONCE) is RecordState.TORN  # 7 sectors are new


def test_a_short_read_counts_the_missing_sectors_as_never_written():
    new = make_record(NONCE, 2, 109, 0, RECORD)
    assert record_state(new[: 2 * SECTOR], new, NONCE) is RecordState.TORN
    assert record_state(b"", new, NONCE) is RecordState.LOST


@pytest.mark.parametrize(
    ("losses", "trials", "published"),
    [
        (0, 6, 0.3930),  # 1 - 0.05^(1/6)
        (0, 100, 0.0295),  # the "rule of three": about 3/100
        (1, 10, 0.3942),  # one-sided 95% Clopper-Pearson tables (= two-sided 90%)
        (5, 10, 0.7776),
    ],
)
def test_the_bound_matches_published_clopper_pearson_values(losses, trials, published):
    assert loss_rate_upper_bound(losses, trials) == pytest.approx(published, abs=1e-4)


@pytest.mark.parametrize(("losses", "trials"), [(1, 3), (2, 7), (3, 50), (10, 11)])
def test_the_bound_is_where_seeing_that_few_losses_has_a_five_percent_chance(losses, trials):
    bound = loss_rate_upper_bound(losses, trials)
    at_most = sum(
        math.comb(trials, k) * bound**k * (1 - bound) ** (trials - k) for k in range(losses + 1)
    )
    assert at_most == pytest.approx(0.05, abs=1e-9)


def test_the_bound_is_one_without_trials_or_when_every_cut_lost_data():
    assert loss_rate_upper_bound(0, 0) == 1.0
    assert loss_rate_upper_bound(4, 4) == 1.0


def test_five_clean_cuts_bound_the_loss_rate_below_half():
    assert trials_for(0.5) == 5
    assert loss_rate_upper_bound(0, 5) < 0.5 <= loss_rate_upper_bound(0, 4)
