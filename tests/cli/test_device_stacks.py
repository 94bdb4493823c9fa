"""`run --destructive` on real stacks of loop devices: refused when anything above or below the
target is mounted or used as swap, and every member held (O_EXCL) for the whole run.

Every loop device, partition, mount, swap and file is created here, in a temporary folder,
and removed in a finally block, also when a test fails. Root only (loop devices)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import started

pytestmark = [pytest.mark.root, pytest.mark.fio]

IMAGE_BYTES = 64 * 2**20
# Two 16 MiB partitions from sector 2048, as sfdisk(8) reads a script from stdin.
PARTITION_TABLE = "label: dos\n2048,32768,L\n34816,32768,L\n"


class LoopLab:
    """Loop devices, partitions, filesystems, mounts and swap made for one test, all undone."""

    def __init__(self, folder: Path, cleanup: contextlib.ExitStack) -> None:
        self.folder = folder
        self.cleanup = cleanup
        self.count = 0

    def image(self, partitioned: bool = False) -> Path:
        self.count += 1
        path = self.folder / f"image-{self.count}.img"
        with path.open("wb") as handle:
            handle.truncate(IMAGE_BYTES)
        if partitioned:
            run(["sfdisk", "--quiet", str(path)], stdin=PARTITION_TABLE)
        return path

    def attach(self, backing: Path | str, partitions: bool = False) -> str:
        argv = ["losetup", "--find", "--show", *(["--partscan"] if partitions else [])]
        node = run([*argv, str(backing)]).strip()
        self.cleanup.callback(detach, node)
        if partitions and not Path(node + "p1").exists():
            # Kernels built without partition table parsers (this one: no MSDOS_PARTITION)
            # leave the table unread; partx reads it in user space and adds the partitions
            # (BLKPG). They go away with the loop device.
            run(["partx", "--add", node])
        return node

    def mount(self, node: str, *, make_filesystem: bool = True) -> Path:
        if make_filesystem:
            run(["mkfs.ext4", "-q", "-F", node])
        self.count += 1
        point = self.folder / f"mount-{self.count}"
        point.mkdir()
        run(["mount", node, str(point)])
        self.cleanup.callback(unmount, point)
        return point

    def swap(self, node: str) -> None:
        run(["mkswap", "-q", node])
        run(["swapon", node])
        self.cleanup.callback(run, ["swapoff", node])


def run(argv: list[str], stdin: str | None = None) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{argv}: {done.stderr}"
    return done.stdout


def unmount(point: Path) -> None:
    if os.path.ismount(point):
        run(["umount", str(point)])


def detach(node: str) -> None:
    # udev may still be probing a device it just saw: detaching is then refused for a moment
    for _ in range(50):
        if subprocess.run(["losetup", "--detach", node], capture_output=True).returncode == 0:
            return
        if not Path(f"/sys/block/{Path(node).name}/loop").exists():
            return
        time.sleep(0.1)
    raise AssertionError(f"could not detach {node}")


@pytest.fixture
def lab() -> Iterator[LoopLab]:
    for tool in ("losetup", "mkfs.ext4", "mkswap", "swapon", "sfdisk", "partx"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian packages util-linux, fdisk, e2fsprogs)")
    folder = Path(tempfile.mkdtemp(prefix="flashmark-stacks-"))
    try:
        with contextlib.ExitStack() as cleanup:
            yield LoopLab(folder, cleanup)
    finally:
        shutil.rmtree(folder)


def destructive_run(node: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """A whole a1 run, as short as it gets: what is refused, held and written is tested here,
    never a figure, so no ramp."""
    return subprocess.run(
        [sys.executable, "-m", "flashmark", "run", node, "--destructive", "--yes", "--no-save",
         "--size", "4M", "--runtime", "1", "--ramp", "0", "--profile", "a1", *extra],
        capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def assert_refused(done: subprocess.CompletedProcess[str], message: str) -> None:
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
    lower = lab.attach(lab.image())
    point = lab.mount(lower)
    (point / "keep.txt").write_text("precious\n")
    upper = lab.attach(lower)
    assert_refused(
        destructive_run(upper),
        f"refusing to write to {upper}: it is backed by {lower}, which is mounted on {point}",
    )
    assert (point / "keep.txt").read_text() == "precious\n"
    unmount(point)
    run(["e2fsck", "-fn", lower])  # exit 0: the filesystem is intact


def test_a_loop_backed_by_a_loop_whose_partition_is_mounted_is_refused(lab: LoopLab) -> None:
    lower = lab.attach(lab.image(partitioned=True), partitions=True)
    point = lab.mount(lower + "p1")
    upper = lab.attach(lower)
    assert_refused(
        destructive_run(upper),
        f"it is backed by {lower}, which has partition {lower}p1, which is mounted on {point}",
    )


def test_a_loop_sharing_its_backing_file_with_a_mounted_loop_is_refused(lab: LoopLab) -> None:
    image = lab.image()
    mounted = lab.attach(image)
    point = lab.mount(mounted)
    other = lab.attach(image)
    assert_refused(
        destructive_run(other),
        f"it is backed by {image}, which is also the backing file of {mounted}, which is "
        f"mounted on {point}",
    )


def test_a_device_whose_partition_is_mounted_is_refused(lab: LoopLab) -> None:
    device = lab.attach(lab.image(partitioned=True), partitions=True)
    point = lab.mount(device + "p2")
    assert_refused(
        destructive_run(device), f"it has partition {device}p2, which is mounted on {point}"
    )


def test_a_partition_beside_a_mounted_one_is_accepted(lab: LoopLab) -> None:
    # writing p1 cannot touch p2's sectors; p1 is held for the run, the disk through it
    device = lab.attach(lab.image(partitioned=True), partitions=True)
    point = lab.mount(device + "p2")
    (point / "keep.txt").write_text("precious\n")
    done = destructive_run(device + "p1", "--json")
    assert done.returncode == 0, done.stderr
    assert (point / "keep.txt").read_text() == "precious\n"


def test_a_loop_backed_by_a_swap_device_is_refused(lab: LoopLab) -> None:
    lower = lab.attach(lab.image())
    lab.swap(lower)
    upper = lab.attach(lower)
    assert_refused(destructive_run(upper), f"it is backed by {lower}, which is used as swap")


def test_nothing_in_the_stack_can_be_mounted_during_a_destructive_run(lab: LoopLab) -> None:
    lower = lab.attach(lab.image())
    run(["mkfs.ext4", "-q", "-F", lower])
    upper = lab.attach(lower)
    point = lab.folder / "late-mount"
    point.mkdir()
    with started(
        "run", upper, "--destructive", "--yes", "--no-save", "--size", "4M", "--runtime", "60",
        "--profile", "a1",
    ) as process:  # fmt: skip
        wait_for_fio(process)
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


def wait_for_fio(process: subprocess.Popen[str], timeout: float = 60) -> None:
    """Until flashmark's fio runs a job (the device is claimed by then); `fio --version`, which
    flashmark runs before it claims anything, does not count."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = subprocess.run(
            ["pgrep", "-a", "-P", str(process.pid), "fio"], capture_output=True, text=True
        ).stdout.splitlines()
        if any("--version" not in line for line in children):
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    raise AssertionError("fio never started")


def test_a_free_loop_device_gets_a_destructive_run(lab: LoopLab) -> None:
    device = lab.attach(lab.image())
    done = destructive_run(device, "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert "rand-write-4k" in [test["name"] for test in document["tests"]]
    assert exclusive_open_error(device) is None  # the claim ended with the run


def test_writes_reach_a_backing_device_that_is_held_for_the_run(lab: LoopLab) -> None:
    # The loop driver writes to its backing device through the file it was given, which an
    # O_EXCL claim by another opener does not block (only other claims and mounts are blocked).
    lower = lab.attach(lab.image())
    upper = lab.attach(lower)
    done = destructive_run(upper)
    assert done.returncode == 0, done.stderr
    with open(lower, "rb") as handle:
        assert handle.read(4 * 2**20).count(0) < 2**20  # random data, not the zeros it had
