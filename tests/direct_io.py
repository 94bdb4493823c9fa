"""A folder on a filesystem that takes direct I/O, for tests that run real fio in folders.

pytest's tmp_path is used when its filesystem takes O_DIRECT and is not RAM (tmpfs is refused
without --buffered); otherwise an ext4 on a loop device (tests.emulation.throttle, unthrottled)
when the machine can make one; otherwise the test is skipped with the reason.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.system.mounts import mount_of, read_mounts
from flashmark.system.sysroot import SystemRoots
from tests.emulation.throttle import DeviceCaps, EmulatedDevice, unavailable_reason


def takes_direct_io(folder: Path) -> bool:
    mount = mount_of(str(folder), read_mounts(SystemRoots()))
    if mount is not None and mount.fstype in ("tmpfs", "ramfs"):
        return False
    probe = folder / ".direct-io-probe"
    try:
        descriptor = os.open(probe, os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o600)
    except OSError as error:
        if error.errno == errno.EINVAL:
            return False
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            probe.unlink()
    os.close(descriptor)
    return True


@contextlib.contextmanager
def direct_io_folder(tmp_path: Path) -> Iterator[Path]:
    if takes_direct_io(tmp_path):
        yield tmp_path
        return
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"{tmp_path} does not take direct I/O and no ext4 loop device: {reason}")
    with EmulatedDevice(DeviceCaps("plain"), size_bytes=256 * 2**20) as device:
        assert device.mount_point is not None
        yield device.mount_point
