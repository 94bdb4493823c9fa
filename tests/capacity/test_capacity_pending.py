"""A capacity probe killed outright leaves its backup pending: what may happen until
`flashmark capacity --restore FILE`, and what that restore may put back.

- every command that writes a device refuses the device (found by its identity, whatever its
  path now) in one line naming the exact `--restore` line; another device is not refused;
- the restore puts a block back only where the device still holds the probe's signature
  blocks: a card re-imaged since keeps its new image, and the rest is reported as changed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.capacity.test_capacity_emulated import (
    _slow_card,
    _wait_for_writes,
    backups,
    probed_ranges,
    start,
)
from tests.cli_runner import flashmark_script
from tests.emulation.flash.model import FlashModel
from tests.emulation.io_helpers import opened_direct, read_block, write_block

pytestmark = pytest.mark.flash

MiB = 1 << 20


def flashmark(args: list[str], state: Path) -> subprocess.CompletedProcess[str]:
    return flashmark_script(*args, env={"XDG_STATE_HOME": str(state)})


def killed_probe(emulated_flash, state: Path):
    """A card with random data where the probe writes, probed and killed midway: the card,
    its size, what the probed ranges held before (start -> bytes), and the backup."""
    device, size, _ = _slow_card(emulated_flash)
    with opened_direct(device.path) as fd:
        originals = {start: read_block(fd, start, length) for start, length in probed_ranges(size)}
    process = start([device.path, "--no-save"], state)
    _wait_for_writes(device, process)
    process.kill()
    process.communicate(timeout=60)
    (backup,) = backups(state)
    return device, size, originals, backup


def refused_with_the_restore_line(done: subprocess.CompletedProcess[str], backup: Path) -> None:
    assert done.returncode == 4, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("flashmark: error: refusing to write to"), lines
    assert f"`flashmark capacity --restore {backup}`" in lines[-1]
    assert "Traceback" not in done.stderr


@contextmanager
def second_loop_on(image: Path) -> Iterator[str]:
    """Another loop device on the same emulated card (the same card at another number)."""
    node = subprocess.run(
        ["losetup", "--find", "--show", "--direct-io=on", str(image)],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    try:
        yield node
    finally:
        subprocess.run(["losetup", "--detach", node], capture_output=True, timeout=60)


def test_every_writing_command_refuses_a_device_whose_probe_backup_is_pending(
    emulated_flash, tmp_path
):
    device, _, _, backup = killed_probe(emulated_flash, tmp_path)
    for args in (
        ["run", device.path, "--destructive", "--yes", "--profile", "a1", "--size", "4M"],
        ["surface", device.path, "--destructive", "--yes"],
        ["capacity", device.path, "--no-save"],
        ["capacity", device.path, "--destructive", "--yes", "--no-save"],
    ):
        refused_with_the_restore_line(flashmark(args, tmp_path), backup)
    # the same card at another device number is the same device: refused too
    assert device.image is not None
    with second_loop_on(device.image) as other:
        refused_with_the_restore_line(
            flashmark(["surface", other, "--destructive", "--yes"], tmp_path), backup
        )
    # another card is another device: probed as usual while the first one's backup waits
    other_card = emulated_flash(FlashModel(claimed_bytes=256 * MiB))
    done = flashmark(["capacity", other_card.path, "--no-save"], tmp_path)
    assert done.returncode == 0, done.stderr
    # and the backup is not put back on it
    wrong = flashmark(["capacity", "--restore", str(backup), other_card.path], tmp_path)
    assert wrong.returncode == 2 and "is not the device" in wrong.stderr, wrong.stderr
    assert backups(tmp_path) == [backup]


def test_restore_after_a_reimage_puts_back_only_the_blocks_still_the_probes(
    emulated_flash, tmp_path
):
    device, _, originals, backup = killed_probe(emulated_flash, tmp_path)
    # Another tool writes a new image over the start of the card (the flush region, the first
    # marks): the probe's blocks there are gone, and the new data must stay.
    image_end = 16 * MiB
    new_image = os.urandom(image_end)
    with opened_direct(device.path) as fd:
        for offset in range(0, image_end, 4 * MiB):
            write_block(fd, offset, new_image[offset : offset + 4 * MiB])
    restored = flashmark(["capacity", "--restore", str(backup)], tmp_path)
    assert restored.returncode == 0, restored.stderr
    assert "changed since the probe" in restored.stderr and "left as they are" in restored.stderr
    assert backups(tmp_path) == []
    with opened_direct(device.path) as fd:
        assert read_block(fd, 0, image_end) == new_image  # the new image, untouched
        # beyond it, every range the probe wrote holds its original content again
        for start, data in originals.items():
            if start + len(data) > image_end:
                skip = max(0, image_end - start)
                assert read_block(fd, start + skip, len(data) - skip) == data[skip:], start
    # nothing is pending any more: the card is probed again as usual
    done = flashmark(["capacity", device.path, "--no-save"], tmp_path)
    assert done.returncode == 0, done.stderr
