"""The flush recorder on another machine, reached through a real sshd on localhost: a board's
entries kept and fetched back, a key the server does not know refused at once, a dropped link
survived without a duplicate, a recorder gone for good stopping the run in time."""

from __future__ import annotations

import json
import shlex
import subprocess
import threading
import time

import pytest

from flashmark.errors import UsageError
from flashmark.powercut.recorder import (
    RecorderFailed,
    cycle_entry,
    flush_entry,
    read_run,
    run_entry,
)
from flashmark.powercut.remote import RemoteRecorder, RemoteSpec, fetch_run, remote_spec
from flashmark.powercut.store import RunStore, forced_request, keep_entries
from tests.powercut.sshd import Sshd, free_port, make_sshd
from tests.powercut.test_recorder import HEADER

RUN = HEADER.run


def remote(server: Sshd) -> RemoteSpec:
    spec = remote_spec("127.0.0.1", server.env())
    assert spec is not None
    return spec


def test_a_board_s_entries_are_kept_and_fetched_back_by_its_identity(sshd):
    board = remote(sshd).recorder(RUN)
    for entry in (run_entry(HEADER), cycle_entry(1, 0), flush_entry(1, 7), flush_entry(1, 15)):
        board.append(entry)
    board.close()
    entries = fetch_run(remote(sshd), str(HEADER.identity))
    assert fetch_run(remote(sshd), "cid:another") == []
    run = read_run(entries)
    assert run.header == HEADER and run.cycles[0].flushed_through == 15
    stored = (sshd.runs / f"{RUN}.jsonl").read_text().splitlines()
    assert [json.loads(line)["i"] for line in stored] == [0, 1, 2, 3]


def test_a_key_the_server_does_not_know_is_refused_at_once_not_retried(sshd, tmp_path):
    stranger = tmp_path / "stranger"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
        check=True, capture_output=True,
    )  # fmt: skip
    ssh = sshd.ssh_command.replace(str(sshd.folder / "client_key"), str(stranger))
    board = RemoteRecorder(RemoteSpec("127.0.0.1", tuple(shlex.split(ssh))), run=RUN)
    began = time.monotonic()
    with pytest.raises(RecorderFailed, match=r"was refused: .*Permission denied"):
        board.append(run_entry(HEADER))
    assert time.monotonic() - began < 10
    assert not (sshd.runs / f"{RUN}.jsonl").exists()


def test_a_dropped_link_is_survived_and_no_entry_is_stored_twice(tmp_path):
    server = make_sshd(tmp_path / "sshd")
    board = remote(server).recorder(RUN)
    with server.running():
        board.append(run_entry(HEADER))
        board.append(cycle_entry(1, 0))
    # The server is gone, and the board's link with it; it comes back 1 s later.
    assert board._link is not None
    board._link.process.kill()
    restarted = threading.Event()
    stop = threading.Event()

    def come_back() -> None:
        time.sleep(1.0)
        with server.running():
            restarted.set()
            stop.wait(60)

    thread = threading.Thread(target=come_back)
    thread.start()
    try:
        board.append(flush_entry(1, 7))  # waits for the recorder, then is kept once
        board.close()
        lines = (server.runs / f"{RUN}.jsonl").read_text().splitlines()
        stored = [json.loads(line) for line in lines]
        assert [entry["i"] for entry in stored] == [0, 1, 2]
        assert stored[2]["through"] == 7
    finally:
        stop.set()
        thread.join()
    assert restarted.is_set()


def test_a_key_restricted_to_the_recorder_keeps_flush_points_and_runs_nothing_else(tmp_path):
    """The board's key as docs/powercut.md has it in authorized_keys: `restrict` and the forced
    command `flashmark powercut record`, which takes the board's request from ssh."""
    server = make_sshd(tmp_path / "sshd", forced="flashmark powercut record")
    with server.running():
        board = remote(server).recorder(RUN)
        board.append(run_entry(HEADER))
        board.append(cycle_entry(1, 0))
        board.close()
        assert [entry["i"] for entry in fetch_run(remote(server), str(HEADER.identity))] == [0, 1]
        other = subprocess.run(
            [*remote(server).ssh, "-o", "BatchMode=yes", "127.0.0.1", "touch", str(tmp_path / "x")],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert other.returncode == 2
    assert "this key only keeps flush points" in other.stderr
    assert not (tmp_path / "x").exists()


def test_a_recorder_gone_for_good_stops_the_run_within_the_retry_time(tmp_path):
    ssh = ("ssh", "-F", "none", "-p", str(free_port()), "-o", "ConnectTimeout=2")
    board = RemoteRecorder(RemoteSpec("127.0.0.1", ssh), run=RUN, retry_s=1.0)
    began = time.monotonic()
    with pytest.raises(RecorderFailed, match=r"lost the recorder .* is not counted"):
        board.append(run_entry(HEADER))
    assert time.monotonic() - began < 10


def test_an_entry_sent_again_is_kept_once_and_a_gap_is_refused(tmp_path):
    store = RunStore(tmp_path)
    lines = [
        json.dumps({"i": 0, **run_entry(HEADER)}),
        json.dumps({"i": 1, **cycle_entry(1, 0)}),
        json.dumps({"i": 1, **cycle_entry(1, 0)}),  # the board did not see the answer
        json.dumps({"i": 3, **flush_entry(1, 7)}),
        "not json",
    ]
    answers = tmp_path / "answers"
    with answers.open("wb") as out:
        keep_entries(store, RUN, [line.encode() + b"\n" for line in lines], out)
    said = answers.read_text().splitlines()
    assert said[:3] == ["ok", "ok", "ok"]
    assert said[3] == f"error: entry 3 of run {RUN} where 2 was due"
    assert said[4].startswith("error: ")
    with pytest.raises(RecorderFailed, match="not a run id"):
        store.append("../../etc/passwd", 0, run_entry(HEADER))
    with pytest.raises(RecorderFailed, match="a run starts with its header"):
        store.append("cd" * 16, 0, cycle_entry(1, 0))
    assert [entry["i"] for entry in store.fetch(str(HEADER.identity))] == [0, 1]
    # Another process (a restarted recorder) appends on: this one counts again.
    RunStore(tmp_path).append(RUN, 2, flush_entry(1, 7))
    store.append(RUN, 3, flush_entry(1, 15))
    assert [entry["i"] for entry in RunStore(tmp_path).fetch(str(HEADER.identity))] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("original", "asked"),
    [
        (f"flashmark powercut record --run {RUN}", (RUN, None)),
        ("flashmark powercut record --fetch 'cid:03 53'", (None, "cid:03 53")),
    ],
)
def test_a_forced_command_takes_the_board_s_request(original, asked):
    assert forced_request(original) == asked


@pytest.mark.parametrize(
    "original",
    ["sh -c id", "flashmark powercut record --folder /etc --run x", "flashmark run", "'", ""],
)
def test_a_forced_command_refuses_anything_else(original):
    with pytest.raises(UsageError, match="this key only keeps flush points"):
        forced_request(original)


@pytest.mark.parametrize("host", ["-oProxyCommand=touch /tmp/x", "", "a host", "user@"])
def test_a_recorder_name_ssh_would_take_for_an_option_or_that_is_no_host_is_refused(host):
    with pytest.raises(UsageError, match="is not a host"):
        remote_spec(host, {})


def test_the_ssh_command_comes_from_the_environment():
    assert remote_spec("pc@192.168.1.5", {}) == RemoteSpec("pc@192.168.1.5", ("ssh",))
    spec = remote_spec("pc", {"FLASHMARK_SSH": "ssh -p 2222 -i '/keys/a key'"})
    assert spec is not None
    assert spec.command("--fetch", "cid:1")[:4] == ["ssh", "-p", "2222", "-i"]
    assert spec.command("--fetch", "cid:1")[-3:] == [
        "--", "pc", "flashmark powercut record --fetch cid:1",
    ]  # fmt: skip
