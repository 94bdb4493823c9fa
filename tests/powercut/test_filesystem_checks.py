"""What the filesystem mode makes of fsck, on ext4 images in files (e2fsck needs no device),
and the reasons a machine cannot run a filesystem mode."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from flashmark.powercut.filesystem import check_ext4, filesystem_missing
from flashmark.system.sysroot import SystemRoots

needs_e2fsprogs = pytest.mark.skipif(
    shutil.which("mkfs.ext4") is None, reason="e2fsprogs is not installed"
)


def ext4_image(tmp_path: Path) -> Path:
    image = tmp_path / "card.img"
    with image.open("wb") as handle:
        handle.truncate(32 << 20)
    subprocess.run(["mkfs.ext4", "-F", "-q", str(image)], check=True)
    return image


def number(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found is not None, f"dumpe2fs said nothing like {pattern!r}"
    return int(found.group(1))


@needs_e2fsprogs
def test_a_clean_filesystem_is_clean(tmp_path):
    check = check_ext4(str(ext4_image(tmp_path)))
    assert (check.tool, check.state, check.exit_status, check.problems) == (
        "e2fsck",
        "clean",
        0,
        (),
    )


@needs_e2fsprogs
def test_a_damaged_filesystem_is_repaired_and_its_problems_listed(tmp_path):
    image = ext4_image(tmp_path)
    layout = subprocess.run(["dumpe2fs", str(image)], capture_output=True, text=True).stdout
    block_bytes = number(r"Block size:\s+(\d+)", layout)
    bitmap = number(r"Block bitmap at (\d+)", layout)
    with image.open("r+b") as handle:  # blocks in use marked free: what a lost write leaves
        handle.seek(bitmap * block_bytes + 100)
        handle.write(bytes(200))
    check = check_ext4(str(image))
    assert (check.state, check.exit_status) == ("repaired", 1), check
    assert check.problems[0].startswith("Block bitmap differences:")
    assert check_ext4(str(image)).state == "clean"


def test_a_kernel_without_the_filesystem_is_named(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "filesystems").write_text("nodev\tproc\n\text4\n")
    roots = SystemRoots(sysfs=tmp_path / "sys", procfs=tmp_path / "proc")
    if shutil.which("mkfs.f2fs") is None:
        assert filesystem_missing("f2fs", roots) == (
            "--filesystem f2fs needs mkfs.f2fs (apt-get install f2fs-tools)"
        )
    else:
        assert filesystem_missing("f2fs", roots) == (
            "this kernel has no f2fs (/proc/filesystems does not list it; CONFIG_F2FS_FS)"
        )
    if shutil.which("mkfs.ext4") is not None:
        assert filesystem_missing("ext4", roots) is None
