"""`flashmark run` on a folder says where it writes and how much, and leaves the reserve free
(flashmark.system.disk_space): a test area that would eat into it is refused before writing."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from flashmark.system.disk_space import reserve_bytes
from flashmark.units import format_size
from tests.cli_runner import flashmark_script as flashmark
from tests.cli_runner import started
from tests.emulation.runs import mounted_image

pytestmark = [pytest.mark.root, pytest.mark.fio]

MiB = 1 << 20


def _space(folder: os.PathLike[str]) -> tuple[int, int]:
    """The bytes free to a user and the size of the filesystem holding `folder`."""
    stats = os.statvfs(folder)
    return stats.f_bavail * stats.f_frsize, stats.f_blocks * stats.f_frsize


def test_a_test_area_that_would_eat_into_the_reserve_is_refused_before_writing(tmp_path):
    with mounted_image(tmp_path / "card.img", 256 * MiB, sparse=False) as (node, folder):
        free, total = _space(folder)
        reserve = reserve_bytes(total)
        size = (free - reserve) // MiB * MiB + MiB  # one MiB into the reserve
        done = flashmark("run", str(folder), "--size", str(size), "--no-save")
        assert done.returncode == 4, done.stderr
        assert done.stderr.strip() == (
            f"flashmark: error: {node} (ext4 on {folder}) has {format_size(free)} free; "
            f"writing {format_size(size)} there would leave less than the "
            f"{format_size(reserve)} flashmark always leaves free: choose a smaller --size"
        )
        assert os.listdir(folder) == ["lost+found"]
        assert _space(folder)[0] == free


def test_a_run_says_where_it_writes_and_how_much_before_it_writes(tmp_path):
    with mounted_image(tmp_path / "card.img", 256 * MiB, sparse=False) as (node, folder):
        free = _space(folder)[0]
        done = flashmark(
            "run", str(folder), "--size", "16M", "--runtime", "1", "--ramp", "0", "--no-save"
        )
        assert done.returncode == 0, done.stderr
        line = (
            f"space    writes up to 16 MiB to {node} (ext4 on {folder}), leaving at least "
            f"{format_size(free - 16 * MiB)} free"
        )
        lines = done.stderr.splitlines()
        assert line in lines
        assert lines.index(line) < next(i for i, text in enumerate(lines) if "running" in text)


def test_a_disk_filled_by_another_writer_stops_the_run_and_keeps_the_tests_measured(tmp_path):
    with mounted_image(tmp_path / "card.img", 256 * MiB, sparse=False) as (node, folder):
        with started("run", folder, "--size", "16M", "--runtime", "2", "--ramp", "0") as process:
            assert process.stderr is not None
            seen = []
            for line in process.stderr:  # the first test ends: fill the disk before the next
                seen.append(line)
                if line.startswith("[1/") and "running" not in line:
                    break
            free, total = _space(folder)
            other = free - reserve_bytes(total) // 2
            subprocess.run(["fallocate", "-l", str(other), str(folder / "other")], check=True)
            _, rest = process.communicate(timeout=120)
        assert process.returncode == 4, "".join(seen) + rest
        last = rest.strip().splitlines()[-1]
        assert last.startswith(f"flashmark: error: {node} (ext4 on {folder}) is filling up")
        assert "something else is writing there): stopped to leave" in last
        measured = re.search(r"; the (\d+) test\(s\) measured before it are saved as result", last)
        assert measured is not None and int(measured.group(1)) >= 1, last
        assert "marked partial" in last
        assert sorted(os.listdir(folder)) == ["lost+found", "other"]
