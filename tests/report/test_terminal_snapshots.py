"""Snapshots of what every command prints on a terminal, so that a change of output is seen in
review: each command runs in-process on recorded inputs (result documents of every kind from
tests/data/report/, fio recordings from tests/data/fio/, recorded machines from
tests/data/probe/), rich renders at the fixed width flashmark uses off a terminal (132
columns, no colour), and the output is compared with tests/data/terminal/NAME.txt byte for
byte. What changes from one run to the next (the temporary folder, timestamps, durations) is
masked first.

Every measuring command ends its output with the same lines `flashmark show` prints for the
result it saved (the kind's terminal view and its verdict line, cli/tail.py): the views of
capacity, surface, workload, monitor and power-cut results are snapshotted through `show` of
real results of each kind; `run` also as it runs, from a replayed fio recording.

After an intended change of the output, regenerate the snapshots and read the diff:

    FLASHMARK_UPDATE_GOLDEN=1 python3 -m pytest -q tests/report/test_terminal_snapshots.py
    git diff tests/data/terminal
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.cli_runner import Done, flashmark
from tests.probe.recorded import recorded_machine
from tests.report.recorded import DATA, REPORT_DATA
from tests.report.test_golden import UPDATE_ENV

SNAPSHOTS = DATA / "terminal"
FIO_RECORDINGS = DATA / "fio"
# The results shown, in the order they are imported (their ids in the fresh history): a run
# of each profile, and a result of every other kind, all measured by flashmark itself.
RUN_NAMES = ("quick-a1-card", "standard-fast-card", "full-vm-disk")
KIND_NAMES = ("capacity", "surface", "workload", "monitor", "powercut")
RESULTS = (
    *((name, REPORT_DATA / f"{name}.json") for name in RUN_NAMES),
    *((name, REPORT_DATA / "kinds" / f"{name}.json") for name in KIND_NAMES),
)
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?( UTC|Z|[+-]\d\d:\d\d)?")
_DURATION = re.compile(r"\((\d+m)?\d+s\)")
# Where the `space` line writes (the live filesystem of the folder) and what it leaves free
# are this machine's now.
_SPACE = re.compile(r"^(space    writes up to [\d.]+ \w+ to ).*(, leaving at least ).*$", re.M)


def masked(text: str, tmp_path: Path) -> str:
    """`text` without what differs between two runs of the same command."""
    text = text.replace(str(tmp_path), "TMP")
    text = _TIMESTAMP.sub("TIME", text)
    text = _SPACE.sub(r"\1WHERE\2SIZE free", text)
    return _DURATION.sub("(Ns)", text)


def check_snapshot(name: str, text: str) -> None:
    """Compare with tests/data/terminal/NAME.txt, or rewrite it (FLASHMARK_UPDATE_GOLDEN=1).
    Every output ends with a newline: a shell prompt after it starts on a line of its own."""
    assert text.endswith("\n"), f"{name}: the output does not end with a newline"
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get(UPDATE_ENV) == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"no snapshot {path}: run with {UPDATE_ENV}=1 to create it")
    message = f"{path} differs; if the change is intended, regenerate with {UPDATE_ENV}=1"
    assert text == path.read_text(encoding="utf-8"), message


def succeeded(done: Done) -> Done:
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def history(tmp_path: Path) -> dict[str, str]:
    """A fresh history holding RESULTS as ids 1, 2, ...; the environment that names it."""
    env = {"FLASHMARK_DB": str(tmp_path / "history.sqlite3")}
    for _, path in RESULTS:
        succeeded(flashmark("import", str(path), env=env))
    return env


@pytest.mark.parametrize("index", range(len(RESULTS)), ids=[name for name, _ in RESULTS])
def test_show_of_each_kind_ends_with_its_verdict_line(history, tmp_path, index):
    name, _ = RESULTS[index]
    shown = succeeded(flashmark("show", str(index + 1), env=history))
    check_snapshot(f"show-{name}", masked(shown.stdout, tmp_path))
    assert shown.stdout.splitlines()[-1].startswith("verdict: ")


def test_history_lists_each_result_with_its_answer(history, tmp_path):
    listed = succeeded(flashmark("history", env=history))
    check_snapshot("history", masked(listed.stdout, tmp_path))


def test_compare_of_two_runs_and_a_reference(history, tmp_path):
    compared = succeeded(
        flashmark(
            "compare", "1", "2", "--reference", "seed002-sandisk-extreme-pro-a2-64gb", env=history
        )
    )
    check_snapshot("compare", masked(compared.stdout, tmp_path))


@pytest.mark.parametrize("machine", ["rpi5_a2", "nvme_pcie", "usb_stick_usb_storage"])
def test_probe_of_a_recorded_machine(machine, tmp_path):
    env = {**recorded_machine(machine), "FLASHMARK_DB": str(tmp_path / "history.sqlite3")}
    probed = succeeded(flashmark("probe", "/", env=env))
    check_snapshot(f"probe-{machine}", masked(probed.stdout, tmp_path))


def test_references_and_profiles():
    check_snapshot("references", succeeded(flashmark("references")).stdout)
    check_snapshot("profiles", succeeded(flashmark("profiles")).stdout)


def _run_quick_a1_card(tmp_path: Path, *options: str) -> Done:
    """`flashmark run` of a folder on the recorded Raspberry Pi 5 with its A2 card, fio
    replayed from the recording of that card."""
    folder = tmp_path / "card"
    folder.mkdir(exist_ok=True)
    env = {
        **recorded_machine("rpi5_a2"),
        "FLASHMARK_DB": str(tmp_path / "history.sqlite3"),
        "FLASHMARK_FIO_REPLAY": str(FIO_RECORDINGS / "quick-a1-card"),
    }
    return flashmark("run", str(folder), "--size", "128M", "--runtime", "8", *options, env=env)


def test_run_prints_its_plan_and_steps_then_its_result_and_verdict_line(tmp_path):
    ran = succeeded(_run_quick_a1_card(tmp_path))
    check_snapshot("run-quick-a1-card", masked(ran.stdout, tmp_path))
    check_snapshot("run-quick-a1-card-stderr", masked(ran.stderr, tmp_path))
    last = ran.stdout.splitlines()[-1]
    assert last.startswith("verdict: A1 ") and last.endswith("; saved as #1")


def test_run_quiet_prints_the_verdict_line_alone(tmp_path):
    ran = succeeded(_run_quick_a1_card(tmp_path, "--quiet"))
    assert ran.stderr == ""
    (line,) = ran.stdout.splitlines()
    history = {"FLASHMARK_DB": str(tmp_path / "history.sqlite3")}
    shown = succeeded(flashmark("show", "1", env=history))
    # the same answer `show` ends with, and where it was saved
    assert line == shown.stdout.splitlines()[-1] + "; saved as #1"


def test_errors_are_one_line_each(tmp_path):
    env = {"FLASHMARK_DB": str(tmp_path / "history.sqlite3")}
    lines = [
        flashmark("run", str(tmp_path), "--profile", "standrad", env=env).stderr,
        flashmark("workload", "pkg-instal", str(tmp_path), env=env).stderr,
        flashmark("show", "99", env=env).stderr,
    ]
    check_snapshot("errors", masked("".join(lines), tmp_path))
