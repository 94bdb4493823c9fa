"""Paths are data, never syntax, with real fio: hostile folder names, sentinels around them.

`flashmark run "/mnt/card/notes#2024"` once overwrote the user's `/mnt/card/notes`: fio read
the path in its job file and cut it at the '#'. Here fio writes to folders with names
hypothesis makes up (bench/jobs.py lists what its parser reinterprets), with sentinel files
above, beside and inside the folder and where the old job line sent fio. Afterwards every file
is byte-identical, the test file is gone, and no fio process is left.
"""

import json
import os
import stat
import tempfile
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, given, settings

from flashmark.bench.measure import measure
from flashmark.bench.model import Settings
from flashmark.bench.plan import plan_tests
from flashmark.bench.profiles import RAND_WRITE_4K, Profile
from flashmark.bench.target import resolve_target
from flashmark.errors import ExitStatus
from flashmark.fio.runner import FioProcessRunner
from flashmark.system.sysroot import SystemRoots
from tests.cli_runner import flashmark_script
from tests.direct_io import direct_io_folder
from tests.emulation.throttle import DeviceCaps, EmulatedDevice
from tests.hostile_names import folder_paths, plant_sentinels, remove_tree, snapshot

# One short random-write test after the preparation: fio writes the whole test file twice.
# No ramp, here and in the CLI runs below (--ramp 0): where fio writes is tested, not a figure.
TINY = Profile("tiny", "hostile-name test", (RAND_WRITE_4K,), 4 * 2**20, 1, 0)
TINY_SETTINGS = Settings(
    profile="tiny",
    size_bytes=4 * 2**20,
    runtime_s=1,
    ramp_s=0,
    follow_ramp_s=0,
    direct=True,
    destructive=False,
)


@pytest.fixture
def folder_with_direct_io(tmp_path):
    with direct_io_folder(tmp_path) as folder:
        yield folder


@pytest.mark.fio
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=folder_paths)
def test_fio_writes_only_the_test_file_whatever_the_folder_is_called(folder_with_direct_io, names):
    root = Path(tempfile.mkdtemp(dir=folder_with_direct_io))
    workdir = Path(tempfile.mkdtemp(prefix="flashmark-fio-", dir=folder_with_direct_io))
    try:
        target_folder = root.joinpath(*names)
        target_folder.mkdir(parents=True)
        plant_sentinels(root, target_folder)
        before = snapshot(root)
        target = resolve_target(
            str(target_folder), size_bytes=TINY.default_size_bytes, destructive=False,
            roots=SystemRoots(),
        )  # fmt: skip
        runner = FioProcessRunner(workdir)
        run = measure(plan_tests(TINY, TINY_SETTINGS, target, log_folder=runner.log_folder), runner)
        assert run.tests[0].write is not None and run.tests[0].write.total_ios > 0
        assert snapshot(root) == before
        assert [p for p in psutil.Process().children(recursive=True) if p.name() == "fio"] == []
    finally:
        remove_tree(root)
        remove_tree(workdir)


@pytest.mark.fio
def test_the_cli_measures_a_hostile_folder_and_touches_nothing_else(folder_with_direct_io):
    """The issue's case through the whole command: `notes#2024` beside the user's `notes`,
    and a second level with everything else fio or a shell would act on; TMPDIR as hostile."""
    root = Path(tempfile.mkdtemp(dir=folder_with_direct_io))
    try:
        target = root / "notes#2024" / " semi;colon ${X} $(touch pwned) `id` a:b=c 'q\"\\\n "
        target.mkdir(parents=True)
        plant_sentinels(root, target)
        (root / "notes").write_bytes(os.urandom(256))  # the file the old bug overwrote
        tmpdir = root / "tmp#dir;x"  # fio would misread it: flashmark falls back to /tmp
        tmpdir.mkdir()
        before = snapshot(root)
        env = {"FLASHMARK_DB": str(root / "history.sqlite3"), "TMPDIR": str(tmpdir), "X": "/"}
        done = flashmark_script(
            "run", target, "--size", "4M", "--runtime", "1", "--ramp", "0", "--profile", "a1",
            "--no-save", "--json", env=env, timeout=180,
        )  # fmt: skip
        assert done.returncode == ExitStatus.OK, done.stderr
        assert "Traceback" not in done.stderr
        assert snapshot(root) == before
    finally:
        remove_tree(root)


@pytest.mark.root
@pytest.mark.fio
def test_a_device_reaches_fio_by_the_kernels_name_not_the_path_given(tmp_path):
    """A device node made elsewhere under a name fio would misread (mknod, as udev rules or a
    user can): fio is given /dev/NAME, found in sysfs for the node's major:minor."""
    with EmulatedDevice(DeviceCaps("plain"), size_bytes=64 * 2**20, filesystem=False) as device:
        node = tmp_path / "disk#1;x ${X}"
        os.mknod(node, stat.S_IFBLK | 0o600, os.stat(device.device).st_rdev)
        try:
            target = resolve_target(
                str(node), size_bytes=16 * 2**20, destructive=False, roots=SystemRoots()
            )
            assert target.path == device.device
            done = flashmark_script(
                "run", node, "--size", "16M", "--runtime", "1", "--ramp", "0", "--profile", "a1",
                "--no-save", "--json", env={"FLASHMARK_DB": ""}, timeout=120,
            )  # fmt: skip
        finally:
            node.unlink()
    assert done.returncode == ExitStatus.OK, done.stderr
    document = json.loads(done.stdout)
    assert document["target"]["path"] == device.device
    for test in document["tests"]:
        assert f"filename={device.device}\n" in test["job"]
