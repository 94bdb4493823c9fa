"""A real loop device on this machine: created, probed, detached (root only)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from flashmark.probe import probe_target
from flashmark.system.sysroot import SystemRoots


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="creating a loop device needs root")
@pytest.mark.skipif(shutil.which("losetup") is None, reason="losetup is not installed")
def test_loop_device_resolves_to_the_disk_holding_its_backing_file(tmp_path: Path) -> None:
    image = tmp_path / "backing.img"
    with image.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024)
    try:
        node = subprocess.run(
            ["losetup", "--find", "--show", str(image)],
            check=True, capture_output=True, text=True, timeout=30,
        ).stdout.strip()  # fmt: skip
    except subprocess.CalledProcessError as error:
        pytest.skip(f"losetup could not attach a loop device: {error.stderr.strip()}")
    try:
        report = probe_target(node, SystemRoots(), sample_s=0)
        assert report.layers[0].kind == "loop"
        assert str(image) in report.layers[0].detail
        assert report.devices and report.devices[0].kind != "loop"
    finally:
        subprocess.run(["losetup", "-d", node], check=False, timeout=30)
