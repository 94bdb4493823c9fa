"""`flashmark run --require`: exit 8 after saving when a named grade is not "pass"."""

import json

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import flashmark


@pytest.fixture
def card(tmp_path):
    folder = tmp_path / "card"
    folder.mkdir()
    return folder


def env(recordings, tmp_path, recording):
    return {
        "FLASHMARK_FIO_REPLAY": str(recordings / recording),
        "FLASHMARK_DB": str(tmp_path / "history.sqlite3"),
    }


def standard(card, *require):
    # standard-fast-card: A1 passes; A2's depth-32 intervals straddle 4000/2000; the speed
    # classes are uncertain: its sustained-write (a file without a cache) stopped at its 64 MiB
    # size limit without a fall-off, so the rate may still be a burst
    return ("run", str(card), "--profile", "standard", "--runtime", "3", "--size", "64M",
            "--workload-scale", "0", "--json", *require)  # fmt: skip


def test_exit_8_on_a_failed_grade_after_the_result_is_saved(recordings, tmp_path, card):
    environment = env(recordings, tmp_path, "quick-a1-card")
    # quick-a1-card: recorded on an emulated card exactly at the A1 line (1920/500 IOPS,
    # 10 MB/s): A1 and U1 straddle their thresholds (a write figure runs from its durable rate,
    # flush included, to the rate the host accepted), A2 is far below its own
    # --runtime 8: the recorded run's lengths (tests/data/fio/quick-a1-card/scenario.txt)
    done = flashmark(
        "run", str(card), "--require", "a1,A2,U1", "--json", "--runtime", "8", env=environment
    )
    assert done.returncode == 8 and ExitStatus.REQUIREMENT.value == 8, done.stderr
    document = json.loads(done.stdout)  # printed in full before exiting
    assert document["grades"]["A2"]["verdict"] == "fail"
    assert document["grades"]["A1"]["verdict"] == "uncertain"
    lines = done.stderr.splitlines()
    assert lines[-4:] == [
        "flashmark: required grade A1: uncertain (rand-read-4k IOPS 1,500 ± 5 straddles 1,500; "
        "rand-write-4k IOPS 500 (498..502) straddles 500; seq-write MB/s 10.00 (9.76..10.24) "
        "straddles 10.00)",
        "flashmark: required grade A2: fail (rand-read-4k-q32 IOPS 1,499 ± 4 < 4,000; "
        "rand-write-4k-q32 IOPS 500 (498..501) < 2,000)",
        "flashmark: required grade U1: uncertain (seq-write MB/s 10.00 (9.76..10.24) straddles "
        "10.00)",
        "flashmark: error: required grades not passed: A1, A2, U1",
    ]
    listed = json.loads(flashmark("history", "--json", env=environment).stdout)
    assert [entry["id"] for entry in listed] == [document["id"]] == [1]  # saved before exit 8


def test_exit_0_when_every_required_grade_passes(recordings, tmp_path, card):
    done = flashmark(*standard(card, "--require", "A1"),
                     env=env(recordings, tmp_path, "standard-fast-card"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    grades = json.loads(done.stdout)["grades"]
    assert grades["A1"]["verdict"] == "pass"
    assert "required grade" not in done.stderr


def test_exit_8_on_a_speed_class_whose_cache_was_never_left(recordings, tmp_path, card):
    done = flashmark(*standard(card, "--require", "U3"),
                     env=env(recordings, tmp_path, "standard-fast-card"))  # fmt: skip
    assert done.returncode == 8, done.stderr
    u3 = json.loads(done.stdout)["grades"]["U3"]
    assert u3["verdict"] == "uncertain" and u3["checks"][0]["verdict"] == "pass"
    (line,) = [line for line in done.stderr.splitlines() if "required grade U3" in line]
    assert line == (
        "flashmark: required grade U3: uncertain (the write speed never dropped in the 64 MiB "
        "sustained-write wrote up to its size limit: the card's write cache may be larger than "
        "that, and the rate graded may still be the burst)"
    )


def test_exit_8_on_an_uncertain_grade_names_the_straddled_thresholds(recordings, tmp_path, card):
    done = flashmark(*standard(card, "--require", "A1,A2"),
                     env=env(recordings, tmp_path, "standard-fast-card"))  # fmt: skip
    assert done.returncode == 8, done.stderr
    a2 = json.loads(done.stdout)["grades"]["A2"]
    assert a2["verdict"] == "uncertain" and a2["pass"] is False
    assert [check["verdict"] for check in a2["checks"]] == ["uncertain", "uncertain", "pass"]
    (line,) = [line for line in done.stderr.splitlines() if "required grade A" in line]
    assert line == (
        "flashmark: required grade A2: uncertain (rand-read-4k-q32 IOPS 3,993 ± 27 straddles "
        "4,000; rand-write-4k-q32 IOPS 1,994 (1,926..2,068) straddles 2,000)"
    )
    assert "A1" not in line


def test_the_terminal_report_shows_uncertain(recordings, tmp_path, card):
    arguments = [a for a in standard(card) if a != "--json"]
    done = flashmark(*arguments, "--no-save", env=env(recordings, tmp_path, "standard-fast-card"))
    assert done.returncode == 0, done.stderr
    assert "uncertain" in done.stdout
    assert "straddles" in done.stdout


def test_an_unknown_grade_is_a_usage_error_listing_the_known_ones(recordings, tmp_path, card):
    environment = env(recordings, tmp_path, "quick-a1-card")
    done = flashmark("run", str(card), "--require", "A1,X9", env=environment)
    assert done.returncode == ExitStatus.USAGE.value == 2
    assert done.stderr.strip().splitlines() == [
        "flashmark: error: Invalid value for '--require': unknown grade 'X9': known grades "
        "are A1, A2, C10, U1, U3, V30 (see `flashmark run --help`)"
    ]
    assert not (tmp_path / "history.sqlite3").exists()  # refused before anything ran
