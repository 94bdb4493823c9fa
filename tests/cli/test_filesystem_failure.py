"""A filesystem that fails mid-run gives one line and exit 5, and says what became of the
test file.

ext4 is shut down in the middle of a test with the EXT4_IOC_SHUTDOWN ioctl (what `xfs_io -c
shutdown` and fstests use): from then on every I/O on it fails with EIO, including the removal
of the test file. Before, this gave "internal error", exit 1.
"""

import fcntl
import os
import struct
import time

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import started, wait_for_fio

# linux fs/ext4/ext4.h: #define EXT4_IOC_SHUTDOWN _IOR('X', 125, __u32), and
# EXT4_GOING_FLAGS_NOLOGFLUSH 0x2 (stop at once, without flushing the journal).
# _IOR(type, nr, size) = (2 << 30) | (size << 16) | (type << 8) | nr (asm-generic/ioctl.h).
EXT4_IOC_SHUTDOWN = (2 << 30) | (4 << 16) | (ord("X") << 8) | 125
EXT4_GOING_FLAGS_NOLOGFLUSH = 0x2


def shut_down(mount_point):
    descriptor = os.open(mount_point, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(descriptor, EXT4_IOC_SHUTDOWN, struct.pack("I", EXT4_GOING_FLAGS_NOLOGFLUSH))
    finally:
        os.close(descriptor)


@pytest.mark.root
@pytest.mark.fio
def test_a_filesystem_shut_down_mid_run_exits_5_in_one_line(mounted_card):
    assert EXT4_IOC_SHUTDOWN == 0x8004587D
    folder = mounted_card.mount_point
    with started(
        "run", folder, "--size", "16M", "--runtime", "30", "--profile", "a1", "--no-save",
        wrap=mounted_card.command, env={**os.environ, "FLASHMARK_DB": ""},
    ) as run:  # fmt: skip
        wait_for_fio(run, timed=True)
        time.sleep(1)  # well inside the test
        shut_down(folder)
        _, stderr = run.communicate(timeout=120)
    left = [p.name for p in folder.iterdir() if p.name.startswith(".flashmark-")]
    assert run.returncode == ExitStatus.DEVICE, stderr
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("flashmark: error")]
    assert len(errors) == 1, stderr
    assert "the device failed or disappeared (EIO)" in errors[0]
    # A shut-down ext4 refuses the removal too: the message says so, and names the file.
    assert len(left) == 1
    assert f"the test file could not be removed: {folder}/{left[0]}" in errors[0]
