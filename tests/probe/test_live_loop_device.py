"""A real loop device on this machine: created, probed, detached (root only)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from flashmark.probe.target import probe_target
from flashmark.system.sysroot import SystemRoots


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="creating a loop device needs root")
@pytest.mark.skipif(shutil.which("losetup") is None, reason="losetup is not installed")
def test_a_loop_device_is_the_device_measured_not_the_disk_of_its_file(tmp_path: Path) -> None:
    """Its image is what a run measures and what results are filed under: a run on it must not
    be taken for one on the host's own disk."""
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
        (device,) = report.devices
        assert (device.kind, f"/dev/{device.name}") == ("loop", node)
        assert device.capacity_bytes == 16 * 1024 * 1024
        # where the image lives is still recorded, as a layer, below the loop
        assert [layer.kind for layer in report.layers[1:3]] == ["filesystem", "device"]
        assert report.layers[2].detail == "holds the backing file, not the device measured"
    finally:
        subprocess.run(["losetup", "-d", node], check=False, timeout=30)
