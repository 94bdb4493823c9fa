"""`flashmark capacity` on emulated cards whose truth is known (nbdkit + nbdfuse + loop).

The command runs as a subprocess, as a user runs it. A genuine card must come back
byte-identical (checksum of the whole device before and after); fakes must be found with their
real size; Ctrl-C and SIGTERM mid-probe must restore; after a SIGKILL, `--restore FILE` must.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flashmark.capacity.search import plan_layout
from tests.emulation.flash.device import EmulatedFlash
from tests.emulation.flash.model import FakeMode, FlashModel
from tests.emulation.io_helpers import opened_direct, read_block, write_block

pytestmark = pytest.mark.flash

MiB, GiB = 1 << 20, 1 << 30
CHUNK = 4 * MiB


def capacity(args: list[str], state: Path, **options) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flashmark", "capacity", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_STATE_HOME": str(state)},
        **options,
    )


def start(args: list[str], state: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "flashmark", "capacity", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state)},
    )


def digest(path: str, size: int) -> str:
    """SHA-256 of the whole device, read with O_DIRECT (what the flash holds, not a cache)."""
    hasher = hashlib.sha256()
    with opened_direct(path) as fd:
        for offset in range(0, size, CHUNK):
            hasher.update(read_block(fd, offset, min(CHUNK, size - offset)))
    return hasher.hexdigest()


def fill(path: str, ranges: list[tuple[int, int]]) -> None:
    """Random data where the probe will write, so that a restore has something to get right."""
    with opened_direct(path) as fd:
        for start, length in ranges:
            for offset in range(start, start + length, CHUNK):
                write_block(fd, offset, os.urandom(min(CHUNK, start + length - offset)))


def probed_ranges(size: int) -> list[tuple[int, int]]:
    layout = plan_layout(size)
    ranges = [(0, layout.flush_start + layout.flush_bytes + 2 * MiB)]
    ranges += [(mark, 4096) for mark in layout.marks[1:]]
    ranges.append((layout.window_start, layout.window_bytes))
    return ranges


def backups(state: Path) -> list[Path]:
    folder = state / "flashmark" / "capacity-backups"
    return sorted(folder.glob("*.backup")) if folder.is_dir() else []


def test_a_genuine_card_is_byte_identical_afterwards_and_saved(emulated_flash, tmp_path):
    size = 256 * MiB
    device = emulated_flash(FlashModel(claimed_bytes=size))
    fill(device.path, [(0, size)])
    before = digest(device.path, size)
    done = capacity([device.path, "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "flashmark.capacity/1"
    assert (document["verdict"], document["real_bytes"]) == ("genuine", size)
    assert document["claimed_bytes"] == size
    assert document["backup"]["restored"] is True
    assert digest(device.path, size) == before
    assert backups(tmp_path) == []
    shown = subprocess.run(
        [sys.executable, "-m", "flashmark", "show", str(document["id"])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "genuine" in shown.stdout


FAKES = {
    "wrap-64GiB-on-1GiB": FlashModel(64 * GiB, real_bytes=1 * GiB),
    "zeros-4GiB-on-64MiB": FlashModel(4 * GiB, real_bytes=64 * MiB, fake=FakeMode.ZEROS),
    "erased-2GiB-on-1GiB-plus-a-sector": FlashModel(
        2 * GiB, real_bytes=1 * GiB + 512, fake=FakeMode.ERASED
    ),
}


@pytest.mark.parametrize("model", FAKES.values(), ids=FAKES.keys())
def test_fakes_are_found_with_their_real_size(emulated_flash, tmp_path, model):
    device = emulated_flash(model)
    done = capacity([device.path, "--json", "--no-save"], tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["verdict"] == "fake"
    real, granularity = document["real_bytes"], document["granularity_bytes"]
    assert granularity <= 1 * MiB
    assert real <= model.real_capacity < real + granularity
    expected = {FakeMode.WRAP: "wraps", FakeMode.ZEROS: "zeros", FakeMode.ERASED: "erased"}
    assert document["behaviour"] == [expected[model.fake]]
    assert document["evidence"]["anomalies_total"] > 0
    assert backups(tmp_path) == []


def _slow_card(emulated_flash) -> tuple[EmulatedFlash, int, str]:
    size = 1 * GiB
    # 8 MB/s of writes: the probe's ~10 MiB of writes take a second or more, time to stop it
    # midway
    device = emulated_flash(FlashModel(claimed_bytes=size, write_bps=8_000_000))
    fill(device.path, probed_ranges(size))
    device.reset()
    return device, size, digest(device.path, size)


def _written(device: EmulatedFlash) -> int:
    # The counters are read under a seqlock that gives up (RuntimeError) when the engine keeps
    # updating them, which a busy probe does: then they count as not yet there.
    try:
        return device.stats().bytes_written
    except RuntimeError:
        return 0


def _wait_for_writes(device: EmulatedFlash, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while _written(device) < 1 * MiB:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("stop", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_a_stop_midway_restores_before_exiting(emulated_flash, tmp_path, stop, status):
    device, size, before = _slow_card(emulated_flash)
    process = start([device.path, "--no-save"], tmp_path)
    _wait_for_writes(device, process)
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == status, stderr
    # stopped during the probe, or during the restore (then held until it is done)
    assert "restored and verified" in stderr
    assert stderr.strip().splitlines()[-1].startswith("flashmark: error: stopped by")
    assert digest(device.path, size) == before
    assert backups(tmp_path) == []


def test_after_a_sigkill_the_backup_file_puts_it_back(emulated_flash, tmp_path):
    device, size, before = _slow_card(emulated_flash)
    process = start([device.path, "--no-save"], tmp_path)
    _wait_for_writes(device, process)
    process.kill()
    process.communicate(timeout=60)
    assert digest(device.path, size) != before  # the probe's blocks are on the device
    (backup,) = backups(tmp_path)
    # a new probe refuses until the backup is back
    again = capacity([device.path, "--no-save"], tmp_path)
    assert again.returncode == 4
    assert f"--restore {backup}" in again.stderr
    restored = capacity(["--restore", str(backup)], tmp_path)
    assert restored.returncode == 0, restored.stderr
    assert digest(device.path, size) == before
    assert backups(tmp_path) == []


def test_destructive_asks_and_then_skips_the_backup(emulated_flash, tmp_path):
    device = emulated_flash(FlashModel(claimed_bytes=128 * MiB))
    refused = capacity([device.path, "--destructive", "--no-save"], tmp_path,
                       stdin=subprocess.DEVNULL)  # fmt: skip
    assert refused.returncode == 4
    assert "--yes" in refused.stderr
    assert _written(device) == 0
    done = capacity([device.path, "--destructive", "--yes", "--json", "--no-save"], tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["verdict"], document["backup"], document["destructive"]) == (
        "genuine",
        None,
        True,
    )
    assert backups(tmp_path) == []


def test_a_mounted_device_is_refused_and_left_alone(emulated_flash, tmp_path):
    device = emulated_flash(FlashModel(claimed_bytes=64 * MiB))
    # Inode tables and journal initialised now: mounted, ext4 would otherwise zero them from a
    # background thread (ext4lazyinit, ext4(5) "init_itable"), writes that are not the
    # refused run's (CI saw 1,569,792 bytes written while the device was refused).
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device.path],
        check=True,
        timeout=60,
    )
    mount = tmp_path / "mnt"
    mount.mkdir()
    subprocess.run(["mount", device.path, str(mount)], check=True, timeout=60)
    try:
        device.reset()
        refused = capacity([device.path, "--no-save"], tmp_path / "state")
        written = _written(device)  # before the unmount, which writes the superblock
    finally:
        subprocess.run(["umount", str(mount)], check=True, timeout=60)
    assert refused.returncode == 4
    assert f"refusing to write to {device.path}" in refused.stderr
    assert f"mounted on {mount}" in refused.stderr
    assert written == 0
