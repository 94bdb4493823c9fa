"""Paths are data, never syntax: whatever a folder is called, fio's job files do not change.

The whole measure step runs on real folders with hostile names (hypothesis generates them),
with recorded fio outputs instead of fio (ReplayRunner keeps every job it was given). The job
files must be the same, byte for byte, as for a plainly named folder, apart from the generated
test-file name; the test file must be gone and every other file untouched. tests/bench/
test_hostile_paths_fio.py does the same with real fio.
"""

import dataclasses
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from flashmark.bench.measure import measure
from flashmark.bench.model import Target, TargetKind
from flashmark.bench.plan import default_settings, plan_tests
from flashmark.bench.profiles import get_profile
from flashmark.bench.target import resolve_target
from flashmark.errors import EnvironmentProblem
from flashmark.fio.runner import FioProcessRunner, ReplayRunner, fio_work_parent, temp_folder
from flashmark.system.sysroot import SystemRoots
from tests.hostile_names import folder_paths, plant_sentinels, remove_tree, snapshot

PROFILE = get_profile("a1")
# Buffered: the folder may be on tmpfs here; direct I/O is what the fio tests check. 8 s: the
# recorded run's lengths (tests/data/fio/quick-a1-card/scenario.txt).
SETTINGS = default_settings(
    PROFILE, size_bytes=8 * 2**20, runtime_s=8, buffered=True, destructive=False
)


def replay(target: Target, recordings: Path) -> ReplayRunner:
    """Measure `target` on replayed outputs; the runner, which kept every job."""
    runner = ReplayRunner(recordings / "quick-a1-card")
    measure(plan_tests(PROFILE, SETTINGS, target, log_folder=runner.log_folder), runner)
    return runner


def jobs_for(folder: Path, recordings: Path, given: Path | None = None):
    """Measure `folder` on replayed outputs; the job texts with the test-file name masked."""
    target = resolve_target(
        str(given or folder), size_bytes=SETTINGS.size_bytes, destructive=False, roots=SystemRoots()
    )
    assert target.kind is TargetKind.FILE and target.test_file is not None
    texts = [job.text for job in replay(target, recordings).jobs_run]
    for text in texts:
        assert f"filename={target.test_file}\n" in text
    return [text.replace(target.test_file, "TEST-FILE") for text in texts], target


@pytest.fixture
def plain_jobs(tmp_path, recordings):
    folder = tmp_path / "plain"
    folder.mkdir()
    texts, _ = jobs_for(folder, recordings)
    return texts


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=folder_paths)
def test_job_files_do_not_depend_on_the_folder_name(tmp_path, recordings, plain_jobs, names):
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        target = root.joinpath(*names)
        target.mkdir(parents=True)
        plant_sentinels(root, target)
        before = snapshot(root)
        given = target / "inside.txt" if len(names) == 2 else None  # a file names its folder
        texts, resolved = jobs_for(target, recordings, given)
        assert texts == plain_jobs
        assert all(str(target) not in text for text in texts)
        assert snapshot(root) == before  # the test file is gone, nothing else changed
        assert resolved.folder == str(target)
    finally:
        remove_tree(root)


def test_a_tmpdir_fio_would_misread_falls_back_to_a_plain_one(tmp_path):
    hostile = tmp_path / "tmp#dir;x"
    hostile.mkdir()
    chosen = fio_work_parent(str(hostile))
    assert chosen in ("/tmp", "/var/tmp")
    assert fio_work_parent(str(tmp_path)) == str(tmp_path)  # pytest's folders are plain


def test_fio_never_gets_a_work_folder_it_would_misread(tmp_path):
    hostile = tmp_path / "work#1"
    hostile.mkdir()
    with pytest.raises(EnvironmentProblem, match="TMPDIR"):
        FioProcessRunner(hostile)


def test_a_folder_replaced_after_its_check_is_refused(tmp_path, recordings):
    folder = tmp_path / "card"
    folder.mkdir()
    target = resolve_target(
        str(folder), size_bytes=SETTINGS.size_bytes, destructive=False, roots=SystemRoots()
    )
    os.rename(folder, tmp_path / "elsewhere")
    folder.mkdir()  # same path, another folder: a test file here was never checked
    with pytest.raises(Exception, match="changed after it was checked"):
        replay(target, recordings)
    assert list(folder.iterdir()) == [] and list((tmp_path / "elsewhere").iterdir()) == []
    moved = dataclasses.replace(target, folder=str(tmp_path / "elsewhere"))
    replay(moved, recordings)  # same inode


def test_clean_looks_where_runs_put_their_fio_work_folders(tmp_path, monkeypatch):
    hostile = tmp_path / "tmp#dir"
    hostile.mkdir()
    monkeypatch.setenv("TMPDIR", str(hostile))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    try:
        assert str(temp_folder()) == fio_work_parent() != str(hostile)
    finally:
        monkeypatch.undo()
        tempfile.tempdir = None
