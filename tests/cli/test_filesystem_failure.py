"""A filesystem that fails mid-run gives one line and exit 5, and says what became of the
test file.

ext4 is shut down in the middle of a test with the EXT4_IOC_SHUTDOWN ioctl (what `xfs_io -c
shutdown` and fstests use): from then on every I/O on it fails with EIO, including the removal
of the test file. Before, this gave "internal error", exit 1.
"""

import fcntl
import os
import struct
import subprocess
import time
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import started
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

# linux fs/ext4/ext4.h: #define EXT4_IOC_SHUTDOWN _IOR('X', 125, __u32), and
# EXT4_GOING_FLAGS_NOLOGFLUSH 0x2 (stop at once, without flushing the journal).
# _IOR(type, nr, size) = (2 << 30) | (size << 16) | (type << 8) | nr (asm-generic/ioctl.h).
EXT4_IOC_SHUTDOWN = (2 << 30) | (4 << 16) | (ord("X") << 8) | 125
EXT4_GOING_FLAGS_NOLOGFLUSH = 0x2
CARD = DeviceCaps("card", read_iops=2000, write_iops=800, read_bps=50_000_000, write_bps=20_000_000)


def shut_down(mount_point):
    descriptor = os.open(mount_point, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(descriptor, EXT4_IOC_SHUTDOWN, struct.pack("I", EXT4_GOING_FLAGS_NOLOGFLUSH))
    finally:
        os.close(descriptor)


def wait_for_timed_test(run, timeout=60):
    """Until fio runs a test after the preparation (its job file is not prepare.fio)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        children = subprocess.run(
            ["pgrep", "-P", str(run.pid), "fio"], capture_output=True, text=True
        ).stdout.split()
        for pid in children:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"prepare.fio" not in cmdline:
                time.sleep(1)
                return
        time.sleep(0.1)
    raise AssertionError("fio never started a timed test")


@pytest.mark.root
@pytest.mark.fio
def test_a_filesystem_shut_down_mid_run_exits_5_in_one_line():
    assert EXT4_IOC_SHUTDOWN == 0x8004587D
    with EmulatedDevice(CARD, size_bytes=128 * 2**20) as device:
        assert device.mount_point is not None
        with started(
            "run", device.mount_point, "--size", "16M", "--runtime", "30", "--profile", "a1",
            "--no-save", wrap=device.command, env={**os.environ, "FLASHMARK_DB": ""},
        ) as run:  # fmt: skip
            wait_for_timed_test(run)
            shut_down(device.mount_point)
            _, stderr = run.communicate(timeout=120)
        left = [p.name for p in device.mount_point.iterdir() if p.name.startswith(".flashmark-")]
    assert run.returncode == ExitStatus.DEVICE, stderr
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("flashmark: error")]
    assert len(errors) == 1, stderr
    assert "the device failed or disappeared (EIO)" in errors[0]
    # A shut-down ext4 refuses the removal too: the message says so, and names the file.
    assert len(left) == 1
    assert f"the test file could not be removed: {device.mount_point}/{left[0]}" in errors[0]
