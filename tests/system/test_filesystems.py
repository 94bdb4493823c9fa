"""What a run leaves on the filesystems cards are formatted with besides ext4: nothing.

btrfs lists, through a folder's descriptor, only the entries that existed when it was opened
(even after rewinddir), so the test file made after the private folder was opened stayed
behind ("the test file could not be removed ... Directory not empty"). Real btrfs (with and
without compression), XFS and exFAT (in FUSE) filesystems on loop images, next to ext4.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.system.private_folder import make_private_folder, remove_private_folder
from tests.cli_runner import flashmark

MiB = 1 << 20

# (mkfs and its options, the mount command, the image's size: XFS wants 300 MB at least).
# This kernel may have no exFAT of its own: exfat-fuse (Debian's package) mounts it in FUSE.
FILESYSTEMS = {
    "ext4": (["mkfs.ext4", "-q", "-F"], ["mount"], 256 * MiB),
    "btrfs": (["mkfs.btrfs", "-q", "-f"], ["mount"], 256 * MiB),
    "btrfs-zstd": (["mkfs.btrfs", "-q", "-f"], ["mount", "-o", "compress=zstd"], 256 * MiB),
    "xfs": (["mkfs.xfs", "-q", "-f"], ["mount"], 320 * MiB),
    "exfat-fuse": (["mkfs.exfat"], ["mount.exfat-fuse"], 256 * MiB),
}


@contextlib.contextmanager
def mounted(image: Path, name: str) -> Iterator[Path]:
    """A new filesystem `name` (FILESYSTEMS) on a loop device of `image`, mounted; the mount
    and the loop device removed afterwards."""
    mkfs, mount_command, size = FILESYSTEMS[name]
    for tool in (mkfs[0], mount_command[0]):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is missing (install.sh --dev installs it)")
    with image.open("wb") as handle:
        handle.truncate(size)
    subprocess.run([*mkfs, str(image)], check=True, capture_output=True, timeout=60)
    mount = image.with_suffix(".mnt")
    mount.mkdir()
    loop = subprocess.run(
        ["losetup", "--find", "--show", "--direct-io=on", str(image)],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    try:
        subprocess.run(
            [*mount_command, loop, str(mount)], check=True, capture_output=True, timeout=60
        )
        try:
            yield mount
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True, timeout=60)
    finally:
        subprocess.run(["losetup", "--detach", loop], capture_output=True, timeout=60)


@pytest.fixture(params=list(FILESYSTEMS))
def card_folder(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("needs root: loop devices and mounts")
    with mounted(tmp_path / f"{request.param}.img", request.param) as mount:
        folder = mount / "photos"
        folder.mkdir()
        yield folder


@pytest.mark.root
def test_the_private_folder_goes_with_what_was_made_in_it(card_folder: Path) -> None:
    parent = os.open(card_folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        private = make_private_folder(parent, str(card_folder), ".flashmark-test.d")
        # made after the folder was opened (and listed, to check it was empty), as the test file
        descriptor = os.open(
            "test.tmp", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600, dir_fd=private.fd
        )
        os.write(descriptor, b"x" * 4096)
        os.close(descriptor)
        os.mkdir("fio-work", dir_fd=private.fd)
        assert remove_private_folder(parent, private) is None
    finally:
        os.close(parent)
    assert list(card_folder.iterdir()) == []


@pytest.mark.root
@pytest.mark.fio
def test_a_run_leaves_nothing_in_the_folder(card_folder: Path) -> None:
    done = flashmark(
        "run", card_folder, "--profile", "quick", "--runtime", "1", "--size", "16M", "--no-save"
    )
    assert done.returncode == 0, done.stderr
    assert "could not be removed" not in done.stderr
    assert list(card_folder.iterdir()) == []
