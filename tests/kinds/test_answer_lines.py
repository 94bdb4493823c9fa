"""The one line every result answers with (each kind's `summary`, the `verdict:` line its
command ends with), from recorded results: what it says for an SD card and for other media, a
read-only run, a fake card; and the habits of the output around it: a reader that goes away
early, --quiet."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from flashmark.bench.grading.classes import grade_results
from flashmark.bench.kind import RUN
from flashmark.bench.model import TargetKind
from flashmark.bench.run_result import Run
from flashmark.capacity.kind import CAPACITY
from flashmark.kinds.registry import KINDS
from tests.report.recorded import REPORT_DATA, load_document


def recorded_run(name: str) -> Run:
    run: Run = RUN.from_document(load_document(name))
    return run


def test_an_sd_cards_grades_in_one_line_with_the_figure_that_failed_each():
    run = recorded_run("quick-a1-card")  # the Pi 5's SD card
    assert RUN.summary(run) == (
        "A1 pass, A2 fail (random 4K read 1500 IOPS < 4000; random 4K write 500 IOPS < 2000), "
        "C10/U1 pass, U3/V30 fail (sustained sequential write 10.1 MB/s < 30)"
    )


def test_other_media_are_graded_as_sd_class_equivalents():
    run = recorded_run("full-vm-disk")  # a virtio disk: the classes are only a yardstick
    assert RUN.summary(run) == (
        "A1/A2/C10/U1/U3/V30 pass; as SD-class equivalents: a virtio device is not an SD card "
        "or eMMC"
    )


def test_a_read_only_run_gives_its_read_figures_and_why_no_grade_was_judged():
    run = recorded_run("quick-a1-card")
    read_only = [test for test in run.tests if not test.spec.writes]
    run = dataclasses.replace(
        run,
        target=dataclasses.replace(run.target, kind=TargetKind.DEVICE, path="/dev/mmcblk0"),
        settings=dataclasses.replace(run.settings, destructive=False),
        tests=tuple(read_only),
        tests_skipped=tuple(test.spec.name for test in run.tests if test.spec.writes),
        grades=grade_results(read_only),
    )
    # A2's read check alone fails it; every other grade needs a write figure
    assert RUN.summary(run) == (
        "A2 fail (random 4K read 1500 IOPS < 4000); A1, C10, U1, U3, V30 not judged: "
        "read-only, and each needs a write test (--destructive runs them)"
    )
    fast_enough = [
        dataclasses.replace(test, read=dataclasses.replace(test.read, iops=9000.0, iops_ci95=None))
        if test.spec.name == "rand-read-4k-q32" and test.read is not None
        else test
        for test in read_only
    ]
    run = dataclasses.replace(run, tests=tuple(fast_enough), grades=grade_results(fast_enough))
    assert RUN.summary(run) == (
        "reads 40.5 MB/s, random 4K reads 1500 IOPS; no grade judged: read-only, and each "
        "needs a write test (--destructive runs them)"
    )


def test_a_fake_cards_capacity_in_binary_units_as_f3_says_it():
    document = json.loads((REPORT_DATA / "kinds" / "capacity.json").read_text(encoding="utf-8"))
    result = CAPACITY.from_document(document)
    assert CAPACITY.summary(result) == (
        "fake: 64 MiB of the claimed 256 MiB hold data, the rest wraps to the start"
    )


@pytest.mark.parametrize("kind", KINDS, ids=[kind.name for kind in KINDS])
def test_every_kinds_document_holds_its_answer(kind):
    """The same text as the verdict line: "summary" (monitor: "summary_line", as its
    "summary" has been the recording's totals since its first version)."""
    name = {"benchmark": "standard-fast-card"}.get(kind.name)
    path = REPORT_DATA / (f"{name}.json" if name else f"kinds/{kind.name}.json")
    result = kind.from_document(json.loads(path.read_text(encoding="utf-8")))
    document = kind.to_document(result)
    key = "summary_line" if kind.name == "monitor" else "summary"
    assert document[key] == kind.summary(result) or (
        kind.name == "powercut" and document[key] == "verdict: " + kind.summary(result)
    )
    assert "\n" not in kind.summary(result)


def test_a_reader_that_goes_away_ends_the_command_quietly_with_success():
    # `flashmark references | head -1`, as coreutils do: no error line, exit status 0
    process = subprocess.Popen(
        [sys.executable, "-m", "flashmark", "references"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()
    status = process.wait(timeout=60)
    assert (status, process.stderr.read()) == (0, b"")


def _on_the_usb_stick(run: Run, seq_read_bps: float) -> Run:
    """The run as if measured on the recorded USB 3 stick on a 480 Mb/s link
    (tests/data/probe/usb_stick_usb_storage), its seq-read figure `seq_read_bps`."""
    from flashmark.probe.target import probe_target
    from tests.probe.recorded import load_scenario

    roots, tools = load_scenario("usb_stick_usb_storage")
    probe = probe_target("/dev/sde", roots, tools)
    tests = tuple(
        dataclasses.replace(t, read=dataclasses.replace(t.read, bw_bytes=seq_read_bps))
        if t.spec.name == "seq-read" and t.read is not None
        else t
        for t in run.tests
    )
    return dataclasses.replace(run, probe=probe, tests=tests)


def test_a_link_that_caps_the_figures_is_named_in_the_line_only_when_they_reach_it():
    """USB 2.0's bulk rate is 53.2 MB/s at most: a seq-read of 46.1 MB/s is within 20% of it
    (the link is the limit), one of 40.5 MB/s is not (something else holds the card back)."""
    run = recorded_run("quick-a1-card")
    limited = RUN.summary(_on_the_usb_stick(run, 46.1e6))
    assert limited.endswith(
        "; limited by USB link at 480 Mb/s, the device (USB 3.00) can do 5000 Mb/s "
        "(53.2 MB/s at most; seq-read 46.1 MB/s)"
    )
    assert "limited by" not in RUN.summary(_on_the_usb_stick(run, 40.5e6))
