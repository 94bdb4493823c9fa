"""`flashmark monitor` through click, on recorded procfs trees and on this machine's devices."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from pathlib import Path

from click.testing import CliRunner

from flashmark.cli import main


def test_live_view_prints_one_iostat_line_per_interval_then_a_summary(procfs: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["monitor", "mmcblk0", "--interval", "0.05", "--count", "3"],
        env={"FLASHMARK_PROCFS_ROOT": str(procfs)},
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:4] == ["Device", "tps", "r/s", "w/s"]
    assert sum(1 for line in lines if re.match(r"mmcblk0 +0\.00 +0\.00 +0\.00 ", line)) == 3
    assert "Pattern: no I/O reached the device." in result.output


def test_live_view_as_json_keeps_the_lines_off_stdout(procfs: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["monitor", "mmcblk0", "--interval", "0.05", "--count", "2", "--json"],
        env={"FLASHMARK_PROCFS_ROOT": str(procfs)},
    )
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == "flashmark.monitor/1"
    assert document["command"] is None and document["diskstats_fields"] == 18
    assert len(document["samples"]) >= 2
    assert document["samples"][0]["write_iops"] == 0.0
    assert "mmcblk0" in result.stderr


def test_an_unknown_device_is_a_one_line_error(procfs: Path) -> None:
    result = CliRunner().invoke(
        main, ["monitor", "sdq", "--count", "1"], env={"FLASHMARK_PROCFS_ROOT": str(procfs)}
    )
    assert result.exit_code == 4
    assert "flashmark: error: device 'sdq' is not in" in result.output


def test_a_command_is_recorded_saved_and_its_exit_status_kept(
    tmp_path: Path, live_device: str
) -> None:
    db = tmp_path / "history.sqlite3"
    target = tmp_path / "written.bin"
    script = (
        "import os, sys\n"
        f"fd = os.open({str(target)!r}, os.O_WRONLY | os.O_CREAT)\n"
        "os.write(fd, os.urandom(1 << 20)); os.fsync(fd); os.close(fd)\n"
        "print('from the command'); sys.exit(3)\n"
    )
    result = CliRunner().invoke(
        main,
        ["monitor", live_device, "--json", "--interval", "0.1", "--db", str(db), "--",
         sys.executable, "-c", script],
    )  # fmt: skip
    assert result.exit_code == 3, result.stderr
    document = json.loads(result.stdout)  # the command's own output went to stderr
    assert document["command"][0] == sys.executable
    assert document["exit_status"] == 3
    assert "from the command" in result.stderr
    assert document["summary"]["write_bytes"] >= 1 << 20
    assert isinstance(document["samples"], list)
    with sqlite3.connect(db) as connection:
        kind, label, stored = connection.execute(
            "SELECT kind, label, document FROM results WHERE id = ?", (document["id"],)
        ).fetchone()
    assert kind == "monitor" and label.startswith(sys.executable)
    assert json.loads(stored)["summary"]["write_bytes"] == document["summary"]["write_bytes"]
    shown = CliRunner().invoke(main, ["show", str(document["id"]), "--db", str(db)])
    assert shown.exit_code == 0, shown.stderr
    assert f"{live_device} while `{sys.executable}" in shown.stdout and "Pattern:" in shown.stdout
    assert shown.stdout.splitlines()[-1].startswith(f"verdict: {live_device} during `python")
    assert "exited with status 3" in shown.stdout


def test_no_save_leaves_the_history_alone(tmp_path: Path, live_device: str) -> None:
    db = tmp_path / "history.sqlite3"
    result = CliRunner().invoke(
        main, ["monitor", live_device, "--no-save", "--db", str(db), "--", "true"]
    )
    assert result.exit_code == 0, result.output
    assert "The command exited with status 0." in result.output
    assert not db.exists()


def test_a_command_that_does_not_exist_is_a_usage_error(tmp_path: Path, live_device: str) -> None:
    result = CliRunner().invoke(
        main, ["monitor", live_device, "--no-save", "--", str(tmp_path / "no-such-program")]
    )
    assert result.exit_code == 2
    assert "cannot run" in result.output


def test_a_command_past_its_timeout_is_stopped(live_device: str) -> None:
    result = CliRunner().invoke(
        main, ["monitor", live_device, "--timeout", "0.3", "--no-save", "--", "sleep", "30"]
    )
    assert result.exit_code == 1
    assert "ran longer than --timeout 0.3 s" in result.output
    assert os.environ.get("FLASHMARK_DEBUG", "") in ("", "0")
