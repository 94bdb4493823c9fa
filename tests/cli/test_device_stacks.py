"""`run --destructive` on real stacks of loop devices: refused when anything above or below the
target is mounted or used as swap, and every member held (O_EXCL) for the whole run.

Every loop device, partition, mount, swap and file is created here, in a temporary folder,
and removed in a finally block, also when a test fails. Root only (loop devices)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
from collections.abc import Iterator

import pytest

from flashmark.errors import ExitStatus
from tests.block_devices import LoopLab, require_tools, run, unmount
from tests.cli_runner import flashmark_script, started, wait_for_fio

pytestmark = [pytest.mark.root, pytest.mark.fio]

IMAGE_BYTES = 64 * 2**20
# Two 16 MiB partitions from sector 2048, as sfdisk(8) reads a script from stdin.
PARTITION_TABLE = "label: dos\n2048,32768,L\n34816,32768,L\n"


@pytest.fixture
def lab() -> Iterator[LoopLab]:
    require_tools("losetup", "mkfs.ext4", "mkswap", "swapon", "sfdisk", "partx")
    with contextlib.ExitStack() as cleanup:
        yield LoopLab(cleanup, prefix="flashmark-stacks-")


def destructive_run(node: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """A whole a1 run, as short as it gets: what is refused, held and written is tested here,
    never a figure, so no ramp."""
    return flashmark_script("run", node, "--destructive", "--yes", "--no-save", "--size", "4M",
                            "--runtime", "1", "--ramp", "0", "--profile", "a1", *extra,
                            timeout=180)  # fmt: skip


def assert_refused(node: str, message: str) -> None:
    """A destructive run on `node` is refused, saying `message`."""
    done = destructive_run(node)
    assert done.returncode == ExitStatus.TARGET, done.stderr
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def exclusive_open_error(node: str) -> int | None:
    """None when `node` can be claimed now (and is released at once), else the errno."""
    try:
        descriptor = os.open(node, os.O_RDONLY | os.O_EXCL)
    except OSError as error:
        return error.errno
    os.close(descriptor)
    return None


def test_a_loop_backed_by_a_mounted_loop_is_refused_and_the_filesystem_survives(
    lab: LoopLab,
) -> None:
    lower = lab.attach(lab.image(IMAGE_BYTES))
    point = lab.mount(lower)
    (point / "keep.txt").write_text("precious\n")
    upper = lab.attach(lower)
    assert_refused(
        upper, f"refusing to write to {upper}: it is backed by {lower}, which is mounted on {point}"
    )
    assert (point / "keep.txt").read_text() == "precious\n"
    unmount(point)
    run(["e2fsck", "-fn", lower])  # exit 0: the filesystem is intact


def test_a_loop_backed_by_a_loop_whose_partition_is_mounted_is_refused(lab: LoopLab) -> None:
    lower = lab.attach(lab.image(IMAGE_BYTES, PARTITION_TABLE), partitions=True)
    point = lab.mount(lower + "p1")
    upper = lab.attach(lower)
    message = f"it is backed by {lower}, which has partition {lower}p1, which is mounted on {point}"
    assert_refused(upper, message)


def test_a_loop_sharing_its_backing_file_with_a_mounted_loop_is_refused(lab: LoopLab) -> None:
    image = lab.image(IMAGE_BYTES)
    mounted = lab.attach(image)
    point = lab.mount(mounted)
    other = lab.attach(image)
    assert_refused(other, f"it is backed by {image}, which is also the backing file of {mounted}, "
                          f"which is mounted on {point}")  # fmt: skip


def test_a_device_whose_partition_is_mounted_is_refused(lab: LoopLab) -> None:
    device = lab.attach(lab.image(IMAGE_BYTES, PARTITION_TABLE), partitions=True)
    point = lab.mount(device + "p2")
    assert_refused(device, f"it has partition {device}p2, which is mounted on {point}")


def test_a_partition_beside_a_mounted_one_is_accepted(lab: LoopLab) -> None:
    # writing p1 cannot touch p2's sectors; p1 is held for the run, the disk through it
    device = lab.attach(lab.image(IMAGE_BYTES, PARTITION_TABLE), partitions=True)
    point = lab.mount(device + "p2")
    (point / "keep.txt").write_text("precious\n")
    done = destructive_run(device + "p1", "--json")
    assert done.returncode == 0, done.stderr
    assert (point / "keep.txt").read_text() == "precious\n"


def test_a_loop_backed_by_a_swap_device_is_refused(lab: LoopLab) -> None:
    lower = lab.attach(lab.image(IMAGE_BYTES))
    lab.swap(lower)
    upper = lab.attach(lower)
    assert_refused(upper, f"it is backed by {lower}, which is used as swap")


def test_nothing_in_the_stack_can_be_mounted_during_a_destructive_run(lab: LoopLab) -> None:
    lower = lab.attach(lab.image(IMAGE_BYTES))
    run(["mkfs.ext4", "-q", "-F", lower])
    upper = lab.attach(lower)
    point = lab.folder / "late-mount"
    point.mkdir()
    with started(
        "run", upper, "--destructive", "--yes", "--no-save", "--size", "4M", "--runtime", "60",
        "--profile", "a1",
    ) as process:  # fmt: skip
        wait_for_fio(process)  # the device is claimed by then
        for node in (lower, upper):
            assert exclusive_open_error(node) == errno.EBUSY, node
            mounted = subprocess.run(
                ["mount", "-t", "ext4", node, str(point)], capture_output=True, text=True
            )
            unmount(point)  # only if the claim failed and the mount went through
            assert mounted.returncode != 0 and "busy" in mounted.stderr, mounted.stderr
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == ExitStatus.TERMINATED, stderr
    # released with the run
    assert exclusive_open_error(upper) is None
    assert exclusive_open_error(lower) is None


def test_a_free_loop_device_gets_a_destructive_run(lab: LoopLab) -> None:
    device = lab.attach(lab.image(IMAGE_BYTES))
    done = destructive_run(device, "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert "rand-write-4k" in [test["name"] for test in document["tests"]]
    assert exclusive_open_error(device) is None  # the claim ended with the run


def test_writes_reach_a_backing_device_that_is_held_for_the_run(lab: LoopLab) -> None:
    # The loop driver writes to its backing device through the file it was given, which an
    # O_EXCL claim by another opener does not block (only other claims and mounts are blocked).
    lower = lab.attach(lab.image(IMAGE_BYTES))
    upper = lab.attach(lower)
    done = destructive_run(upper)
    assert done.returncode == 0, done.stderr
    with open(lower, "rb") as handle:
        assert handle.read(4 * 2**20).count(0) < 2**20  # random data, not the zeros it had
