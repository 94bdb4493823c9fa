"""A measured test is never lost to a later step: what the steps after the first test need
is checked before it, and a step that still fails keeps the tests measured before it.

`flashmark run --profile standard` on replayed fio (its tests instant) and the real
workloads, in small ext4 filesystems made for each test: one short of inodes for the
workloads, one filled by another program while the tests run, and a full temporary folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.errors import ExitStatus
from flashmark.fio.runner import ReplayRunner
from tests.cli_runner import flashmark

MiB = 1 << 20
LAST_TEST = "seq-write-q8"  # the standard profile's last test, before the workloads


@contextlib.contextmanager
def small_ext4(image: Path, size_bytes: int, inodes: int) -> Iterator[Path]:
    """An ext4 filesystem of `size_bytes` with `inodes` inodes, mounted; removed afterwards."""
    with image.open("wb") as handle:
        handle.truncate(size_bytes)
    subprocess.run(
        ["mkfs.ext4", "-q", "-F", "-N", str(inodes), "-E",
         "lazy_itable_init=0,lazy_journal_init=0", str(image)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    mount = image.with_suffix(".mnt")
    mount.mkdir()
    loop = subprocess.run(
        ["losetup", "--find", "--show", str(image)],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    try:
        subprocess.run(["mount", loop, str(mount)], check=True, capture_output=True, timeout=60)
        try:
            yield mount
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True, timeout=60)
    finally:
        subprocess.run(["losetup", "--detach", loop], capture_output=True, timeout=60)


def use_up_inodes(folder: Path) -> int:
    """Create empty files until the filesystem has no inode left (another program's)."""
    folder.mkdir(exist_ok=True)
    made = 0
    with contextlib.suppress(OSError):
        while True:
            (folder / f"f{made}").touch()
            made += 1
    return made


def standard_run(folder: Path, recordings: Path, tmp_path: Path, *extra: str):
    env = {
        "FLASHMARK_FIO_REPLAY": str(recordings / "standard-fast-card"),
        "FLASHMARK_DB": str(tmp_path / "history.sqlite3"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    done = flashmark(
        "run", str(folder), "--profile", "standard", "--runtime", "3", "--size", "64M",
        "--workload-scale", "0.01", *extra, env=env,
    )  # fmt: skip
    return done, env


@pytest.mark.root
def test_workloads_running_out_of_inodes_keep_the_tests_measured_before(
    recordings: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with small_ext4(tmp_path / "card.img", 256 * MiB, 2048) as mount:
        folder = mount / "card"
        folder.mkdir()
        replay = ReplayRunner.run

        def run_then_fill(self: ReplayRunner, job, *args, **kwargs):
            if job.name.startswith(LAST_TEST):  # another program, while the last test runs
                use_up_inodes(mount / "someone-else")
            return replay(self, job, *args, **kwargs)

        monkeypatch.setattr(ReplayRunner, "run", run_then_fill)
        done, env = standard_run(folder, recordings, tmp_path)
        assert list(folder.iterdir()) == []  # the test file and the workload's folder removed

    assert done.returncode == ExitStatus.TARGET, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("flashmark: error")]
    assert len(errors) == 1 and done.stderr.rstrip().endswith(errors[0]), done.stderr
    assert "inodes" in errors[0]
    assert "the 10 test(s) measured before it are saved as result 1, marked partial" in errors[0]
    assert "Results" in done.stdout  # the tables of what was measured were printed
    document = json.loads(flashmark("show", "1", "--json", env=env).stdout)
    assert len(document["tests"]) == 10 and document["workloads"] == []
    partial = document["partial"]
    assert partial["failed_step"] == "workloads" and partial["exit_status"] == 4
    assert "inodes" in partial["error"]
    (entry,) = json.loads(flashmark("history", "--json", env=env).stdout)
    assert entry["label"] == "standard (partial)"
    assert "partial  workloads failed" in flashmark("show", "1", env=env).stdout


@pytest.mark.root
def test_workloads_that_cannot_fit_are_refused_before_the_first_test(
    recordings: Path, tmp_path: Path
) -> None:
    with small_ext4(tmp_path / "card.img", 256 * MiB, 2048) as mount:
        folder = mount / "card"
        folder.mkdir()
        left = 300  # fewer inodes than the workloads at scale 0.01 need
        use_up_inodes(mount / "someone-else")
        for name in sorted((mount / "someone-else").iterdir())[:left]:
            name.unlink()
        done, env = standard_run(folder, recordings, tmp_path)
        assert list(folder.iterdir()) == []
    assert done.returncode == ExitStatus.TARGET, done.stderr
    assert done.stderr.count("flashmark: error") == 1
    assert "inodes" in done.stderr and "--workload-scale 0 skips them" in done.stderr
    assert "Results" not in done.stdout  # nothing was measured
    assert json.loads(flashmark("history", "--json", env=env).stdout) == []


@pytest.mark.root
@pytest.mark.parametrize("what", ["space", "inodes"])
def test_a_temporary_folder_without_room_for_fios_output_is_named_before_measuring(
    recordings: Path, tmp_path: Path, what: str
) -> None:
    """Room for Python's own probe of the folder (tempfile.gettempdir writes a small file
    there), not for fio's results and logs: the run must stop before its first test and name
    the temporary folder, not the target. (A folder with no room at all is skipped by Python
    for the next one, /tmp or /var/tmp.)"""
    folder = tmp_path / "card"
    folder.mkdir()
    with small_ext4(tmp_path / "tmp.img", 64 * MiB, 128) as tmp:
        if what == "inodes":
            use_up_inodes(tmp / "files")
            for name in sorted((tmp / "files").iterdir())[:10]:
                name.unlink()
        else:
            with contextlib.suppress(OSError), (tmp / "big").open("wb") as big:
                while True:
                    big.write(b"\0" * MiB)
                    big.flush()
            (tmp / "big").write_bytes(b"\0" * (os.path.getsize(tmp / "big") - 2 * MiB))
        done = flashmark(
            "run", str(folder), "--no-save",
            env={
                "FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive"),
                "TMPDIR": str(tmp),
            },
        )  # fmt: skip
    assert done.returncode == ExitStatus.ENVIRONMENT, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("flashmark: error")]
    assert f"temporary folder {tmp}" in line and str(folder) not in line
    assert ("inodes" in line) == (what == "inodes")
    assert "Results" not in done.stdout
    assert os.listdir(folder) == []


def test_a_device_failure_mid_run_keeps_the_tests_before_it_in_the_history(
    recordings: Path, tmp_path: Path
) -> None:
    """No root needed: a recorded fio run that found the device gone at rand-write-4k."""
    broken = tmp_path / "replay"
    shutil.copytree(recordings / "quick-a1-card", broken)
    for path in broken.glob("rand-write-4k.*"):
        path.unlink()
    for path in (recordings / "folder-device-gone").glob("rand-write-4k*"):
        shutil.copy(path, broken / path.name)
    folder = tmp_path / "card"
    folder.mkdir()
    env = {"FLASHMARK_FIO_REPLAY": str(broken), "FLASHMARK_DB": str(tmp_path / "h.sqlite3")}
    done = flashmark("run", str(folder), "--runtime", "8", "--json", env=env)
    assert done.returncode == ExitStatus.DEVICE, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "device failed or disappeared" in line and "marked partial" in line
    assert line.endswith("the test file was removed")
    printed = json.loads(done.stdout)  # --json: the partial document on stdout
    assert printed["partial"]["failed_step"] == "rand-write-4k"
    assert printed["partial"]["not_run"] == ["rand-write-4k-q32"]
    names = [test["name"] for test in printed["tests"]]
    assert names == ["seq-write", "seq-read", "rand-read-4k", "rand-read-4k-q32"]
    saved = json.loads(flashmark("show", "1", "--json", env=env).stdout)
    assert saved == printed
