"""Re-record the fio outputs under tests/data/fio/ from real fio runs on emulated devices.

    sudo python tests/data/fio/record.py            (root, fio, loop devices, blkio throttle)

Each scenario folder holds, per fio job, NAME.json (fio's --output), NAME_iops.1.log files,
NAME.stderr and NAME.returncode, plus `version` and `scenario.txt` (what was emulated, the
true caps, how the run was made). ReplayRunner (flashmark.fio.runner) reads them back, so unit
tests exercise the real parser and CLI on real fio output without fio or root.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from flashmark.bench.jobs import job_for_test, prepare_job
from flashmark.bench.measure import measure
from flashmark.bench.model import Settings
from flashmark.bench.plan import default_settings, plan_tests
from flashmark.bench.profiles import get_profile
from flashmark.bench.target import resolve_target
from flashmark.fio.job import FioJob
from flashmark.fio.runner import FioOutput, FioProcessRunner, ProgressCallback
from flashmark.system.sysroot import SystemRoots
from flashmark.system.watchdog import StallWatch
from flashmark.units import MiB
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

HERE = Path(__file__).resolve().parent
A1_CARD = DeviceCaps(
    "a1-card", read_iops=1500, write_iops=500, read_bps=40_000_000, write_bps=10_000_000
)

SLOW_CARD = DeviceCaps(
    "slow-card", read_iops=1500, write_iops=30, read_bps=20_000_000, write_bps=10_000_000
)


class CgroupRunner(FioProcessRunner):
    """Runs fio inside the emulated device's throttling cgroup."""

    def __init__(self, workdir: Path, device: EmulatedDevice) -> None:
        super().__init__(workdir)
        self.device = device

    def _resolve(self) -> str:  # the wrapper joins the cgroup, then execs fio
        wrapper = self.workdir / "fio-in-cgroup"
        wrapper.write_text(
            "#!/bin/sh\n"
            + " ".join(f"'{part}'" for part in self.device.command([shutil.which("fio") or "fio"]))
            + ' "$@"\n'
        )
        wrapper.chmod(0o755)
        return str(wrapper)


class RecordingRunner:
    """Saves every run's output; with `adding`, only the runs of jobs not recorded yet."""

    def __init__(self, inner: FioProcessRunner, destination: Path, *, adding: bool = False) -> None:
        self.inner = inner
        self.destination = destination
        self.adding = adding
        destination.mkdir(parents=True, exist_ok=True)

    def version(self) -> str:
        version = self.inner.version()
        (self.destination / "version").write_text(version + "\n")
        return version

    @property
    def log_folder(self) -> str:
        return self.inner.log_folder

    def run(
        self,
        job: FioJob,
        on_progress: ProgressCallback | None = None,
        *,
        folder_fd: int | None = None,
        stall: StallWatch | None = None,
    ) -> FioOutput:
        output = self.inner.run(job, on_progress, folder_fd=folder_fd, stall=stall)
        if not (self.adding and (self.destination / f"{job.name}.returncode").exists()):
            save(output, self.destination)
        return output


def save(output: FioOutput, destination: Path) -> None:
    destination.mkdir(parents=True, exist_ok=True)
    name = output.job_name
    if output.json_text:
        (destination / f"{name}.json").write_text(output.json_text)
    (destination / f"{name}.stderr").write_text(output.stderr)
    (destination / f"{name}.returncode").write_text(f"{output.returncode}\n")
    for log_name, text in output.logs.items():
        (destination / log_name).write_text(text)


def record_profile(
    name: str,
    profile: str,
    caps: DeviceCaps,
    *,
    runtime_s: int | None,
    size_bytes: int,
    filesystem: bool,
    note: str,
) -> None:
    """One profile run as `flashmark run` makes it; `runtime_s` None: its default lengths
    (adaptive: a first window, extended or a test again at full length where it was not
    enough)."""
    destination = HERE / name
    shutil.rmtree(destination, ignore_errors=True)
    with (
        EmulatedDevice(caps, size_bytes=512 * MiB, filesystem=filesystem) as device,
        _workdir() as workdir,
    ):
        settings = default_settings(
            get_profile(profile),
            size_bytes=size_bytes,
            runtime_s=runtime_s,
            buffered=False,
            destructive=False,
        )
        target = resolve_target(
            str(device.target),
            size_bytes=settings.size_bytes,
            destructive=False,
            roots=SystemRoots(),
        )
        runner = RecordingRunner(CgroupRunner(workdir, device), destination)
        measure(
            plan_tests(get_profile(profile), settings, target, log_folder=runner.log_folder), runner
        )
    _describe(
        destination,
        caps,
        f"profile {profile}, {_lengths(settings)}, area "
        f"{size_bytes // MiB} MiB, {'ext4 folder' if filesystem else 'raw device'}. {note}",
    )


def record_large_blocks(name: str) -> None:
    """seq-read and rand-read-16M of the full profile on a 40 MB/s card, 4 s where a first
    window is not enough: 16 MiB reads at seq-read's rate would fit 7 in a 3 s first window,
    so rand-read-16M measures as long as 20 take, at once. Whether seq-read's first window is
    enough is the host's doing (its interval is near +-1%): scenario.txt says which it was."""
    destination = HERE / name
    shutil.rmtree(destination, ignore_errors=True)
    caps = DeviceCaps("16M-card", read_bps=40_000_000)
    full = get_profile("full")
    profile = dataclasses.replace(
        full,
        tests=tuple(t for t in full.tests if t.name in ("seq-read", "rand-read-16M")),
        workloads=(),
    )
    settings = default_settings(
        profile, size_bytes=64 * MiB, runtime_s=None, buffered=False, destructive=False
    )
    settings = dataclasses.replace(settings, runtime_s=4)
    with (
        EmulatedDevice(caps, size_bytes=256 * MiB) as device,
        _workdir() as workdir,
    ):
        target = resolve_target(
            str(device.target), size_bytes=settings.size_bytes, destructive=False,
            roots=SystemRoots(),
        )  # fmt: skip
        runner = RecordingRunner(CgroupRunner(workdir, device), destination)
        measured = measure(
            plan_tests(profile, settings, target, log_folder=runner.log_folder), runner
        )
    outcome = "; ".join(
        f"{t.spec.name}: {t.lengthened or 'its first window kept'}" for t in measured.tests
    )
    _describe(
        destination,
        caps,
        f"seq-read and rand-read-16M of the full profile, {_lengths(settings)}, area 64 MiB, "
        f"ext4 folder (tests/bench/test_adaptive_lengths.py's scenario). {outcome}.",
    )


def _lengths(settings: Settings) -> str:
    if settings.first_window_s is None:
        return f"runtime {settings.runtime_s} s"
    return (
        f"adaptive lengths (first window {settings.first_window_s} s, "
        f"{settings.runtime_s} s where not enough)"
    )


def record_io_error(*, filesystem: bool) -> None:
    """A device that disappears mid-test: the loop device's backing file is truncated to zero
    and its capacity re-read (`losetup --set-capacity`), so every further I/O fails, as when a
    card is pulled out."""
    destination = HERE / ("folder-device-gone" if filesystem else "device-io-error")
    shutil.rmtree(destination, ignore_errors=True)
    with (
        EmulatedDevice(A1_CARD, size_bytes=256 * MiB, filesystem=filesystem) as device,
        _workdir() as workdir,
    ):
        settings = default_settings(
            get_profile("quick"), size_bytes=64 * MiB, runtime_s=8, buffered=False, destructive=True
        )
        spec = get_profile("quick").tests[3]  # rand-write-4k
        runner = FioProcessRunner(workdir)
        filename, folder_fd = device.device, None
        if device.mount_point is not None:  # a test file, written once so the test overwrites
            filename, folder_fd = "gone.tmp", _open_folder(device.mount_point)
            runner.run(prepare_job(settings, filename), folder_fd=folder_fd)
        job = job_for_test(spec, settings, filename, readonly=False, log_folder=runner.log_folder)
        destination.mkdir(parents=True)
        (destination / "version").write_text(runner.version() + "\n")
        backing = subprocess.run(
            ["losetup", "--noheadings", "--output", "BACK-FILE", device.device],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

        def vanish_later() -> None:
            time.sleep(4)
            os.truncate(backing, 0)
            subprocess.run(["losetup", "--set-capacity", device.device], check=True)

        threading.Thread(target=vanish_later, daemon=True).start()
        save(runner.run(job, folder_fd=folder_fd), destination)
    where = "a test file on ext4 on" if filesystem else "the raw"
    _describe(
        destination,
        A1_CARD,
        f"rand-write-4k on {where} emulated card; 4 s in, the "
        "loop device's backing file is truncated to 0 and its capacity re-read.",
    )


def record_no_space() -> None:
    """The filesystem fills up during the preparation (32 MiB filesystem, 64 MiB area)."""
    destination = HERE / "no-space"
    shutil.rmtree(destination, ignore_errors=True)
    with (
        EmulatedDevice(A1_CARD, size_bytes=32 * MiB, filesystem=True) as device,
        _workdir() as workdir,
    ):
        assert device.mount_point is not None
        settings = default_settings(
            get_profile("quick"),
            size_bytes=64 * MiB,
            runtime_s=3,
            buffered=False,
            destructive=False,
        )
        runner = FioProcessRunner(workdir)
        destination.mkdir(parents=True)
        (destination / "version").write_text(runner.version() + "\n")
        folder_fd = _open_folder(device.mount_point)
        save(runner.run(prepare_job(settings, "fill.tmp"), folder_fd=folder_fd), destination)
    _describe(destination, A1_CARD, "prepare job for a 64 MiB area in a 32 MiB ext4.")


def record_killed() -> None:
    """fio killed with SIGKILL in the middle of a test (OOM killer, a user's kill -9)."""
    destination = HERE / "fio-killed"
    shutil.rmtree(destination, ignore_errors=True)
    with (
        EmulatedDevice(A1_CARD, size_bytes=256 * MiB, filesystem=True) as device,
        _workdir() as workdir,
    ):
        assert device.mount_point is not None
        settings = default_settings(
            get_profile("quick"),
            size_bytes=32 * MiB,
            runtime_s=20,
            buffered=False,
            destructive=False,
        )
        runner = FioProcessRunner(workdir)
        job = job_for_test(
            get_profile("quick").tests[2],
            settings,
            "killed.tmp",
            readonly=False,
            log_folder=runner.log_folder,
        )
        folder_fd = _open_folder(device.mount_point)
        destination.mkdir(parents=True)
        (destination / "version").write_text(runner.version() + "\n")

        def kill_later() -> None:
            time.sleep(3)
            subprocess.run(["pkill", "-KILL", "-f", "rand-read-4k.fio"], check=False)

        threading.Thread(target=kill_later, daemon=True).start()
        save(runner.run(job, folder_fd=folder_fd), destination)
    _describe(destination, A1_CARD, "rand-read-4k; every fio process killed with SIGKILL 3 s in.")


def _describe(destination: Path, caps: DeviceCaps, how: str) -> None:
    (destination / "scenario.txt").write_text(
        f"Recorded by tests/data/fio/record.py on {time.strftime('%Y-%m-%d')}.\n"
        f"Emulated device {caps.name}: read {caps.read_iops} IOPS, write {caps.write_iops} "
        f"IOPS, read {caps.read_bps} B/s, write {caps.write_bps} B/s (kernel block throttle on "
        f"a loop device).\n{how}\n"
    )


def _open_folder(folder: Path) -> int:
    """fio runs inside the folder, reached through this descriptor (fio/runner.py); it is
    closed when the recording process ends."""
    return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


class _workdir:
    def __enter__(self) -> Path:
        import tempfile

        self.path = Path(tempfile.mkdtemp(prefix="flashmark-record-"))
        return self.path

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def main() -> None:
    wanted = set(sys.argv[1:])

    def want(name: str) -> bool:
        return not wanted or name in wanted

    if want("quick-a1-card"):
        record_profile(
            "quick-a1-card",
            "quick",
            A1_CARD,
            runtime_s=8,
            size_bytes=128 * MiB,
            filesystem=True,
            note="The default quick profile.",
        )
    if want("quick-a1-card-adaptive"):
        record_profile(
            "quick-a1-card-adaptive",
            "quick",
            A1_CARD,
            runtime_s=None,
            size_bytes=128 * MiB,
            filesystem=True,
            note="The default quick profile, as `flashmark run` makes it.",
        )
    if want("a1-until-written"):
        record_profile(
            "a1-until-written",
            "a1",
            DeviceCaps("20-mb-card", 3000, 1000, 40_000_000, 20_000_000),
            runtime_s=None,
            size_bytes=128 * MiB,
            filesystem=True,
            note=(
                "The default a1 profile: seq-write writes the 128 MiB area in about 6.7 s at "
                "20 MB/s and ends there, a window of about 4.7 s after its 2 s ramp."
            ),
        )
    if want("a1-seq-write-again"):
        record_profile(
            "a1-seq-write-again",
            "a1",
            DeviceCaps("59-mb-card", 3200, 1480, 66_000_000, 59_000_000),
            runtime_s=None,
            size_bytes=128 * MiB,
            filesystem=True,
            note=(
                "The default a1 profile on seed 002's Extreme A1 figures: seq-write writes the "
                "128 MiB area in about 2.3 s, which leaves less than a 3 s window after its 2 s "
                "ramp, so it runs again for 3 s (seq-write-again)."
            ),
        )
    if want("standard-fast-card"):
        record_profile(
            "standard-fast-card",
            "standard",
            DeviceCaps("fast-card", 4000, 2000, 90_000_000, 60_000_000),
            runtime_s=3,
            size_bytes=64 * MiB,
            filesystem=True,
            note="Short runtime: for parsing, not accuracy.",
        )
    if want("slow-card-deep-queue"):
        record_profile(
            "slow-card-deep-queue",
            "quick",
            SLOW_CARD,
            runtime_s=8,
            size_bytes=32 * MiB,
            filesystem=True,
            note="30 write IOPS: the 32 writes queued at the end of a q32 test take ~1 s more.",
        )
    if want("large-blocks-at-once"):
        record_large_blocks("large-blocks-at-once")
    if want("device-readonly"):
        record_profile(
            "device-readonly",
            "quick",
            A1_CARD,
            runtime_s=4,
            size_bytes=64 * MiB,
            filesystem=False,
            note="Raw device without --destructive: read tests only.",
        )
    if want("device-io-error"):
        record_io_error(filesystem=False)
    if want("folder-device-gone"):
        record_io_error(filesystem=True)
    if want("no-space"):
        record_no_space()
    if want("fio-killed"):
        record_killed()


if __name__ == "__main__":
    main()
