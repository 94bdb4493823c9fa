"""The flush recorder on another machine, here a second process: a board's entries kept and
fetched back, a wrong token refused at once, a dropped link survived without a duplicate, and
forged or replayed messages refused."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark.errors import UsageError
from flashmark.powercut.listener import RunStore
from flashmark.powercut.protocol import (
    Channel,
    ProtocolError,
    board_handshake,
    read_token,
    recorder_handshake,
)
from flashmark.powercut.recorder import (
    RecorderFailed,
    cycle_entry,
    flush_entry,
    read_run,
    run_entry,
)
from flashmark.powercut.remote import RemoteRecorder, fetch_run
from tests.powercut.test_recorder import HEADER

TOKEN = b"correct-horse-battery-staple-0042"
RUN = HEADER.run


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def listener(folder: Path, token_file: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    """`flashmark powercut listen` in a process of its own, stopped (SIGTERM) at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "flashmark", "powercut", "listen", "--listen",
         f"127.0.0.1:{port}", "--token-file", str(token_file), "--folder", str(folder)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert f"recording flush points on 127.0.0.1:{port}" in line, line
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN.decode() + "\n")
    path.chmod(0o600)
    return path


def test_a_board_s_entries_are_kept_and_fetched_back_by_its_identity(tmp_path, token_file):
    port = free_port()
    folder = tmp_path / "runs"
    with listener(folder, token_file, port) as process:
        board = RemoteRecorder(("127.0.0.1", port), TOKEN, run=RUN)
        for entry in (run_entry(HEADER), cycle_entry(1, 0), flush_entry(1, 7), flush_entry(1, 15)):
            board.append(entry)
        board.close()
        entries = fetch_run(("127.0.0.1", port), TOKEN, identity=HEADER.identity)
        assert fetch_run(("127.0.0.1", port), TOKEN, identity="cid:another") == []
        assert process.poll() is None
    run = read_run(entries)
    assert run.header == HEADER and run.cycles[0].flushed_through == 15
    stored = (folder / f"{RUN}.jsonl").read_text().splitlines()
    assert [json.loads(line)["i"] for line in stored] == [0, 1, 2, 3]


def test_a_wrong_token_is_refused_at_once_not_retried(tmp_path, token_file):
    port = free_port()
    with listener(tmp_path / "runs", token_file, port):
        board = RemoteRecorder(("127.0.0.1", port), b"another-token-of-enough-length", run=RUN)
        began = time.monotonic()
        with pytest.raises(ProtocolError, match="refused this board's token"):
            board.append(run_entry(HEADER))
        assert time.monotonic() - began < 5
    assert not (tmp_path / "runs" / f"{RUN}.jsonl").exists()


def test_a_dropped_link_is_survived_and_no_entry_is_stored_twice(tmp_path, token_file):
    port = free_port()
    folder = tmp_path / "runs"
    with listener(folder, token_file, port):
        board = RemoteRecorder(("127.0.0.1", port), TOKEN, run=RUN, retry_s=20)
        board.append(run_entry(HEADER))
        board.append(cycle_entry(1, 0))
    # The recorder is gone; it comes back 1 s later on the same port and folder.
    restarted: list[subprocess.Popen[str]] = []
    stop = threading.Event()

    def come_back() -> None:
        time.sleep(1.0)
        with listener(folder, token_file, port) as process:
            restarted.append(process)
            stop.wait(30)

    thread = threading.Thread(target=come_back)
    thread.start()
    try:
        board.append(flush_entry(1, 7))  # waits for the recorder, then is kept once
        board.close()
        stored = [json.loads(line) for line in (folder / f"{RUN}.jsonl").read_text().splitlines()]
        assert [entry["i"] for entry in stored] == [0, 1, 2]
        assert stored[2]["through"] == 7
    finally:
        stop.set()
        thread.join()
    assert restarted


def test_a_recorder_gone_for_good_stops_the_run_within_the_retry_time(tmp_path):
    board = RemoteRecorder(("127.0.0.1", free_port()), TOKEN, run=RUN, retry_s=1.0)
    began = time.monotonic()
    with pytest.raises(RecorderFailed, match=r"lost the recorder .* is not counted"):
        board.append(run_entry(HEADER))
    assert time.monotonic() - began < 5


def test_an_entry_sent_again_is_kept_once_and_a_gap_is_refused(tmp_path):
    store = RunStore(tmp_path)
    store.append(RUN, 0, run_entry(HEADER))
    store.append(RUN, 1, cycle_entry(1, 0))
    store.append(RUN, 1, cycle_entry(1, 0))  # the board did not see the answer: sent again
    with pytest.raises(RecorderFailed, match=r"entry 3 .* where 2 was due"):
        store.append(RUN, 3, flush_entry(1, 7))
    with pytest.raises(RecorderFailed, match="not a run id"):
        store.append("../../etc/passwd", 0, run_entry(HEADER))
    assert len(store.fetch(run=RUN)) == 2
    assert RunStore(tmp_path).fetch(identity=HEADER.identity)[-1]["i"] == 1  # after a restart


def connected_pair() -> tuple[Channel, Channel]:
    left, right = socket.socketpair()
    board: list[Channel] = []
    thread = threading.Thread(target=lambda: board.append(board_handshake(left, TOKEN)))
    thread.start()
    recorder = recorder_handshake(right, TOKEN)
    thread.join()
    return board[0], recorder


def test_a_forged_or_replayed_message_is_refused():
    board, recorder = connected_pair()
    try:
        board.send({"op": "append", "i": 0})
        assert recorder.receive() == {"op": "append", "i": 0}
        line = {"n": 1, "body": {"op": "append", "i": 99}, "mac": "00" * 32}
        board.sock.sendall((json.dumps(line) + "\n").encode())
        with pytest.raises(ProtocolError, match="MAC does not hold"):
            recorder.receive()
    finally:
        board.close()
        recorder.close()
    board, recorder = connected_pair()
    try:
        board.send({"op": "fetch"})
        recorder.receive()
        board._sent = 0  # the same number again: a replay of the first message
        board.send({"op": "fetch"})
        with pytest.raises(ProtocolError, match="a replay"):
            recorder.receive()
    finally:
        board.close()
        recorder.close()


def test_a_token_file_others_can_read_or_a_short_token_is_refused(tmp_path):
    path = tmp_path / "token"
    path.write_text(TOKEN.decode())
    path.chmod(0o644)
    with pytest.raises(UsageError, match="chmod 600"):
        read_token(path)
    path.chmod(0o600)
    assert read_token(path) == TOKEN
    path.write_text("short")
    with pytest.raises(UsageError, match="at least 16 characters"):
        read_token(path)
    with pytest.raises(UsageError, match="FLASHMARK_POWERCUT_TOKEN"):
        read_token(None, environ={})
    assert read_token(None, environ={"FLASHMARK_POWERCUT_TOKEN": TOKEN.decode()}) == TOKEN
