"""`flashmark surface` input checks: one line and the documented exit code, nothing measured."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from flashmark.cli import main


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--block-size", "3K"], 2, "must be 4 KiB to 64 MiB"),
        (["--block-size", "128M"], 2, "must be 4 KiB to 64 MiB"),
        (["--block-size", "nan"], 2, "cannot read size"),
        (["--block-size", "-1M"], 2, "cannot read size"),
        (["--slices", "100"], 2, "out of range"),
        (["--resume", "--no-save"], 2, "drop --no-save"),
        (["--destructive"], 2, "--destructive is for block devices"),
        (["--resume"], 2, "no interrupted surface scan"),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(tmp_path, args, code, message):
    result = CliRunner().invoke(main, ["surface", str(tmp_path), *args])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_missing_target_is_exit_4(tmp_path):
    result = CliRunner().invoke(main, ["surface", str(tmp_path / "nowhere")])
    assert result.exit_code == 4
    assert "no such device or folder" in result.output


def _is_tmpfs(path: str) -> bool:
    with open("/proc/self/mounts") as mounts:
        return any(line.split()[1:3] == [path, "tmpfs"] for line in mounts)


@pytest.mark.skipif(not _is_tmpfs("/dev/shm"), reason="/dev/shm is not a tmpfs here")
def test_a_folder_in_ram_is_refused():
    result = CliRunner().invoke(main, ["surface", "/dev/shm"])
    assert result.exit_code == 4
    assert "lives in RAM" in result.output
