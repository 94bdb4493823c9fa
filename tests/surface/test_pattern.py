"""The per-sector pattern: every kind of wrong data is told apart, and right data never is."""

from __future__ import annotations

import pytest

from flashmark.surface.pattern import Kind, Pattern, Range, new_nonce
from flashmark.system.sector_format import OFFSET_AT, SECTOR

MiB = 1 << 20


@pytest.fixture(scope="module")
def pattern() -> Pattern:
    return Pattern(0x1234_5678_9ABC_DEF0)


def test_the_pattern_is_the_same_for_the_same_nonce_and_differs_per_offset(pattern):
    again = Pattern(pattern.nonce)
    assert pattern.expected_bytes(3 * MiB, 64 * 1024) == again.expected_bytes(3 * MiB, 64 * 1024)
    first, second = pattern.expected_bytes(0, SECTOR), pattern.expected_bytes(SECTOR, SECTOR)
    assert first != second
    # a window that starts inside the pad and crosses its end is still each sector's own
    across = pattern.expected_bytes(MiB - SECTOR, 2 * SECTOR)
    assert across[SECTOR:] == pattern.expected_bytes(MiB, SECTOR)
    assert pattern.expected_bytes(5 * MiB, 3 * MiB)[MiB : MiB + SECTOR] == (
        pattern.expected_bytes(6 * MiB, SECTOR)
    )


def test_data_as_written_has_no_mismatch(pattern):
    assert pattern.classify(pattern.expected_bytes(7 * SECTOR, 2 * MiB), 7 * SECTOR) == []


def test_an_aliased_block_names_the_offset_whose_data_it_holds(pattern):
    found = pattern.classify(pattern.expected_bytes(64 * MiB, MiB), 0)
    assert found == [Range(0, MiB, Kind.ALIASED, 64 * MiB)]


def test_each_kind_of_wrong_sector_is_told_apart(pattern):
    data = bytearray(pattern.expected_bytes(0, 8 * SECTOR))
    data[SECTOR : 2 * SECTOR] = bytes(SECTOR)  # dropped: zeros
    data[2 * SECTOR : 3 * SECTOR] = b"\xff" * SECTOR  # dropped: erased NAND
    data[3 * SECTOR : 4 * SECTOR] = Pattern(new_nonce()).expected_bytes(3 * SECTOR, SECTOR)
    data[4 * SECTOR + 100] ^= 0x01  # one flipped bit in the body
    data[5 * SECTOR : 6 * SECTOR] = pattern.expected_bytes(99 * SECTOR, SECTOR)  # aliased
    data[6 * SECTOR + OFFSET_AT] ^= 0x80  # the header's offset damaged, the body intact
    found = pattern.classify(bytes(data), 0)
    assert found == [
        Range(SECTOR, SECTOR, Kind.ZEROS),
        Range(2 * SECTOR, SECTOR, Kind.ERASED),
        Range(3 * SECTOR, SECTOR, Kind.STALE),
        Range(4 * SECTOR, SECTOR, Kind.CORRUPTED),
        Range(5 * SECTOR, SECTOR, Kind.ALIASED, 99 * SECTOR),
        Range(6 * SECTOR, SECTOR, Kind.CORRUPTED),
    ]


def test_foreign_data_is_stale_and_consecutive_aliases_merge(pattern):
    foreign = bytes(range(256)) * (2 * SECTOR // 256)
    assert pattern.classify(foreign, 0) == [Range(0, 2 * SECTOR, Kind.STALE)]
    data = bytearray(pattern.expected_bytes(0, 4 * SECTOR))
    data[SECTOR : 3 * SECTOR] = pattern.expected_bytes(1000 * SECTOR, 2 * SECTOR)
    assert pattern.classify(bytes(data), 0) == [
        Range(SECTOR, 2 * SECTOR, Kind.ALIASED, 1000 * SECTOR)
    ]


def test_a_zero_nonce_is_refused():
    with pytest.raises(ValueError, match="nonce"):
        Pattern(0)
