"""Power cuts through the whole stack: the switch a test's off/on commands use, what the card
keeps, where it comes back, and a card that never does."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.emulation.flash.model import Durability, FlashModel
from tests.emulation.flash.power import backing_file
from tests.emulation.io_helpers import opened_direct, read_block, write_block

pytestmark = pytest.mark.flash

MiB = 1 << 20
RECORD = 4096


def write_record(node: str, offset: int, byte: int, *, flush: bool) -> None:
    with opened_direct(node) as fd:
        write_block(fd, offset, bytes([byte]) * RECORD)
        if flush:
            os.fsync(fd)


def read_byte(node: str, offset: int) -> int:
    with opened_direct(node) as fd:
        return read_block(fd, offset, RECORD)[0]


def switch(command: str) -> None:
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_switch_commands_cut_an_honest_card_which_keeps_only_what_was_flushed(emulated_flash):
    card = emulated_flash(FlashModel(claimed_bytes=64 * MiB, durability=Durability.HONEST))
    home = card.path
    write_record(home, 0, 1, flush=True)
    write_record(home, RECORD, 2, flush=False)
    switch(card.power_command("off"))
    assert backing_file(home) is None, "a card without power leaves the host"
    assert not card.powered
    switch(card.power_command("on"))
    if card.path != home:  # only when another program took the free loop device meanwhile
        assert backing_file(home) not in (None, backing_file(card.path))
    assert (read_byte(card.path, 0), read_byte(card.path, RECORD)) == (1, 0)
    (cut,) = card.power_cuts()
    assert (cut.lost_writes, cut.lost_bytes, cut.flushed_lost_bytes) == (1, RECORD, 0)


def test_a_lying_card_loses_a_flushed_write_and_its_truth_says_so(emulated_flash):
    model = FlashModel(
        claimed_bytes=64 * MiB, durability=Durability.LYING, durable_lag_ns=2_000_000_000
    )
    card = emulated_flash(model)
    write_record(card.path, 0, 7, flush=True)
    cut = card.power_off()
    assert cut is not None and cut.flushed_lost_bytes == RECORD
    card.power_on()
    assert read_byte(card.path, 0) == 0


def test_a_card_comes_back_as_another_loop_device_when_its_own_is_taken(emulated_flash, tmp_path):
    card = emulated_flash(FlashModel(claimed_bytes=64 * MiB))
    home = card.path
    write_record(home, 0, 9, flush=True)
    card.power_off()
    stranger = tmp_path / "stranger.img"
    stranger.write_bytes(bytes(MiB))
    taken = subprocess.run(["losetup", home, str(stranger)], capture_output=True, text=True)
    if taken.returncode != 0:
        pytest.skip(f"{home} was taken by another program meanwhile: {taken.stderr.strip()}")
    try:
        came_back = card.power_on()
        assert came_back is not None and came_back != home
        assert read_byte(came_back, 0) == 9
        assert backing_file(home) == str(stranger), "the stranger's loop device is untouched"
    finally:
        subprocess.run(["losetup", "--detach", home], check=False)


def test_a_card_that_dies_at_its_second_power_cut_never_comes_back(emulated_flash):
    card = emulated_flash(FlashModel(claimed_bytes=64 * MiB, dies_at_power_cut=2))
    card.power_off()
    assert card.power_on() is not None
    image = backing_file(card.path)
    card.power_off()
    assert card.power_on() is None
    assert not card.powered
    attached = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True)
    assert attached.stdout == "", "no loop device maps the dead card"
