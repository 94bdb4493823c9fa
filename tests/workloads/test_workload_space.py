"""`flashmark workload` says where it writes and how much before it writes, and leaves the
reserve free (flashmark.system.disk_space)."""

from __future__ import annotations

import os

import pytest

from flashmark.errors import TargetNotFound
from flashmark.system.sysroot import SystemRoots
from flashmark.units import format_size
from flashmark.workloads import session
from flashmark.workloads.needs import workload_needs
from tests.cli_runner import flashmark_script as flashmark
from tests.emulation.runs import mounted_image

pytestmark = pytest.mark.root

MiB = 1 << 20



def test_a_workload_says_where_it_writes_and_is_refused_when_it_would_eat_the_reserve(tmp_path):
    needs = workload_needs(("pkg-install",), 0.01).bytes
    with mounted_image(tmp_path / "card.img", 256 * MiB, sparse=False) as (node, folder):
        stats = os.statvfs(folder)
        free = stats.f_bavail * stats.f_frsize
        done = flashmark("workload", "pkg-install", str(folder), "--scale", "0.01", "--no-save")
        assert done.returncode == 0, done.stderr
        assert (
            f"space    writes up to {format_size(needs)} to {node} (ext4 on {folder}), "
            f"leaving at least {format_size(free - needs)} free"
        ) in done.stderr.splitlines()
        too_big = flashmark("workload", "pkg-install", str(folder), "--scale", "0.2", "--no-save")
        assert too_big.returncode == 4, too_big.stderr
        (error,) = [line for line in too_big.stderr.splitlines() if "error" in line]
        assert "is free, of which flashmark always leaves" in error and "--scale 0.0" in error
        assert sorted(os.listdir(folder)) == ["lost+found"]


@pytest.mark.parametrize("step", ["_check_space", "workloads_space", "device_for_path"])
def test_a_folder_moved_away_before_it_is_opened_is_the_one_no_such_folder_refusal(
    tmp_path, monkeypatch, step
):
    """Another user renames the target folder between its first check and its opening: the
    workloads stop with TargetNotFound's one wording (exit 4), not an internal error."""
    target = tmp_path / "target"
    target.mkdir()
    original = getattr(session, step)

    def moved_first(*args: object, **kwargs: object) -> object:
        if target.exists():
            target.rename(tmp_path / "elsewhere")
        return original(*args, **kwargs)

    monkeypatch.setattr(session, step, moved_first)
    with pytest.raises(TargetNotFound) as refused:
        session.run_workloads(("pkg-install",), target, scale=0.001, roots=SystemRoots())
    assert str(refused.value) == f"{target}: no such folder (moved or removed meanwhile)"
    assert list((tmp_path / "elsewhere").iterdir()) == []  # nothing written where it went
