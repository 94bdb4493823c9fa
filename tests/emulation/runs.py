"""Running the real flashmark CLI inside an emulated device's throttle (tests and benchmarks)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flashmark.bench.jobs import job_for_test, prepare_job
from flashmark.bench.model import Settings, TestResult, TestSpec
from flashmark.fio.runner import FioProcessRunner
from tests.bench.parsed import parse_test_output
from tests.emulation.throttle import EmulatedDevice

# The tests that judge measured rates on emulated devices: parallel workers (pytest-xdist) run
# them one after another, never two at once (each would take the other's CPU and disk time).
DEVICE_TIMING = pytest.mark.xdist_group("device-timing")


def flashmark_json(device: EmulatedDevice, *args: str, timeout: float = 600) -> dict[str, Any]:
    """`flashmark run ARGS --json --no-save` inside the device's cgroup; the parsed document."""
    argv = [sys.executable, "-m", "flashmark", "run", *args, "--json", "--no-save"]
    done = subprocess.run(device.command(argv), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"flashmark failed ({done.returncode}): {done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def headline(document: dict[str, Any], test: str, direction: str, metric: str) -> float:
    entry = next(t for t in document["tests"] if t["name"] == test)
    return float(entry[direction][metric])


def throttled_runner(device: EmulatedDevice, workdir: Path) -> FioProcessRunner:
    """A runner whose fio runs inside the device's throttle, at nice -10 (see
    `run_test_in_device`), with its work files in `workdir`."""
    return nice_runner(workdir, device.command)


def nice_runner(workdir: Path, wrap: Callable[[list[str]], list[str]] = list) -> FioProcessRunner:
    """A runner whose fio runs at nice -10 (see `run_test_in_device`), its command wrapped by
    `wrap` (a device's throttle), with its work files in `workdir`."""
    wrapper = workdir / "nice-fio"
    fio = shutil.which("fio") or "fio"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.join(wrap(["nice", "-n", "-10", fio]))} "$@"\n')
    wrapper.chmod(0o755)
    return FioProcessRunner(workdir, executable=str(wrapper))


def run_test_in_device(
    device: EmulatedDevice, spec: TestSpec, settings: Settings, workdir: Path
) -> TestResult:
    """One test of a profile, exactly as `flashmark run` builds and parses it, run by real fio
    inside the device's throttle on a test file in its folder (prepared first: written once).

    fio runs at nice -10: the throttle's truth holds only while fio keeps it busy, and on a
    shared host (load averages of 12 to 15 on 2 cores were seen) a starved fio leaves the
    device idle, which the throttle does not make up for (a new slice starts, the unused
    budget is gone): the device then really does less than its cap."""
    assert device.mount_point is not None
    runner = throttled_runner(device, workdir)
    folder_fd = os.open(device.mount_point, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        name = "exact.tmp"
        FioProcessRunner(workdir).run(prepare_job(settings, name), folder_fd=folder_fd)
        job = job_for_test(spec, settings, name, readonly=False, log_folder=runner.log_folder)
        return parse_test_output(spec, job, runner.run(job, folder_fd=folder_fd))
    finally:
        os.close(folder_fd)


def run_test_on_device(path: str, spec: TestSpec, settings: Settings, workdir: Path) -> TestResult:
    """One test of a profile, exactly as `flashmark run --destructive` builds and parses it on
    a block device, run by real fio at nice -10 (see `run_test_in_device`) on `path`, a device
    a test made (an emulated card: tests.emulation.flash)."""
    runner = nice_runner(workdir)
    job = job_for_test(spec, settings, path, readonly=False, log_folder=runner.log_folder)
    return parse_test_output(spec, job, runner.run(job))


@contextlib.contextmanager
def mounted_image(image: Path, size_bytes: int, *, sparse: bool) -> Iterator[tuple[str, Path]]:
    """An ext4 filesystem on a loop device over `image` (made here, `size_bytes` long), mounted
    beside it: (the loop device, the mount point). `sparse`: the image is a file with holes
    that fills as the loop is written; else every block is allocated first (fallocate) and
    mkfs is told not to discard them (a discard would punch holes in it again). Unmounted,
    detached and removed on the way out."""
    if sparse:
        with image.open("wb") as handle:
            handle.truncate(size_bytes)
    else:
        subprocess.run(["fallocate", "-l", str(size_bytes), str(image)], check=True)
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(image.unlink)
        node = subprocess.run(
            ["losetup", "--find", "--show", "--direct-io=on", str(image)],
            check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        cleanup.callback(subprocess.run, ["losetup", "--detach", node], check=False)
        argv = ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"]
        if not sparse:
            argv[-1] += ",nodiscard"
        subprocess.run([*argv, node], check=True, capture_output=True)
        point = image.with_name(image.name + ".mnt")
        point.mkdir()
        cleanup.callback(point.rmdir)
        subprocess.run(["mount", node, str(point)], check=True, capture_output=True)
        cleanup.callback(subprocess.run, ["umount", str(point)], check=True)
        yield node, point
