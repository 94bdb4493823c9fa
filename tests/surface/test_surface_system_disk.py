"""A folder scan fills the free space it is given: never the system's own filesystem without
being told so, always leaving the reserve, and stopping when another writer fills the disk."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from flashmark.system.disk_space import reserve_bytes
from flashmark.units import format_size
from tests.cli_runner import flashmark_script as flashmark
from tests.emulation.flash.model import Backing, FlashModel
from tests.emulation.runs import mounted_image
from tests.surface.test_surface_flash import _wait_for, mounted_ext4

MiB = 1 << 20
MB = 10**6



def _free(folder: Path) -> int:
    stats = os.statvfs(folder)
    return stats.f_bavail * stats.f_frsize


@pytest.mark.root
@pytest.mark.parametrize("extra", [(), ("--yes",)], ids=["plain", "--yes does not count"])
def test_filling_the_root_filesystem_without_a_terminal_is_refused_and_writes_nothing(
    tmp_path, extra
):
    if os.stat(tmp_path).st_dev != os.stat("/").st_dev:
        pytest.skip("the temporary folder is not on the root filesystem here")
    folder = tmp_path / "empty mount point"
    folder.mkdir()
    history = tmp_path / "history"  # a first command's: the refusal does not create it either
    history.mkdir()
    free = _free(folder)
    done = flashmark("surface", str(folder), "--db", str(history / "history.sqlite3"), *extra)
    assert done.returncode == 4, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("flashmark: error: refusing to fill /dev/")
    assert " on /): it is the filesystem of /, which the system runs from; add " in line
    assert "--allow-system-disk" in line
    assert list(folder.iterdir()) == [] and list(history.iterdir()) == []
    # Other tests share this disk and write meanwhile; the scan would have taken all of it.
    assert _free(folder) > free - 512 * MiB


@pytest.mark.root
def test_a_preallocated_image_is_filled_up_to_its_reserve_without_being_asked(tmp_path):
    with mounted_image(tmp_path / "card.img", 256 * MiB, sparse=False) as (node, folder):
        stats = os.statvfs(folder)
        free, total = stats.f_bavail * stats.f_frsize, stats.f_blocks * stats.f_frsize
        done = flashmark("surface", str(folder), "--no-save", "--json")
        assert done.returncode == 0, done.stderr
        size = json.loads(done.stdout)["target"]["size_bytes"]
        assert free - reserve_bytes(total) - 2 * MiB < size <= free - reserve_bytes(total)
        left = format_size(free - size)
        expected = f"space    writes up to {format_size(size)} to {node} (ext4 on {folder}), "
        assert f"{expected}leaving at least {left} free" in done.stderr.splitlines()
        assert os.listdir(folder) == ["lost+found"]


@pytest.mark.root
def test_a_sparse_image_on_the_system_disk_is_refused_unless_allowed_and_a_size_is_not_a_fill(
    tmp_path,
):
    if os.stat(tmp_path).st_dev != os.stat("/").st_dev:
        pytest.skip("the temporary folder is not on the root filesystem here")
    image = tmp_path / "sparse.img"
    with mounted_image(image, 256 * MiB, sparse=True) as (node, folder):
        refused = flashmark("surface", str(folder), "--no-save")
        assert refused.returncode == 4, refused.stderr
        assert refused.stderr.strip() == (
            f"flashmark: error: refusing to fill {node} (ext4 on {folder}): its sparse image "
            f"{image} grows on the filesystem of /, which the system runs from; add "
            "--allow-system-disk to fill it anyway, or give --size to write less"
        )
        bounded = flashmark("surface", str(folder), "--no-save", "--size", "8M")
        assert bounded.returncode == 0, bounded.stderr
        assert f"; its image {image} can grow by 8 MiB on /dev/" in bounded.stderr
        allowed = flashmark("surface", str(folder), "--no-save", "--allow-system-disk")
        assert allowed.returncode == 0, allowed.stderr
        assert "files read back as written" in allowed.stdout.splitlines()[-1]


@pytest.mark.flash
def test_a_scan_stops_when_another_writer_fills_the_filesystem(emulated_flash):
    model = FlashModel(claimed_bytes=128 * MiB, write_bps=10 * MB, backing=Backing.MEMORY)
    device = emulated_flash(model)
    with mounted_ext4(device.path) as folder:
        argv = [sys.executable, "-m", "flashmark", "surface", str(folder), "--size", "24M"]
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            _wait_for(process, "write pass")
            stats = os.statvfs(folder)
            total = stats.f_blocks * stats.f_frsize
            # Another writer takes all but half the reserve: the scan must stop, not go on.
            other = stats.f_bavail * stats.f_frsize - reserve_bytes(total) // 2
            subprocess.run(["fallocate", "-l", str(other), str(folder / "other")], check=True)
            _, rest = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert process.returncode == 4, rest
        last = rest.strip().splitlines()[-1]
        assert f"flashmark: error: {device.path} (ext4 on {folder}) is filling up" in last
        assert "something else is writing there): stopped to leave" in last
        assert "the scan's files were removed" in last
        assert sorted(os.listdir(folder)) == ["lost+found", "other"]


def _typed(answer: str, *args: str) -> tuple[int, str]:
    """The command on a terminal (a pseudo-terminal as its stdin), `answer` typed at it."""
    main, secondary = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "flashmark", *args],
            stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        os.write(main, answer.encode() + b"\n")
        out, err = process.communicate(timeout=300)
    finally:
        os.close(main)
        os.close(secondary)
    return process.returncode, out + err


@pytest.mark.root
def test_on_a_terminal_the_device_must_be_typed_to_fill_a_sparse_image_on_the_system_disk(
    tmp_path,
):
    if os.stat(tmp_path).st_dev != os.stat("/").st_dev:
        pytest.skip("the temporary folder is not on the root filesystem here")
    with mounted_image(tmp_path / "sparse.img", 128 * MiB, sparse=True) as (node, folder):
        code, output = _typed("/dev/nothing", "surface", str(folder), "--no-save")
        assert code == 4, output
        asked = f"This fills {node} (ext4 on {folder}) up to the space flashmark leaves free"
        assert asked in output
        assert f"Type {node} to continue" in output
        assert f"confirmation did not match {node}; nothing was written" in output
        assert os.listdir(folder) == ["lost+found"]
        code, output = _typed(node, "surface", str(folder), "--no-save")
        assert code == 0, output
        assert "files read back as written" in output
