"""The flush record: fsync'd lines in a file, read back into a run, and a last line cut short
by a crash left out."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from flashmark.powercut.recorder import (
    CutMark,
    FileRecorder,
    RecorderFailed,
    RunHeader,
    cut_entry,
    cycle_entry,
    flush_entry,
    fua_entry,
    read_entries,
    read_run,
    run_entry,
    verified_entry,
)

HEADER = RunHeader(
    run="ab" * 16,
    identity="cid:0353445343333247",
    mode="raw",
    record_bytes=4096,
    flush_every=8,
    fua=True,
    area_start=0,
    area_bytes=1 << 30,
    cycles=6,
    started_at="2026-11-26T10:00:00+00:00",
    off_command="off",
    on_command="on",
    cut_min_s=1.0,
    cut_max_s=4.0,
    come_back_timeout_s=60.0,
)


def test_a_run_read_back_from_its_record_file(tmp_path):
    path = tmp_path / "run.jsonl"
    recorder = FileRecorder(path)
    for entry in (
        run_entry(HEADER),
        cycle_entry(1, 0),
        fua_entry(1, 7),
        flush_entry(1, 7),
        fua_entry(1, 15),
        cut_entry(1, CutMark(19, 18, 2.25, 0.1)),
        verified_entry(1, {"number": 1}),
        cycle_entry(2, 20),
        flush_entry(2, 27),
    ):
        recorder.append(entry)
    recorder.close()
    run = read_run(read_entries(path))
    assert run.header == HEADER
    first, second = run.cycles
    assert (first.flushed_through, first.cut) == (7, CutMark(19, 18, 2.25, 0.1))
    assert first.fua == frozenset({7, 15})
    assert first.flushed(7) and first.flushed(15) and not first.flushed(8)
    assert first.verified == {"number": 1}
    assert (second.first_seq, second.flushed_through, second.cut) == (20, 27, None)
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_last_line_cut_short_by_a_crash_was_never_acknowledged(tmp_path):
    path = tmp_path / "run.jsonl"
    lines = [json.dumps(run_entry(HEADER)), json.dumps(flush_entry(1, 7))]
    path.write_text(lines[0] + "\n" + json.dumps(cycle_entry(1, 0)) + "\n" + lines[1][:-5])
    entries = read_entries(path)
    assert [entry["type"] for entry in entries] == ["run", "cycle"]


def test_damage_before_the_last_line_is_refused(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text(
        json.dumps(run_entry(HEADER)) + "\n{broken\n" + json.dumps(cycle_entry(1, 0)) + "\n"
    )
    with pytest.raises(RecorderFailed, match="line 2"):
        read_entries(path)


def test_a_record_without_its_header_is_refused():
    with pytest.raises(RecorderFailed, match="no run header"):
        read_run([cycle_entry(1, 0)])
    with pytest.raises(RecorderFailed, match="malformed"):
        read_run([{"type": "run", **asdict(HEADER)}, flush_entry(4, 7)])


def test_a_record_folder_that_cannot_be_written_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(RecorderFailed, match="cannot keep the flush record"):
        FileRecorder(blocker / "run.jsonl")
