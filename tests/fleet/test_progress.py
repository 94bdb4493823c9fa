"""`flashmark fleet run`'s view of the playbook: each board's state from the callback's events,
its line, and the verdict line with the boards to run again."""

from __future__ import annotations

from flashmark.fleet.progress import BoardProgress, board_line, follow
from flashmark.fleet.verdict import verdict_line
from flashmark.server.campaign import Campaign


def test_a_board_runs_then_ends_once():
    boards: dict[str, BoardProgress] = {}
    assert follow(boards, {"event": "end"}) is None
    started = follow(boards, {"event": "start", "host": "board-1", "task": "flashmark measure"})
    assert started is not None and (started.state, started.step) == ("running", "measure")
    assert not started.done
    outcome = {"state": "uploaded", "step": "upload", "message": "", "result": 4, "tests": 6,
               "uploaded": 12, "url": "http://r/api/v1/results/12", "seconds": 41.0}  # fmt: skip
    ended = follow(boards, {"event": "ok", "host": "board-1", "task": "flashmark outcome",
                            "outcome": outcome})  # fmt: skip
    assert ended is not None and ended.done and ended.uploaded == 12
    assert board_line(ended) == (
        "board-1      uploaded     run 4 in 41 s, on the service as result 12: "
        "http://r/api/v1/results/12"
    )
    # Nothing after its end changes it (a later play's tasks).
    assert follow(boards, {"event": "failed", "host": "board-1", "task": "flashmark x"}) is None


def test_unreachable_and_failed_boards_say_why():
    boards: dict[str, BoardProgress] = {}
    message = "ssh: connect to host 10.0.0.2 port 22: No route"
    gone = follow(
        boards,
        {"event": "unreachable", "host": "board-2", "task": "flashmark plan", "message": message},
    )
    assert gone is not None
    assert board_line(gone) == (
        "board-2      unreachable  ssh: connect to host 10.0.0.2 port 22: No route"
    )
    failed = follow(boards, {"event": "failed", "host": "board-3", "task": "flashmark install.sh",
                             "message": "E: Unable to locate package fio"})  # fmt: skip
    assert failed is not None
    assert board_line(failed) == (
        "board-3      failed       E: Unable to locate package fio at install.sh"
    )


def test_the_verdict_adds_the_boards_the_campaign_never_saw():
    campaign = Campaign(
        name="lab", created_at="2026-11-26T00:00:00", job_hash="aaa", job={}, rule="",
        verdict="2 boards, no outlier", figures=(), boards=(),
    )  # fmt: skip
    boards = [
        BoardProgress("board-1", state="uploaded"),
        BoardProgress("board-2", state="incomplete"),
        BoardProgress("board-3", state="refused"),
    ]
    assert verdict_line(campaign, boards) == (
        "verdict: 2 boards, no outlier; 1 not on the service (board-3: refused); run them "
        "again alone with --limit board-2,board-3"
    )
    assert verdict_line(None, boards[2:]) == (
        "verdict: no board uploaded a result; 1 not on the service (board-3: refused); run "
        "them again alone with --limit board-3"
    )
