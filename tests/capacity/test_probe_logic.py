"""The capacity probe's method on in-memory devices with known truth (no root, no I/O).

The in-memory device (memory_flash.py) follows the emulated flash's address rules, so these
run every fake kind at many real sizes in a second; tests/capacity/test_capacity_emulated.py
runs the same through the real block-device stack.
"""

from __future__ import annotations

import os

import pytest

from flashmark.capacity.backup import Journal, create_backup_file, read_backup, restore_records
from flashmark.capacity.search import (
    BLOCK_BYTES,
    SECTOR_BYTES,
    divisors,
    find_capacity,
    prime_factors,
)
from flashmark.capacity.signature import Found, classify, signature
from flashmark.errors import TargetError
from tests.capacity.memory_flash import MemoryFlash

MiB, GiB = 1 << 20, 1 << 30
NONCE = bytes(range(16))


def probe(device: MemoryFlash, *, backup: bool = True):
    journal = Journal(device, None, backup=backup)  # the backup in memory only
    return find_capacity(journal, os.urandom(16)), journal


def test_a_genuine_device_is_genuine_and_needs_no_follow_up():
    findings, _ = probe(MemoryFlash(4 * GiB))
    assert findings.verdict == "genuine"
    assert findings.real_bytes == 4 * GiB
    assert findings.steps == ()
    assert findings.behaviour == ()


FRACTIONS = (2, 3, 8, 64)  # benchmarks/capacity.py runs 1/2 .. 1/64 on emulated devices


@pytest.mark.parametrize("mode", ["wrap", "zeros", "erased", "drops"])
@pytest.mark.parametrize("fraction", FRACTIONS)
def test_every_fake_is_found_with_its_real_size(mode, fraction):
    claimed = 2 * GiB
    real = claimed // fraction // SECTOR_BYTES * SECTOR_BYTES
    device = MemoryFlash(claimed, real, mode, initial=b"\x5a" * 512)
    findings, _ = probe(device)
    assert findings.verdict == "fake"
    assert findings.granularity_bytes <= 1 * MiB
    assert findings.real_bytes is not None
    assert findings.real_bytes <= real < findings.real_bytes + findings.granularity_bytes
    expected = {"wrap": "wraps", "zeros": "zeros", "erased": "erased", "drops": "drops"}[mode]
    assert findings.behaviour == (expected,)


@pytest.mark.parametrize("mode", ["wrap", "zeros"])
@pytest.mark.parametrize("real", [256 * MiB + 3 * 512, 700 * MiB + 4096 + 1024, 33 * MiB])
def test_real_sizes_that_are_not_whole_blocks_are_exact_to_the_sector(mode, real):
    findings, _ = probe(MemoryFlash(1 * GiB, real, mode))
    assert findings.real_bytes == real


def test_a_read_cache_smaller_than_the_flush_does_not_hide_a_fake():
    # 2 MiB of the last written sectors served from RAM, as a controller cache would
    device = MemoryFlash(2 * GiB, 300 * MiB, "zeros", cache_blocks=4096)
    findings, _ = probe(device)
    assert findings.real_bytes == 300 * MiB


def test_a_device_with_almost_nothing_real_is_fake():
    findings, _ = probe(MemoryFlash(1 * GiB, 2 * MiB, "zeros"))
    assert findings.verdict == "fake"
    assert findings.real_bytes is None  # below the first block it may write
    assert "usable capacity is below" in findings.notes[0]


def test_too_small_a_device_is_refused():
    with pytest.raises(TargetError, match="too small"):
        probe(MemoryFlash(6 * MiB))


@pytest.mark.parametrize("real", [None, 512 * MiB, 100 * MiB + 512])
@pytest.mark.parametrize("mode", ["wrap", "zeros", "drops"])
def test_the_restore_leaves_the_device_as_it_was(real, mode):
    device = MemoryFlash(2 * GiB, real, mode, initial=b"\xa5" * 512)
    for offset in range(0, 2 * GiB, 97 * MiB):  # some data of its own
        device.write_bytes(offset, os.urandom(64 * 1024))
    before = device.image()
    _, journal = probe(device)
    assert device.image() != before  # the probe did write
    outcome = restore_records(device, journal.records, "memory")
    assert device.image() == before
    if real is None or mode != "wrap":
        assert outcome.differing_after_aliasing == 0


def test_signatures_name_their_sector_and_tell_what_came_back():
    block = signature(NONCE, 8192, BLOCK_BYTES)
    assert classify(block, NONCE, 8192).found is Found.OWN
    moved = classify(block, NONCE, 4096)
    assert (moved.found, moved.origin) == (Found.ALIAS, 8192)
    assert classify(bytes(BLOCK_BYTES), NONCE, 0).found is Found.ZEROS
    assert classify(b"\xff" * BLOCK_BYTES, NONCE, 0).found is Found.ERASED
    old = os.urandom(BLOCK_BYTES)
    assert classify(old, NONCE, 0, before=old).found is Found.UNCHANGED
    assert classify(old, NONCE, 0).found is Found.OTHER
    # another run's block is not this run's
    assert classify(signature(b"x" * 16, 0, BLOCK_BYTES), NONCE, 0).found is Found.OTHER
    # half a block shifted by a real size that is not a whole block
    shifted = signature(NONCE, 8192 + 1024, 1024) + signature(NONCE, 1024, 3072)
    reading = classify(shifted, NONCE, 0)
    assert (reading.found, reading.origin) == (Found.ALIAS, 8192 + 1024)


def test_divisors_and_prime_factors():
    assert prime_factors(12) == [2, 3]
    assert prime_factors(2**30 * 63) == [2, 3, 7]
    assert prime_factors(97) == [97]
    assert divisors(12) == [1, 2, 3, 4, 6, 12]
    assert divisors(1) == [1]
    assert divisors(49) == [1, 7, 49]


def test_the_backup_file_survives_a_cut_and_restores(tmp_path):
    device = MemoryFlash(64 * MiB, initial=b"\x11" * 512)
    path = create_backup_file(tmp_path, "dev", {"device": "/dev/x", "majmin": "7:0"})
    journal = Journal(device, path)
    journal.write([(8192, signature(NONCE, 8192, 4096)), (1 * MiB, os.urandom(8192))])
    journal.close()
    with path.open("ab") as stream:  # a record cut short by a kill: its write never happened
        stream.write(b"R\x00\x00")
    header, records = read_backup(path)
    assert header["majmin"] == "7:0"
    assert [(r.offset, len(r.data), r.pre_write) for r in records] == [
        (8192, 4096, True),
        (1 * MiB, 8192, True),
    ]
    restore_records(device, records, str(path))
    assert device.read_bytes(8192, 4096) == b"\x11" * 4096
    assert device.read_bytes(1 * MiB, 8192) == b"\x11" * 8192
