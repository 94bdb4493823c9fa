"""Knowing when the device was not ours (flashmark.bench.disturbance): a disturbed test grades
nothing and says why on its row and in the verdict line; real runs on emulated cards with and
without another process writing to the same filesystem (benchmarks/disturbance.py counts them
over many runs)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from flashmark.bench.disturbance import CounterSampler, DeviceSample, TestWatch
from flashmark.bench.document import document_to_run, run_to_document
from flashmark.bench.grading.classes import grade_results
from flashmark.bench.model import Disturbance, DisturbanceStatus
from flashmark.bench.render.view import WRITERS
from flashmark.fio.runner import FioOutput
from flashmark.stats import Verdict
from flashmark.system.sysroot import SystemRoots
from tests.bench.synthetic import graded, saved_run
from tests.bench.test_verdicts import card
from tests.emulation.runs import DEVICE_TIMING, flashmark_json
from tests.emulation.throttle import DeviceCaps, EmulatedDevice, unavailable_reason

# Foreign I/O on the device is what these tests judge: never beside another measured device.
pytestmark = DEVICE_TIMING

MB = 10**6
MiB = 2**20
CARD = DeviceCaps("A1 card", read_iops=2000, write_iops=700, read_bps=40 * MB, write_bps=20 * MB)
REASON = "another process wrote 3.10 MB/s to mmcblk0 during rand-write-4k"
DISTURBED = Disturbance(
    status=DisturbanceStatus.DISTURBED,
    reason=REASON,
    device="mmcblk0",
    read_bytes_per_s=0.0,
    write_bytes_per_s=3.1e6,
    read_requests_per_s=0.0,
    write_requests_per_s=47.0,
    cpu_some_pct=3.0,
    retries=2,
)


def disturbed(results, test):
    return [
        dataclasses.replace(r, disturbance=DISTURBED) if r.spec.name == test else r for r in results
    ]


def test_a_disturbed_test_passes_nothing_and_says_why():
    grades = graded(disturbed(card(), "rand-write-4k"))
    a1 = grades["A1"]
    assert a1.verdict is Verdict.UNCERTAIN
    assert a1.verdict_reason == REASON
    check = next(c for c in a1.checks if c.test == "rand-write-4k")
    assert check.verdict is Verdict.UNCERTAIN and check.passed is False
    assert grades["A2"].verdict is Verdict.PASS  # reads the depth-32 tests, not disturbed


def test_a_disturbed_test_fails_nothing_either():
    a1 = graded(disturbed(card(write=(100, 1)), "rand-write-4k"))["A1"]  # far below A1's 500 IOPS
    assert a1.verdict is Verdict.UNCERTAIN and a1.verdict_reason == REASON


def test_a_clean_test_still_fails_beside_a_disturbed_one():
    a1 = graded(disturbed(card(read=(100, 1)), "rand-write-4k"))["A1"]
    assert a1.verdict is Verdict.FAIL


def saved_run_with_disturbance():
    run = saved_run()
    assert all(t.disturbance is None for t in run.tests)  # saved before the check: loads
    tests = tuple(disturbed(run.tests, "rand-write-4k"))
    return dataclasses.replace(run, tests=tests, grades=grade_results(tests))


def test_the_row_the_verdict_line_and_every_export_name_it():
    run = saved_run_with_disturbance()
    assert f"A1 uncertain ({REASON})" in run.summary
    again = document_to_run(run_to_document(run))
    measured = again.test("rand-write-4k")
    assert measured is not None and measured.disturbance == DISTURBED
    assert run_to_document(again) == run_to_document(run)
    assert REASON in WRITERS.markdown([run])
    assert REASON in WRITERS.csv([run])
    screen = io.StringIO()
    Console(file=screen, width=400).print(WRITERS.terminal(run))
    assert REASON in screen.getvalue()


def test_a_late_report_does_not_hide_a_writer_beside_a_bursty_device():
    # A throttled card completes a 20 MB/s sequential write in grants of 2 MiB every 100 ms; a
    # writer beside it adds 1 MB/s. fio reports 150 ms after its window's end (busy CPUs):
    # its time less its runtime starts the window 150 ms late, which read alone would lose 3 MB
    # of the test's own writes and find the writer at a fraction of its rate. The samples fall
    # 37 ms into each grant's period, so no edge lines up with a grant either.
    start, runtime_s, lag_s, writer_bps = 1000.0, 2.0, 0.150, 1e6
    grants = [k * 0.1 for k in range(-20, 21)]  # ramp grants before the window's start, too

    def device_bytes(at: float) -> int:
        own = sum(2 * MiB for grant in grants if start + grant <= at)
        return own + round(writer_bps * (at - (start - 2.0)))

    samples = [start - 1.963 + k * 0.1 for k in range(45)]
    sampler = CounterSampler("loop0", SystemRoots())
    sampler.samples = [DeviceSample(at, 0, device_bytes(at), 0, 0, None, None) for at in samples]
    log = "".join(
        f"{round(grant * 1000)}, 1, 1, {MiB}, 0\n{round(grant * 1000)}, 1, 1, {MiB}, 0\n"
        for grant in grants
        if 0 < grant <= runtime_s
    )
    written = log.count("\n") * MiB
    report = {
        "timestamp_ms": round((start + runtime_s + lag_s) * 1000),
        "jobs": [{
            "read": {"io_bytes": 0, "total_ios": 0, "runtime": 0},
            "write": {"io_bytes": written, "total_ios": written // MiB, "runtime": 2000},
        }],
    }  # fmt: skip
    output = FioOutput(
        "seq-write", (), 0, json.dumps(report), "", {"seq-write_iops.1.log": log}, 2.2
    )
    watch = TestWatch("seq-write", "loop0", SystemRoots(), "device", MiB)
    watch.sampler = sampler
    watch.runs.append((output, start + runtime_s + lag_s + 0.01))
    judged = watch.judged(retries=0)
    assert judged.status is DisturbanceStatus.DISTURBED, judged
    assert judged.write_bytes_per_s == pytest.approx(writer_bps, rel=0.05)


# -- real runs on emulated cards ----------------------------------------------------------------


unavailable = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))


def on_emulated_cards(test):
    """A test of real runs on emulated cards: root, fio, and a machine that can emulate."""
    return unavailable(pytest.mark.root(pytest.mark.fio(test)))


def emulated_card(fstype: str = "ext4") -> EmulatedDevice:
    return EmulatedDevice(CARD, size_bytes=384 * MiB, fstype=fstype)


def foreign_writer(device: EmulatedDevice, rate: str, runtime_s: int) -> list[str]:
    """fio writing 64 KiB blocks at `rate` beside the test, for `runtime_s`."""
    assert device.mount_point is not None
    return [
        "fio", "--name=foreign", f"--filename={device.mount_point}/foreign.dat",
        "--size=32M", "--rw=write", "--bs=64k", "--direct=1", f"--rate={rate}",
        "--time_based", f"--runtime={runtime_s}", "--thread", "--output=/dev/null",
    ]  # fmt: skip


@contextlib.contextmanager
def writing(device: EmulatedDevice, argv: list[str]) -> Iterator[None]:
    # A session of its own, killed whole: fio's job threads and any child go with it.
    process = subprocess.Popen(
        device.command(argv), stdout=subprocess.DEVNULL, start_new_session=True
    )
    try:
        time.sleep(1.0)
        yield
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def a1_run(device: EmulatedDevice, *extra: str) -> dict[str, Any]:
    return flashmark_json(
        device, str(device.mount_point), "--profile", "a1", "--runtime", "2", "--size", "64M",
        *extra,
    )  # fmt: skip


def device_flags(document: dict[str, Any]) -> list[str]:
    return [
        t["name"]
        for t in document["tests"]
        if t["disturbance"]["status"] == "disturbed"
        and "another process" in t["disturbance"]["reason"]
    ]


@on_emulated_cards
def test_a_foreign_writer_of_1_mb_s_is_named_and_grades_nothing():
    with emulated_card() as device, writing(device, foreign_writer(device, "1m", 3600)):
        document = a1_run(device)
    names = [t["name"] for t in document["tests"]]
    assert device_flags(document) == names, [t["disturbance"] for t in document["tests"]]
    for test in document["tests"]:
        disturbance = test["disturbance"]
        assert disturbance["write_bytes_per_s"] > 0.5 * MB
        assert f"to {disturbance['device']} during {test['name']}" in disturbance["reason"]
        assert disturbance["retries"] >= 0
    for grade in document["grades"].values():
        assert grade["verdict"] == "uncertain", grade
    assert "another process wrote" in document["summary"]


@on_emulated_cards
@pytest.mark.parametrize("fstype", ["ext4", "btrfs"])
def test_an_idle_folder_flags_nothing(fstype):
    with emulated_card(fstype) as device:
        document = a1_run(device)
    assert device_flags(document) == []
    assert {t["disturbance"]["device"] for t in document["tests"]} == {Path(device.device).name}


_JOURNALD = (
    "import sys, time\n"
    "with open(sys.argv[1], 'ab') as log:\n"
    "    while True:\n"
    "        log.write(b'x' * 2000); log.flush(); time.sleep(0.1)\n"
)


@on_emulated_cards
def test_a_journald_like_writer_beside_is_not_flagged():
    with emulated_card() as device:
        assert device.mount_point is not None
        with writing(device, [sys.executable, "-c", _JOURNALD, f"{device.mount_point}/j.log"]):
            document = a1_run(device)
    assert device_flags(document) == []


@on_emulated_cards
def test_a_buffered_run_is_not_checked():
    with emulated_card() as device:
        document = a1_run(device, "--buffered")
    for test in document["tests"]:
        assert test["disturbance"]["status"] == "not checked"
        assert test["disturbance"]["reason"] == "not checked (buffered)"


@on_emulated_cards
def test_a_test_disturbed_by_a_writer_that_stops_is_measured_again_clean():
    # 10 s: past seq-write's first window (flashmark's start, a 2 s ramp, a 2 s window), then
    # quiet well within the 10 s wait for it.
    with emulated_card() as device, writing(device, foreign_writer(device, "2m", 10)):
        document = a1_run(device)
    first = document["tests"][0]  # seq-write, measured while the writer wrote
    assert first["disturbance"]["status"] == "clean", first["disturbance"]
    assert first["disturbance"]["retries"] >= 1
    assert device_flags(document) == []
    assert "another process" not in document["summary"]  # (2 s windows may still straddle)
