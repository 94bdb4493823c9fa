"""`flashmark run --require`: exit 8 after saving when a named grade is not "pass"."""

import json

import pytest

from flashmark.errors import ExitStatus
from tests.cli_runner import flashmark


def replay(recordings, recording):
    return {"FLASHMARK_FIO_REPLAY": str(recordings / recording)}


def standard(folder, *require):
    # standard-fast-card: A1 passes; A2's depth-32 intervals straddle 4000/2000; the speed
    # classes are uncertain: its sustained-write (a file without a cache) stopped at its 64 MiB
    # size limit without a fall-off, so the rate may still be a burst
    return ("run", str(folder), "--profile", "standard", "--runtime", "3", "--size", "64M",
            "--workload-scale", "0", "--json", *require)  # fmt: skip


def test_exit_8_on_a_failed_grade_after_the_result_is_saved(recordings, folder):
    environment = replay(recordings, "quick-a1-card")
    # quick-a1-card: recorded on an emulated card exactly at the A1 line (1920/500 IOPS,
    # 10 MB/s): A1 and U1 straddle their thresholds (a write figure runs from its durable rate,
    # flush included, to the rate the host accepted), A2 is far below its own
    # --runtime 8: the recorded run's lengths (tests/data/fio/quick-a1-card/scenario.txt)
    done = flashmark(
        "run", str(folder), "--require", "a1,A2,U1", "--json", "--runtime", "8", env=environment
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


@pytest.mark.parametrize(
    ("require", "grade", "verdict", "checks", "reason"),
    [
        ("A1", "A1", "pass", ["pass"] * 3, None),
        # a speed class whose cache was never left
        ("U3", "U3", "uncertain", ["pass"] * 2,
         "the write speed never dropped in the 64 MiB sustained-write wrote up to its size "
         "limit: the card's write cache may be larger than that, and the rate graded may still "
         "be the burst"),
        # an uncertain grade names the thresholds straddled; the passed A1 gets no line
        ("A1,A2", "A2", "uncertain", ["uncertain", "uncertain", "pass"],
         "rand-read-4k-q32 IOPS 3,993 ± 27 straddles 4,000; rand-write-4k-q32 IOPS 1,994 "
         "(1,926..2,068) straddles 2,000"),
    ],
    ids=["A1-passes", "U3-cache-never-left", "A2-straddles"],
)  # fmt: skip
def test_exit_8_unless_every_required_grade_passes(
    recordings, folder, require, grade, verdict, checks, reason
):
    done = flashmark(*standard(folder, "--require", require),
                     env=replay(recordings, "standard-fast-card"))  # fmt: skip
    assert done.returncode == (0 if reason is None else 8), done.stderr
    judged = json.loads(done.stdout)["grades"][grade]
    assert judged["verdict"] == verdict and judged["pass"] is (verdict == "pass")
    assert [check["verdict"] for check in judged["checks"]] == checks
    said = [line for line in done.stderr.splitlines() if "required grade" in line]
    not_passed = [f"flashmark: required grade {grade}: {verdict} ({reason})",
                  f"flashmark: error: required grades not passed: {grade}"]  # fmt: skip
    assert said == ([] if reason is None else not_passed)


def test_the_terminal_report_shows_uncertain(recordings, folder):
    arguments = [a for a in standard(folder) if a != "--json"]
    done = flashmark(*arguments, "--no-save", env=replay(recordings, "standard-fast-card"))
    assert done.returncode == 0, done.stderr
    assert "uncertain" in done.stdout
    assert "straddles" in done.stdout


def test_an_unknown_grade_is_a_usage_error_listing_the_known_ones(
    recordings, folder, private_history
):
    environment = replay(recordings, "quick-a1-card")
    done = flashmark("run", str(folder), "--require", "A1,X9", env=environment)
    assert done.returncode == ExitStatus.USAGE.value == 2
    assert done.stderr.strip().splitlines() == [
        "flashmark: error: Invalid value for '--require': unknown grade 'X9': known grades "
        "are A1, A2, C10, U1, U3, V30 (see `flashmark run --help`)"
    ]
    assert not private_history.exists()  # refused before anything ran
