"""`flashmark run --profile standard`: the fio tests (replayed), then the real workloads, with
the device's activity recorded during each test and workload and kept in the history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flashmark.system.diskstats import device_for_path
from flashmark.system.sysroot import SystemRoots
from flashmark.workloads.result import WORKLOAD_NAMES
from tests.cli_runner import flashmark


def test_standard_run_carries_workloads_and_device_activity(recordings, tmp_path: Path) -> None:
    folder = tmp_path / "card"
    folder.mkdir()
    env = {
        "FLASHMARK_FIO_REPLAY": str(recordings / "standard-fast-card"),
        "FLASHMARK_DB": str(tmp_path / "history.sqlite3"),
    }
    done = flashmark(
        "run", str(folder), "--profile", "standard", "--runtime", "3", "--size", "64M",
        "--workload-scale", "0.01", "--json", env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["settings"]["workload_scale"] == 0.01
    workloads = document["workloads"]
    assert [w["name"] for w in workloads] == list(WORKLOAD_NAMES)
    install = workloads[0]
    assert install["seconds"] > 0 and install["counts"]["packages"] >= 1
    assert install["counts"]["fsyncs"] > install["counts"]["packages"]
    device = device_for_path(folder, SystemRoots())
    if device is None:
        pytest.skip("the temporary folder is on no block device here (tmpfs?)")
    # The workload's files went through the device: the monitor saw at least the fsynced bytes.
    activity = install["monitor"]
    assert activity["device"] == device
    assert activity["summary"]["write_bytes"] >= install["counts"]["bytes_written"] * 0.5
    for test in document["tests"]:  # replayed fio: the device was watched, nothing measured
        assert test["device_activity"]["device"] == device
    assert "[12/12] workloads" in done.stderr
    assert list(folder.iterdir()) == []  # test file and workload folder removed

    shown = flashmark("show", "1", "--json", env=env)
    assert json.loads(shown.stdout) == document
    table = flashmark("show", "1", env=env).stdout
    assert "Workloads" in table and "pkg-install" in table and f"What {device} saw" in table
