"""Workloads on this machine's own filesystem: what they do, report, and leave behind (nothing)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flashmark.cli import main
from flashmark.codec import encode
from flashmark.errors import NotEnoughSpace, TargetNotFound
from flashmark.system.diskstats import device_for_path
from flashmark.system.sysroot import SystemRoots
from flashmark.workloads import dpkg
from flashmark.workloads.packages import generate_package_set
from flashmark.workloads.result import WORKLOAD_NAMES
from flashmark.workloads.session import (
    UnknownWorkload,
    run_workloads,
)
from tests.cli_runner import flashmark, started

# A workload's work folder, as flashmark/system/leftovers.py names it.
FOLDER_PREFIX = "flashmark-workload-"

SCALE = 0.01  # 4 packages, ~350 files, ~9 MB: a second or two


@pytest.fixture
def fake_procfs(tmp_path: Path) -> SystemRoots:
    """The live /proc for diskstats, but a drop_caches file the test can read back.

    cold-read then runs as it would as root, without emptying the whole machine's cache.
    """
    procfs = tmp_path / "proc"
    (procfs / "sys/vm").mkdir(parents=True)
    (procfs / "sys/vm/drop_caches").write_text("")
    (procfs / "diskstats").write_text(Path("/proc/diskstats").read_text())
    return SystemRoots(procfs=procfs)


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(FOLDER_PREFIX)]


def test_pkg_install_writes_every_file_with_fsync_and_the_status_updates(tmp_path: Path) -> None:
    package_set = generate_package_set(SCALE)
    [result] = run_workloads(("pkg-install",), tmp_path, scale=SCALE, roots=SystemRoots())
    assert result.skipped is None and result.seconds is not None and result.seconds > 0
    counts = result.counts
    assert counts.packages == len(package_set.packages)
    # Package files, plus per package its archive, md5sums, list file and 4 status notes.
    extra_per_package = 1 + 2 + 4
    assert counts.files_written == package_set.file_count + extra_per_package * counts.packages
    assert counts.status_notes == 4 * counts.packages
    assert counts.bytes_written >= package_set.installed_bytes + package_set.archive_bytes
    assert counts.files_read == counts.packages  # each archive read back once
    assert [p.name for p in result.phases] == ["download", "unpack", "configure"]
    assert sum(p.seconds for p in result.phases) == pytest.approx(result.seconds, rel=0.05)
    assert leftovers(tmp_path) == []
    if result.device is not None:  # on a block device: what the device saw is recorded
        assert result.monitor is not None
        assert result.monitor.summary().write_bytes > 0
        assert [p.name for p in result.monitor.phases] == ["download", "unpack", "configure"]


def test_the_four_workloads_in_a_row_share_state_like_seed_002(
    tmp_path: Path, fake_procfs: SystemRoots, monkeypatch: pytest.MonkeyPatch
) -> None:
    package_set = generate_package_set(SCALE)
    removed_files = sum(len(p.files) for p in package_set.removed_packages())
    fractions: list[float] = []
    unpacked: list[str] = []  # every package unpacked, timed or in a setup
    unpack = dpkg.unpack

    def counted_unpack(*args: Any, **kwargs: Any) -> None:
        unpacked.append(args[3].name)  # (layout, pool, status, package, counters)
        unpack(*args, **kwargs)

    monkeypatch.setattr(dpkg, "unpack", counted_unpack)
    results = run_workloads(
        WORKLOAD_NAMES, tmp_path, scale=SCALE, roots=fake_procfs, progress=fractions.append,
        interval_s=0.2,
    )  # fmt: skip
    install, remove, reinstall, cold = results
    assert [r.name for r in results] == list(WORKLOAD_NAMES)
    assert remove.counts.files_removed == removed_files + 2 * len(package_set.removed)
    # Nothing to set up for pkg-remove: the install put the packages there. Every unpack was
    # a timed one, counted by pkg-install or pkg-reinstall (pkg-remove alone unpacks its
    # packages in its setup first).
    assert len(unpacked) == install.counts.packages + reinstall.counts.packages
    assert reinstall.counts.packages == len(package_set.removed)
    assert reinstall.counts.files_read == len(package_set.removed)  # cached archives
    assert [p.name for p in reinstall.phases] == ["unpack", "configure"]  # no download
    boot_bytes = cold.counts.bytes_read
    assert boot_bytes >= 132_409 * 1024 * SCALE
    assert cold.counts.bytes_written == 0
    assert (fake_procfs.procfs / "sys/vm/drop_caches").read_text() == "3\n"
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert leftovers(tmp_path) == []


def test_pkg_remove_alone_sets_up_the_installed_subset_first(tmp_path: Path) -> None:
    package_set = generate_package_set(SCALE)
    [result] = run_workloads(("pkg-remove",), tmp_path, scale=SCALE, roots=SystemRoots())
    assert result.counts.packages == len(package_set.removed)
    assert result.counts.status_notes == 3 * len(package_set.removed)
    assert result.counts.files_written == result.counts.status_notes  # only status stanzas
    assert leftovers(tmp_path) == []


def test_cold_read_without_a_writable_drop_caches_is_skipped_with_the_reason(
    tmp_path: Path,
) -> None:
    roots = SystemRoots(procfs=tmp_path / "no-proc")
    [result] = run_workloads(("cold-read",), tmp_path, scale=SCALE, roots=roots)
    assert result.seconds is None and result.monitor is None
    assert result.skipped is not None and "drop the page cache" in result.skipped
    assert encode(result)["skipped"] == result.skipped


def test_a_failure_inside_a_workload_still_removes_its_folder(tmp_path: Path) -> None:
    class Boom(Exception):
        pass

    def progress(fraction: float) -> None:
        if fraction > 0.1:
            assert leftovers(tmp_path), "the workload folder exists while it runs"
            raise Boom

    with pytest.raises(Boom):
        run_workloads(
            ("pkg-install",), tmp_path, scale=SCALE, roots=SystemRoots(), progress=progress
        )
    assert leftovers(tmp_path) == []


def test_sigterm_stops_the_command_and_removes_the_folder(tmp_path: Path) -> None:
    run = started("workload", "pkg-install", tmp_path, "--scale", "1", stdout=subprocess.DEVNULL)
    with run as process:
        deadline = time.monotonic() + 60
        while not any((p / "root").exists() for p in leftovers(tmp_path)):
            assert time.monotonic() < deadline and process.poll() is None, "did not start"
            time.sleep(0.05)
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    assert "stopped by SIGTERM" in stderr
    assert leftovers(tmp_path) == []


def test_a_signal_during_the_folders_removal_still_removes_all_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The workload is done and its folder is being removed when SIGTERM comes (the fault tier
    # hit this under load): the removal finishes, then the command stops with its status.
    real_rmtree = shutil.rmtree

    def rmtree_after_a_signal(path: Any, *args: Any, **kwargs: Any) -> None:
        # "root": the emulated system's tree, the first thing removed from the workload's
        # private folder (through its descriptor, flashmark.system.private_folder).
        if Path(path).name == "root":
            os.kill(os.getpid(), signal.SIGTERM)  # flashmark's handler runs at once
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree_after_a_signal)
    done = flashmark("workload", "pkg-install", str(tmp_path), "--scale", str(SCALE))
    assert done.returncode == 143, done.stderr
    assert "stopped by SIGTERM" in done.stderr
    assert leftovers(tmp_path) == []


def test_workload_json_document(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["workload", "pkg-reinstall", str(tmp_path), "--scale", str(SCALE), "--json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["schema"] == "flashmark.workloads/1"
    (entry,) = document["workloads"]
    assert entry["name"] == "pkg-reinstall" and entry["seconds"] > 0
    assert entry["counts"]["packages"] == len(generate_package_set(SCALE).removed)
    if device_for_path(tmp_path, SystemRoots()) is not None:
        assert {"read_iops", "write_iops"} <= set(entry["monitor"]["summary"])


def test_a_workload_is_saved_and_shown_like_a_run(tmp_path: Path, private_history: Path) -> None:
    result = CliRunner().invoke(
        main, ["workload", "pkg-remove", str(tmp_path), "--scale", "0.01", "--json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    listed = CliRunner().invoke(main, ["history", "--json"])
    (entry,) = json.loads(listed.stdout)
    assert entry["id"] == document["id"] and entry["kind"] == "workload"
    assert entry["target"] == str(tmp_path.resolve()) and entry["label"] == "pkg-remove"
    shown = CliRunner().invoke(main, ["show", str(document["id"])])
    assert shown.exit_code == 0, shown.output
    assert "pkg-remove" in shown.stdout and "Timed total" in shown.stdout
    saved = CliRunner().invoke(main, ["show", str(document["id"]), "--json"])
    assert json.loads(saved.stdout) == document


def test_workload_table_for_people(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["workload", "pkg-remove", str(tmp_path), "--scale", "0.01"])
    assert result.exit_code == 0, result.output
    assert "pkg-remove" in result.stdout and "Timed total" in result.stdout


def test_unknown_names_missing_folders_and_full_disks_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UnknownWorkload, match="choose from pkg-install"):
        run_workloads(["pkg-upgrade"], tmp_path, roots=SystemRoots())
    with pytest.raises(TargetNotFound):
        run_workloads(("pkg-install",), tmp_path / "nowhere", roots=SystemRoots())
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    huge = free / 0.8e9 * 4  # a scale whose installed size is ~4x the free space
    with pytest.raises(NotEnoughSpace, match="--scale"):
        run_workloads(("pkg-install",), tmp_path, scale=huge, roots=SystemRoots())
    assert leftovers(tmp_path) == []
