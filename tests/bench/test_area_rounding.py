"""--size is rounded down to whole blocks of the profile, or refused when too small.

`--size 2.5M` on the quick profile used to fail after preparing with a false "the device is
very slow": the preparation writes 1 MiB blocks, fio writes no partial last block (2 MiB of a
2.5 MiB area, checked with fio 3.33), and the preparation check compared bytes.
"""

import json
import os
import shutil

import pytest

from flashmark.bench.jobs import PREPARE_BLOCK_BYTES, PREPARE_TIME_LIMIT_S, prepare_job
from flashmark.bench.plan import default_settings, plan_area
from flashmark.bench.profiles import PROFILES, get_profile
from flashmark.bench.results import parse_prepare_output
from flashmark.errors import ExitStatus, UsageError
from flashmark.fio.runner import FioProcessRunner
from flashmark.units import KiB, MiB, parse_size
from tests.cli_runner import flashmark
from tests.direct_io import direct_io_folder


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize(
    "size", ["2.5M", "3M", "5000K", "17M", "33M", "100M", "129M", "1000001K", "1.5G"]
)
def test_every_accepted_size_is_whole_blocks_of_every_test_and_the_preparation(name, size):
    profile = get_profile(name)
    requested = parse_size(size)
    try:
        area = plan_area(profile, requested)
    except UsageError as refused:
        assert "too small" in str(refused) and "use at least" in str(refused)
        return
    assert area.size_bytes <= requested
    assert area.size_bytes % PREPARE_BLOCK_BYTES == 0
    for test in profile.tests:
        assert area.size_bytes % test.block_size_bytes == 0
        assert area.size_bytes >= 2 * test.block_size_bytes
    assert (area.note is None) == (area.size_bytes == requested)


def test_a_rounded_size_says_so_in_one_note():
    area = plan_area(get_profile("quick"), parse_size("2.5M"))
    assert area.size_bytes == 2 * MiB
    assert area.note == (
        "--size 2.5 MiB rounded down to 2 MiB, a whole number of 1 MiB blocks "
        "(the quick profile's largest)"
    )


def test_the_full_profile_rounds_to_its_16m_blocks_and_refuses_less_than_two():
    full = get_profile("full")
    assert plan_area(full, 40 * MiB).size_bytes == 32 * MiB
    with pytest.raises(UsageError, match="use at least 32 MiB"):
        plan_area(full, 31 * MiB)


def test_defaults_need_no_rounding():
    for profile in PROFILES.values():
        assert plan_area(profile, None).size_bytes == profile.default_size_bytes
        assert plan_area(profile, profile.default_size_bytes).note is None


def test_quick_run_with_a_fractional_size_prepares_what_fio_writes(tmp_path, recordings):
    # What fio does with a 2 MiB area in 1 MiB blocks: it writes 2 MiB (the recording's
    # preparation wrote its 128 MiB area).
    replay = tmp_path / "replay"
    shutil.copytree(recordings / "quick-a1-card-adaptive", replay)
    prepare = json.loads((replay / "prepare.json").read_text())
    prepare["jobs"][0]["write"]["io_bytes"] = 2 * MiB
    (replay / "prepare.json").write_text(json.dumps(prepare))
    target = tmp_path / "card"
    target.mkdir()
    env = {"FLASHMARK_FIO_REPLAY": str(replay), "FLASHMARK_DB": str(tmp_path / "h.sqlite3")}

    done = flashmark("run", str(target), "--size", "2.5M", "--json", "--no-save", env=env)

    assert done.returncode == 0, done.stderr
    assert "note: --size 2.5 MiB rounded down to 2 MiB" in done.stderr
    assert json.loads(done.stdout)["settings"]["size_bytes"] == 2 * MiB
    assert list(target.iterdir()) == []


def test_a_size_below_two_blocks_is_refused_before_anything_runs(tmp_path, recordings):
    env = {"FLASHMARK_FIO_REPLAY": str(recordings / "quick-a1-card-adaptive")}
    done = flashmark("run", str(tmp_path), "--size", "1500K", "--no-save", env=env)
    assert done.returncode == ExitStatus.USAGE
    assert "use at least 2 MiB" in done.stderr and len(done.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.fio
def test_real_fio_prepares_the_whole_rounded_area(tmp_path):
    profile = get_profile("quick")
    area = plan_area(profile, parse_size("2.5M") + 3 * KiB)
    settings = default_settings(
        profile, size_bytes=area.size_bytes, runtime_s=None, buffered=False, destructive=False
    )
    work = tmp_path / "work"
    work.mkdir()
    # The preparation needs direct I/O: an ext4 on a loop device where tmp_path has none.
    with direct_io_folder(tmp_path) as area_folder:
        folder_fd = os.open(area_folder, os.O_RDONLY | os.O_DIRECTORY)
        try:  # fio runs in the folder and writes a generated relative name, as in a run
            job = prepare_job(settings, "area.bin")
            output = FioProcessRunner(work).run(job, folder_fd=folder_fd)
        finally:
            os.close(folder_fd)
        assert parse_prepare_output(output, settings.size_bytes, PREPARE_TIME_LIMIT_S) > 0
        assert (area_folder / "area.bin").stat().st_size == 2 * MiB
