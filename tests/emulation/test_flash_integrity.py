"""Emulated flash through the whole stack (nbdkit, nbdfuse, direct-I/O loop): what is stored
where, what fails, and that nothing is left behind.

Signature blocks (each names the offset it was written at) are written and read back with
O_DIRECT on /dev/loopN, so aliased, dropped and zeroed blocks are told apart exactly.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.emulation.flash.device import EmulatedFlash
from tests.emulation.flash.model import Backing, BadRange, FakeMode, FlashModel
from tests.emulation.flash.power import backing_file
from tests.emulation.io_helpers import (
    BLOCK,
    opened_direct,
    read_block,
    run_fio,
    signature,
    write_block,
)

pytestmark = pytest.mark.flash

MiB = 1 << 20
GiB = 1 << 30


def expected_reads(model: FlashModel, writes: list[int], reads: list[int]) -> dict[int, bytes]:
    """What each read must return, from the model's address map (`locate`) alone."""
    stored: dict[int, bytes] = {}
    for offset in writes:
        located = model.locate(offset)
        if located is not None:
            stored[located] = signature(offset)
    expected = {}
    for offset in reads:
        located = model.locate(offset)
        if located is None:
            expected[offset] = bytes([model.beyond_fill()]) * BLOCK
        else:
            expected[offset] = stored.get(located, bytes(BLOCK))  # never written: sparse zeros
    return expected


CASES = {
    # a genuine card: every block where it was written
    "genuine-1GiB": FlashModel(claimed_bytes=1 * GiB),
    # the common counterfeit: 64 GiB claimed, 64 MiB real, addresses wrap
    "wrap-64GiB-on-64MiB": FlashModel(claimed_bytes=64 * GiB, real_bytes=64 * MiB),
    "zeros-1GiB-on-64MiB": FlashModel(1 * GiB, real_bytes=64 * MiB, fake=FakeMode.ZEROS),
    # erased NAND beyond, and the real capacity in nbdkit's memory instead of a sparse file
    "erased-1GiB-on-64MiB-in-memory": FlashModel(
        1 * GiB, real_bytes=64 * MiB, fake=FakeMode.ERASED, backing=Backing.MEMORY
    ),
}


@pytest.mark.parametrize("model", CASES.values(), ids=CASES.keys())
def test_signatures_read_back_where_the_model_stores_them(emulated_flash, model):
    real, claimed = model.real_capacity, model.claimed_bytes
    writes = [0, 3 * BLOCK, real - BLOCK, claimed - BLOCK]
    if model.is_fake:
        writes += [real, real + 2 * BLOCK, 5 * real + 3 * BLOCK]  # the last aliases 3*BLOCK
    reads = sorted({*writes, BLOCK, 2 * BLOCK, claimed // 2})
    device = emulated_flash(model)
    assert os.path.getsize(device.image) == claimed
    with opened_direct(device.path) as fd:
        for offset in writes:
            write_block(fd, offset, signature(offset))
        found = {offset: read_block(fd, offset) for offset in reads}
    assert found == expected_reads(model, writes, reads)
    if model.is_fake and model.fake is FakeMode.WRAP:
        # spelled out: the block written 5 real capacities further overwrote the early one
        assert found[3 * BLOCK] == signature(5 * real + 3 * BLOCK)
        assert found[2 * BLOCK] == signature(real + 2 * BLOCK)
    elif model.is_fake:
        assert found[real] == bytes([model.beyond_fill()]) * BLOCK
        assert found[3 * BLOCK] == signature(3 * BLOCK)
    stats = device.stats()
    assert stats.bytes_written == len(writes) * BLOCK
    assert stats.bytes_read == len(reads) * BLOCK


def test_bad_ranges_fail_with_eio_exactly_there(emulated_flash, tmp_path: Path):
    unreadable = BadRange(MiB + 3 * BLOCK, 2 * BLOCK)
    unwritable = BadRange(2 * MiB, BLOCK, reads=True, writes=True)
    model = FlashModel(claimed_bytes=64 * MiB, bad_ranges=(unreadable, unwritable))
    device = emulated_flash(model)
    failed_reads, failed_writes = [], []
    with opened_direct(device.path) as fd:
        for offset in range(MiB, MiB + 16 * BLOCK, BLOCK):
            try:
                read_block(fd, offset)
            except OSError as error:
                assert error.errno == errno.EIO
                failed_reads.append(offset)
        for offset in (2 * MiB - BLOCK, 2 * MiB, 2 * MiB + BLOCK):
            try:
                write_block(fd, offset, signature(offset))
            except OSError as error:
                assert error.errno == errno.EIO
                failed_writes.append(offset)
        write_block(fd, unreadable.start, signature(1))  # writable, yet still unreadable
        with pytest.raises(OSError, match="Input/output error"):
            read_block(fd, unreadable.start)
    assert failed_reads == [unreadable.start, unreadable.start + BLOCK]
    assert failed_writes == [unwritable.start]
    stats = device.stats()
    assert (stats.read_errors, stats.write_errors) == (3, 1)
    # fio meets the same error at the same place
    done = run_fio(["--name=bad", f"--filename={device.path}", "--rw=read", "--bs=64k",
                    f"--offset={MiB}", "--size=1M"])  # fmt: skip
    assert done.returncode != 0
    assert "Input/output error" in done.stdout + done.stderr


def test_the_device_vanishes_after_its_byte_budget_and_on_request(emulated_flash):
    device = emulated_flash(FlashModel(claimed_bytes=64 * MiB, vanish_after_bytes=MiB))
    served = 0
    with opened_direct(device.path) as fd:
        for offset in range(0, 4 * MiB, BLOCK):
            try:
                write_block(fd, offset, signature(offset))
            except OSError as error:
                assert error.errno == errno.EIO
                break
            served += BLOCK
        assert served == MiB
        with pytest.raises(OSError):
            read_block(fd, 0)
        assert device.stats().vanished == 1

        device.reset()  # the card is back (a new budget of 1 MiB), its data intact
        assert read_block(fd, BLOCK) == signature(BLOCK)
        device.vanish()
        with pytest.raises(OSError) as gone:
            read_block(fd, BLOCK)
        assert gone.value.errno == errno.EIO
    done = run_fio(["--name=gone", f"--filename={device.path}", "--rw=read", "--bs=4k",
                    "--size=64k"])  # fmt: skip
    assert done.returncode != 0


def _leftovers(device: EmulatedFlash) -> list[str]:
    assert device.image is not None
    found = []
    if backing_file(device.path) == str(device.image):
        found.append(f"{device.path} still attached")
    if str(device.image.parent) in Path("/proc/mounts").read_text():
        found.append(f"{device.image.parent} still mounted")
    if device.image.parent.parent.exists():
        found.append(f"{device.image.parent.parent} still exists")
    return found


@pytest.mark.parametrize("interruption", [RuntimeError, KeyboardInterrupt])
def test_everything_is_removed_when_the_block_is_left_by_an_exception(interruption):
    device = EmulatedFlash(FlashModel(claimed_bytes=16 * MiB))
    with pytest.raises(interruption), device:
        with opened_direct(device.path) as fd:
            write_block(fd, 0, signature(0))
        raise interruption("stop")
    assert _leftovers(device) == []
