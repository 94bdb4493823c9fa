"""The reserve every writing command leaves free, the plan it says before writing, the watch
that stops it when another writer fills the disk, and the rule for filling a whole filesystem
(flashmark.system.disk_space, flashmark.system.system_disk), on real filesystems."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from flashmark.errors import NotEnoughSpace, TargetNotFound
from flashmark.system.disk_space import DiskFilling, SpaceWatch, plan_space, reserve_bytes
from flashmark.system.sysroot import SystemRoots
from flashmark.system.system_disk import fill_refusal
from flashmark.units import format_size
from tests.emulation.runs import mounted_image

MiB, GiB = 1 << 20, 1 << 30


@pytest.mark.parametrize(
    ("size", "reserve"),
    [
        (16 * MiB, 4 * MiB),  # small: a quarter of it, the floor being more than it can spare
        (128 * MiB, 32 * MiB),
        (1 * GiB, 256 * MiB),
        (4 * GiB, 1 * GiB),  # from here the 1 GiB floor
        (10 * GiB, 1 * GiB),
        (20 * GiB, 1 * GiB),  # 5% of 20 GiB is the floor itself
        (100 * GiB, 5 * GiB),  # big: 5%
        (256 * GiB, int(12.8 * GiB)),
        (2048 * GiB, int(102.4 * GiB)),
    ],
)
def test_the_reserve_is_max_5_percent_1_gib_or_a_quarter_of_a_small_filesystem(size, reserve):
    assert reserve_bytes(size) == reserve


@pytest.fixture
def roots() -> SystemRoots:
    return SystemRoots.from_environment()


@pytest.fixture
def on_root(tmp_path: Path) -> Path:
    """The temporary folder, which these tests need on the root filesystem."""
    if os.stat(tmp_path).st_dev != os.stat("/").st_dev:
        pytest.skip("the temporary folder is not on the root filesystem here")
    return tmp_path


@pytest.mark.root
def test_the_root_filesystem_is_the_systems_and_a_preallocated_image_is_a_disk_of_its_own(
    on_root, roots
):
    root = plan_space(on_root, 0, roots).filesystem
    assert fill_refusal(root, roots) == "it is the filesystem of /, which the system runs from"
    with mounted_image(on_root / "card.img", 64 * MiB, sparse=False) as (node, folder):
        fs = plan_space(folder, 0, roots).filesystem
        assert fs.device == node and fs.fstype == "ext4" and fs.mount_point == str(folder)
        assert fill_refusal(fs, roots) is None


@pytest.mark.root
def test_a_sparse_image_on_the_root_filesystem_grows_there_and_is_judged_with_it(on_root, roots):
    image = on_root / "sparse.img"
    with mounted_image(image, 64 * MiB, sparse=True) as (_, folder):
        plan = plan_space(folder, 8 * MiB, roots)
        (grown,) = plan.images
        assert grown.path == str(image) and grown.host.st_dev == os.stat("/").st_dev
        assert 0 < grown.holes_bytes <= 64 * MiB
        assert f"; its image {image} can grow by 8 MiB on " in plan.line()
        refusal = fill_refusal(plan.filesystem, roots)
        assert refusal == (
            f"its sparse image {image} grows on the filesystem of /, which the system runs from"
        )


@pytest.mark.root
def test_a_write_that_would_eat_into_the_reserve_is_refused_and_a_filling_disk_is_seen(
    tmp_path, roots
):
    with mounted_image(tmp_path / "card.img", 128 * MiB, sparse=False) as (_, folder):
        fs = plan_space(folder, 0, roots).filesystem
        assert fs.reserve_bytes == reserve_bytes(fs.size_bytes)
        fits = plan_space(folder, fs.room_bytes, roots)
        fits.check("choose a smaller --size")
        assert fits.line().startswith(f"space    writes up to {format_size(fs.room_bytes)} to ")
        too_much = plan_space(folder, fs.room_bytes + MiB, roots)
        with pytest.raises(NotEnoughSpace, match="always leaves free: choose a smaller --size"):
            too_much.check("choose a smaller --size")
        watch = SpaceWatch(fits)
        watch.check(fs.room_bytes)  # nothing written yet: all of it still fits
        # Another writer takes half the room: what is left to write no longer fits.
        subprocess.run(
            ["fallocate", "-l", str(fs.room_bytes // 2), str(folder / "other")], check=True
        )
        watch.check(fs.room_bytes // 4)
        with pytest.raises(DiskFilling, match="is filling up"):
            watch.check(fs.room_bytes)


@pytest.mark.root
def test_the_watch_stays_on_its_filesystem_when_the_folder_is_moved_or_swapped_for_a_link(
    tmp_path, roots
):
    with mounted_image(tmp_path / "card.img", 128 * MiB, sparse=False) as (_, mount):
        folder = mount / "target"
        folder.mkdir()
        fs = plan_space(folder, 0, roots).filesystem
        watch = SpaceWatch(plan_space(folder, fs.room_bytes, roots))
        folder.rename(mount / "moved")  # what the folder's parent's owner may do mid-run
        watch.check(fs.room_bytes)
        folder.symlink_to(tmp_path)  # another filesystem, with room to spare
        subprocess.run(
            ["fallocate", "-l", str(fs.room_bytes // 2), str(mount / "moved" / "other")],
            check=True,
        )
        with pytest.raises(DiskFilling, match="is filling up"):
            watch.check(fs.room_bytes)


def test_a_folder_gone_before_its_plan_is_the_one_missing_target_refusal(tmp_path, roots):
    with pytest.raises(TargetNotFound, match=r": no such folder"):
        plan_space(tmp_path / "moved-away", 0, roots)
