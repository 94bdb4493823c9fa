"""The fleet playbook's decisions (flashmark/fleet/collection/plugins/filter/fleet.py), as
Python: which job is the campaign's, why a board is refused, what became of a board's run."""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType

import pytest

from flashmark.fleet.ansible import COLLECTION

PLUGIN = COLLECTION / "plugins" / "filter" / "fleet.py"


@pytest.fixture(scope="module")
def filters() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fleet_filters", PLUGIN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def planned(job_hash: str, **job: object) -> dict[str, object]:
    return {"rc": 0, "stdout": json.dumps({"job_hash": job_hash, "job": job})}


def test_the_campaign_on_the_service_decides_else_most_boards(filters):
    plans = [
        filters.flashmark_plan(planned("bbb", fio_version="fio-3.35")),
        filters.flashmark_plan(planned("aaa", fio_version="fio-3.33")),
        filters.flashmark_plan(planned("aaa", fio_version="fio-3.33")),
        filters.flashmark_plan({"rc": 2, "stderr": "flashmark: error: no such folder"}),
    ]
    assert plans[3] == {}
    missing = {"status": 404, "json": {}}
    assert filters.flashmark_reference(plans, missing)["job_hash"] == "aaa"
    tie = plans[:2]
    assert filters.flashmark_reference(tie, missing)["job_hash"] == "bbb"  # the first board's
    existing = {"status": 200, "json": {"job_hash": "ccc", "job": {"fio_version": "fio-3.30"}}}
    assert filters.flashmark_reference(plans, existing) == {
        "job_hash": "ccc",
        "job": {"fio_version": "fio-3.30"},
    }
    assert filters.flashmark_reference([{}, {}], missing) == {}


def test_a_board_is_refused_with_the_reason_in_words(filters):
    reference = {"job_hash": "aaa", "job": {"fio_version": "fio-3.33", "size_bytes": 4}}
    mine = filters.flashmark_plan(planned("aaa", fio_version="fio-3.33", size_bytes=4))
    assert filters.flashmark_refusal(mine, reference) == ""
    other = filters.flashmark_plan(planned("bbb", fio_version="fio-3.33", size_bytes=8))
    assert filters.flashmark_refusal(other, reference) == (
        "job hash bbb differs from the campaign's aaa: size_bytes 8, not 4"
    )
    pinned = filters.flashmark_plan(planned("aaa", flashmark_version="0.1.0", fio_version="x"))
    assert (
        filters.flashmark_refusal(pinned, {}, "0.2.0") == "flashmark 0.1.0 on this board, not 0.2.0"
    )
    assert filters.flashmark_refusal(pinned, {}, "", "fio-3.33") == "x on this board, not fio-3.33"
    failed = {"rc": 4, "stderr": "warning: x\nflashmark: error: /nowhere: no such folder\n"}
    assert filters.flashmark_refusal({}, reference, planned=failed) == "/nowhere: no such folder"
    absent = {"rc": 2, "failed": True, "msg": "[Errno 2] No such file or directory: b'flashmark'",
              "cmd": "flashmark run /var/tmp --job-hash"}  # fmt: skip
    assert filters.flashmark_refusal({}, reference, planned=absent).startswith(
        "flashmark is not installed here (flashmark was not found): set flashmark_wheel"
    )


def test_what_became_of_a_board_s_run(filters):
    document = {"id": 7, "tests": [{}, {}, {}], "partial": None}
    run = {"rc": 0, "stdout": json.dumps(document), "delta": "0:01:02.500000"}
    uploaded = {
        "rc": 0,
        "stdout": "run 7: uploaded as 31: http://results.example/api/v1/results/31\n",
    }
    outcome = filters.flashmark_outcome(run, uploaded)
    assert outcome == {
        "state": "uploaded", "step": "upload", "message": "", "result": 7, "tests": 3,
        "uploaded": 31, "url": "http://results.example/api/v1/results/31", "seconds": 62.5,
    }  # fmt: skip
    stopped = {
        "rc": 5,
        "stdout": json.dumps({**document, "partial": {"failed_step": "rand-read-4k"}}),
        "stderr": "flashmark: error: the device failed (EIO); the 3 test(s) measured before it "
        "are saved as result 7, marked partial",
        "delta": "0:00:10.000000",
    }
    incomplete = filters.flashmark_outcome(stopped, uploaded)
    assert (incomplete["state"], incomplete["step"], incomplete["uploaded"]) == (
        "incomplete", "rand-read-4k", 31,
    )  # fmt: skip
    assert incomplete["message"].startswith("the device failed (EIO)")
    refused = {"rc": 1, "stderr": "flashmark: error: http://x refused the result: job hash ..."}
    kept = filters.flashmark_outcome(run, refused)
    assert (kept["state"], kept["step"]) == ("failed", "upload")
    assert kept["message"] == (
        "http://x refused the result: job hash ...; result 7 is kept in the board's history"
    )
    nothing = filters.flashmark_outcome(
        {"rc": 3, "stdout": "", "stderr": "flashmark: error: fio is not installed"}, None
    )
    assert (nothing["state"], nothing["step"], nothing["message"]) == (
        "failed", "measure", "fio is not installed",
    )  # fmt: skip


def test_the_boards_to_run_again_are_those_without_their_whole_result(filters):
    hostvars = {
        "board-1": {"flashmark_outcome": {"state": "uploaded", "uploaded": 3}},
        "board-2": {"flashmark_outcome": {"state": "incomplete", "message": "EIO", "uploaded": 4}},
        "board-3": {"flashmark_outcome": {"state": "refused", "message": "job hash differs"}},
        "board-4": {},
    }
    boards = list(hostvars)
    assert filters.flashmark_to_run_again(boards, hostvars) == ["board-2", "board-3", "board-4"]
    assert filters.flashmark_lines(boards, hostvars) == [
        "board-1: uploaded (on the service as result 3)",
        "board-2: incomplete: EIO (on the service as result 4)",
        "board-3: refused: job hash differs",
        "board-4: no outcome (unreachable, or its play stopped)",
    ]


def test_only_a_missing_or_other_flashmark_is_installed(filters):
    absent = {"rc": 2, "failed": True, "msg": "[Errno 2] No such file or directory: b'flashmark'"}
    assert filters.flashmark_needs_install(absent)
    # ansible-core 2.19 says less, and nothing comes out of a command that never started.
    silent = {"rc": 2, "msg": "Error executing command.", "stdout": "", "stderr": ""}
    assert filters.flashmark_needs_install(silent)
    before_fleets = {"rc": 2, "stderr": "flashmark: error: No such option: --job-hash"}
    assert filters.flashmark_needs_install(before_fleets)
    usage = {"rc": 2, "stdout": "", "stderr": "flashmark: error: --size: cannot read size 'x'"}
    assert not filters.flashmark_needs_install(usage)
    older = planned("aaa", flashmark_version="0.0.9")
    assert filters.flashmark_needs_install(older, "0.1.0")
    assert not filters.flashmark_needs_install(older, "0.0.9")
    assert not filters.flashmark_needs_install(older)  # no pin: any, as long as all agree
    no_target = {"rc": 4, "stderr": "flashmark: error: /media/card: no such folder"}
    assert not filters.flashmark_needs_install(no_target, "0.1.0")
    assert not filters.flashmark_needs_install({"skipped": True}, "0.1.0")
