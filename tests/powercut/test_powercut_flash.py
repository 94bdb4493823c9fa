"""The power-cut test on emulated cards whose truth is known: the engine says, for every cut,
which completed writes it dropped and how many of those a flush had covered
(tests.emulation.flash.engine.PowerCut). The off and on commands are the card's own switch
(`power_command`), run by the test as a user's relay commands would be.

A few cycles per case with short cut windows keep this tier fast; the benchmark
(benchmarks/powercut.py) runs the long series (100 cuts of an honest card).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from flashmark.history.store import History
from flashmark.powercut.commands import PowerCommandFailed
from flashmark.powercut.cycle import PowerNotCut
from flashmark.powercut.plan import PowercutRequest, plan_powercut
from flashmark.powercut.result import VANISHED, PowercutResult
from flashmark.powercut.run import PowercutStopped, run_powercut
from flashmark.system.sysroot import SystemRoots
from tests.cli_runner import flashmark_script as flashmark
from tests.emulation.flash.device import EmulatedFlash
from tests.emulation.flash.model import Durability, FlashModel
from tests.emulation.flash.power import backing_file

pytestmark = pytest.mark.flash

MiB = 1 << 20
MB = 10**6
SECOND = 10**9
RECORD = 4096
FLUSH_EVERY = 8


def card_model(**changes: Any) -> FlashModel:
    """A 64 MiB card taking 4 KiB writes in 0.4 ms (some 2,500 records a second here)."""
    return FlashModel(
        claimed_bytes=64 * MiB, write_bps=20 * MB, write_latency_ns=200_000, **changes
    )


def cut(card: EmulatedFlash, cycles: int, tmp_path: Path, **changes: Any) -> PowercutResult:
    request = PowercutRequest(
        **{
            "device": card.path,
            "cycles": cycles,
            "off_command": card.power_command("off"),
            "on_command": card.power_command("on"),
            "cut_min_s": 0.3,
            "cut_max_s": 0.8,
            "come_back_timeout_s": 10.0,
            "record_file": tmp_path / "records",
            **changes,
        }
    )
    roots = SystemRoots()
    return run_powercut(request, plan_powercut(request, roots), roots=roots)


def test_an_honest_card_loses_nothing_it_acknowledged_over_six_cuts(emulated_flash, tmp_path):
    card = emulated_flash(card_model(durability=Durability.HONEST))
    result = cut(card, 6, tmp_path)
    truth = card.power_cuts()
    assert result.verdict == "pass", result.summary
    assert result.summary.startswith("pass — 6 cycles, nothing acknowledged was lost")
    assert result.flushed_bytes_lost == 0
    for cycle, cut_truth in zip(result.cycles, truth, strict=True):
        assert cycle.lost_after_flush == 0 and cycle.records_flushed > 0
        assert cut_truth.flushed_lost_bytes == 0
        # Every completed write the card dropped is found missing, plus at most the write in
        # flight (failed, torn, or refused because it came after the cut).
        lost = cycle.lost_unflushed + cycle.torn
        assert cut_truth.lost_writes <= lost <= cut_truth.lost_writes + 1, (cycle, cut_truth)


def test_a_lying_card_is_caught_with_the_flushed_bytes_it_lost(emulated_flash, tmp_path):
    card = emulated_flash(card_model(durability=Durability.LYING, durable_lag_ns=SECOND // 2))
    result = cut(card, 3, tmp_path)
    truth = card.power_cuts()
    assert result.verdict == "fail"
    assert "the card lost acknowledged writes in 3 of 3 cycles" in result.summary
    for cycle, cut_truth in zip(result.cycles, truth, strict=True):
        measured = cycle.flushed_bytes_lost
        # The card counts a write flushed once its flush completed; the test once the fsync
        # returned and was recorded: at most one group of records apart.
        assert 0 < measured <= cut_truth.flushed_lost_bytes <= measured + FLUSH_EVERY * RECORD
        assert not cycle.reordered
    assert result.flushed_bytes_lost == sum(c.flushed_bytes_lost for c in result.cycles)


def test_an_out_of_order_card_is_caught_losing_flushed_writes_before_later_ones(
    emulated_flash, tmp_path
):
    card = emulated_flash(
        card_model(durability=Durability.OUT_OF_ORDER, durable_lag_ns=SECOND, reorder_seed=3)
    )
    result = cut(card, 2, tmp_path)
    assert result.verdict == "fail"
    assert all(cycle.reordered for cycle in result.cycles)
    assert "lost acknowledged writes (out of order)" in result.summary


def test_torn_writes_are_found_exactly_where_the_card_tore_them(emulated_flash, tmp_path):
    """64 KiB records at 2 MB/s: a record takes 33 ms, so the power nearly always goes in the
    middle of one, which the card tears (its first sectors new, one garbage, the rest old)."""
    card = emulated_flash(
        FlashModel(
            claimed_bytes=64 * MiB,
            write_bps=2 * MB,
            durability=Durability.HONEST,
            torn_writes=True,
        )
    )
    result = cut(card, 3, tmp_path, record_bytes=64 * 1024)
    truth = card.power_cuts()
    assert sum(t.torn_writes for t in truth) >= 1, truth
    # A write cut before its first sector was stored left only garbage: lost, not torn.
    assert [c.torn for c in result.cycles] == [int(t.torn_kept_bytes > 0) for t in truth]
    assert result.verdict != "fail", "a torn write that was never acknowledged is allowed"


def test_a_card_that_does_not_come_back_is_reported_without_waiting_longer_than_asked(
    emulated_flash, tmp_path
):
    card = emulated_flash(card_model(durability=Durability.HONEST, dies_at_power_cut=2))
    began = time.monotonic()
    result = cut(card, 4, tmp_path, come_back_timeout_s=2.0)
    assert time.monotonic() - began < 30
    assert [c.device for c in result.cycles] == ["back", VANISHED]
    assert result.verdict == "fail" and not result.complete
    assert result.stopped == "the device did not come back within 2 s after cut 2"
    assert result.summary.endswith("the device did not come back after cut 2")


def test_the_same_card_is_followed_to_another_node_and_the_stranger_on_its_old_one_is_untouched(
    emulated_flash, tmp_path
):
    card = emulated_flash(card_model(durability=Durability.HONEST))
    home = card.path
    stranger = tmp_path / "stranger.img"
    stranger.write_bytes(b"\xa5" * MiB)
    # The on command: once the card's old node is free, a stranger takes it; then the card
    # comes back (as another loop device).
    image = backing_file(home)
    attached = f"/sys/block/{Path(home).name}/loop/backing_file"
    take_home = (
        f'while [ "$(cat {attached} 2>/dev/null)" = {shlex.quote(str(image))} ]; do sleep 0.02; '
        f"done; losetup {home} {shlex.quote(str(stranger))} 2>/dev/null || true; "
    )
    try:
        result = cut(card, 2, tmp_path, on_command=take_home + card.power_command("on"))
    finally:
        if backing_file(home) == str(stranger):
            subprocess.run(["losetup", "--detach", home], check=False)
    if result.cycles[0].back_as == home:
        pytest.skip(f"another program took {home} before the stranger could")
    assert result.verdict != "fail"
    assert all(c.back_as not in (None, home) for c in result.cycles)
    assert stranger.read_bytes() == b"\xa5" * MiB, "nothing was written to the stranger"


def test_an_off_command_that_fails_stops_the_test_and_leaves_the_card_powered(
    emulated_flash, tmp_path
):
    card = emulated_flash(card_model(durability=Durability.HONEST))
    with pytest.raises(PowercutStopped) as stopped:
        cut(card, 3, tmp_path, off_command=card.power_command("off") + "; exit 7")
    assert isinstance(stopped.value.cause, PowerCommandFailed)
    assert "the off command failed (exit 7)" in str(stopped.value.cause)
    assert "the on command was run, to leave the device powered" in stopped.value.cause.__notes__
    assert card.powered
    assert stopped.value.partial.cycles == ()


def test_an_off_command_that_cuts_nothing_is_an_error_never_a_pass(emulated_flash, tmp_path):
    card = emulated_flash(card_model(durability=Durability.LYING, durable_lag_ns=SECOND))
    began = time.monotonic()
    with pytest.raises(PowercutStopped) as stopped:
        cut(card, 3, tmp_path, off_command="true", off_timeout_s=1.0)
    assert isinstance(stopped.value.cause, PowerNotCut)
    assert "still acknowledged writes 1 s after the off command" in str(stopped.value.cause)
    assert time.monotonic() - began < 15
    assert card.power_cuts() == ()


def test_an_off_command_that_hangs_is_killed_and_the_card_powered_again(emulated_flash, tmp_path):
    card = emulated_flash(card_model(durability=Durability.HONEST))
    off = card.power_command("off") + "; sleep 60"
    began = time.monotonic()
    with pytest.raises(PowercutStopped) as stopped:
        cut(card, 2, tmp_path, off_command=off, command_timeout_s=2.0)
    assert "did not finish within 2 s and was killed" in str(stopped.value.cause)
    assert time.monotonic() - began < 20
    assert card.powered


def test_the_command_prints_progress_per_cycle_and_the_document(emulated_flash, tmp_path):
    card = emulated_flash(card_model(durability=Durability.HONEST))
    done = flashmark(
        "powercut", card.path, "--destructive", "--yes", "--cycles", "2", "--cut-after",
        "0.3-0.6", "--off-command", card.power_command("off"), "--on-command",
        card.power_command("on"), "--json",
        env={"XDG_STATE_HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "flashmark.powercut/1"
    assert [c["number"] for c in document["cycles"]] == [1, 2]
    assert document["verdict"] == "uncertain"
    assert "cycle 2/2: checked:" in done.stderr
    saved = History.locate().get(document["id"])  # the test's own history (conftest)
    assert saved.kind == "powercut" and {**saved.document, "id": saved.id} == document
    runs = list((tmp_path / "flashmark" / "powercut").glob("*.jsonl"))
    assert len(runs) == 1 and document["settings"]["run"] in runs[0].name


def test_the_filesystem_mode_says_where_it_writes_and_how_much_before_writing(
    emulated_flash, tmp_path
):
    card = emulated_flash(card_model(durability=Durability.HONEST))
    done = flashmark(
        "powercut", card.path, "--destructive", "--yes", "--cycles", "1", "--cut-after",
        "0.3-0.6", "--filesystem", "ext4", "--off-command", card.power_command("off"),
        "--on-command", card.power_command("on"),
        env={"XDG_STATE_HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # 64 MiB: a quarter is the reserve, and one cycle writes at most half the device.
    space = (
        f"space    writes up to 32 MiB to {card.path} (a new ext4 made on its 64 MiB), leaving "
        "at least 32 MiB of it to the filesystem and free space"
    )
    lines = done.stderr.splitlines()
    assert space in lines
    assert lines.index(space) < next(i for i, line in enumerate(lines) if "cycle 1/1" in line)


def test_an_ext4_filesystem_keeps_every_fsynced_file_on_an_honest_card(emulated_flash, tmp_path):
    card = emulated_flash(card_model(durability=Durability.HONEST))
    result = cut(card, 2, tmp_path, mode="ext4")
    assert [c.fsck.state if c.fsck else None for c in result.cycles] == ["clean", "clean"]
    assert all(c.lost_after_flush == 0 and c.durable > 0 for c in result.cycles)
    assert result.verdict == "uncertain"


def test_an_ext4_filesystem_on_a_lying_card_loses_fsynced_files(emulated_flash, tmp_path):
    card = emulated_flash(card_model(durability=Durability.LYING, durable_lag_ns=SECOND // 2))
    result = cut(card, 2, tmp_path, mode="ext4")
    assert result.verdict == "fail"
    assert all(c.lost_after_flush > 0 for c in result.cycles)


def test_a_cut_that_takes_the_host_down_is_checked_after_the_reboot_from_another_machine(
    emulated_flash, sshd, tmp_path
):
    """The board's `powercut --host-down`, killed by its own off command as a power cut would,
    keeps its flush points through ssh on the recorder's machine (a real sshd here); `powercut
    verify` after it reads them back the same way."""
    card = emulated_flash(card_model(durability=Durability.LYING, durable_lag_ns=SECOND // 2))
    env = {"XDG_STATE_HOME": str(tmp_path / "board-state"), **sshd.env()}
    recorder = ["--record-to", "127.0.0.1"]
    # The off command cuts the card, then this host: the shell's parent is the board's process.
    off = card.power_command("off") + "; kill -KILL $PPID"
    for cycle in (1, 2):
        board = flashmark(
            "powercut", card.path, "--destructive", "--yes", "--host-down",
            "--cut-after", "0.3-0.6", "--off-command", off, *recorder, env=env,
        )  # fmt: skip
        assert board.returncode == -signal.SIGKILL, board.stderr
        assert not card.powered
        card.power_on()  # the power comes back; the board boots
        done = flashmark("powercut", "verify", card.path, *recorder, "--json", env=env)
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        assert [c["number"] for c in document["cycles"]] == list(range(1, cycle + 1))
        assert document["verdict"] == "fail"
        assert document["settings"]["recorder"] == "127.0.0.1"
        assert document["cycles"][-1]["lost_after_flush"] > 0
        truth = card.power_cuts()[-1]
        lost = document["cycles"][-1]["flushed_bytes_lost"]
        assert lost <= truth.flushed_lost_bytes
    assert len(list(sshd.runs.glob("*.jsonl"))) == 1, "one run, continued"
    assert not (tmp_path / "board-state" / "flashmark" / "powercut").exists()


def test_a_run_whose_host_crashed_is_checked_from_its_local_record(emulated_flash, tmp_path):
    """No --host-down: the host dies at the cut all the same (its off command kills it), and
    `verify --record-file` checks the cut from the record the run kept on the host."""
    card = emulated_flash(card_model(durability=Durability.LYING, durable_lag_ns=SECOND // 2))
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    crashed = flashmark(
        "powercut", card.path, "--destructive", "--yes", "--cut-after", "0.3-0.6",
        "--off-command", card.power_command("off") + "; kill -KILL $PPID",
        "--on-command", card.power_command("on"), env=env,
    )  # fmt: skip
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    card.power_on()
    (record,) = (tmp_path / "state" / "flashmark" / "powercut").glob("*.jsonl")
    done = flashmark(
        "powercut", "verify", card.path, "--record-file", str(record), "--json", env=env
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    (cycle,) = document["cycles"]
    assert document["verdict"] == "fail" and cycle["lost_after_flush"] > 0
    assert cycle["flushed_bytes_lost"] <= card.power_cuts()[-1].flushed_lost_bytes
    assert json.loads(record.read_text().splitlines()[-1])["type"] == "verified"


def test_a_mounted_card_is_refused_before_anything_is_written(emulated_flash, tmp_path):
    card = emulated_flash(card_model())
    subprocess.run(["mkfs.ext4", "-F", "-q", card.path], check=True, capture_output=True)
    mount = tmp_path / "mnt"
    mount.mkdir()
    subprocess.run(["mount", card.path, str(mount)], check=True)
    try:
        (mount / "keep").write_text("precious")
        done = flashmark(
            "powercut", card.path, "--destructive", "--yes", "--off-command",
            card.power_command("off"), "--on-command", card.power_command("on"),
            env={"XDG_STATE_HOME": str(tmp_path)},
        )  # fmt: skip
    finally:
        subprocess.run(["umount", str(mount)], check=True)
    assert done.returncode == 4, done.stderr
    assert f"refusing to write to {card.path}: it is mounted on {mount}" in done.stderr
    assert card.power_cuts() == () and card.powered
    subprocess.run(["mount", card.path, str(mount)], check=True)
    try:
        assert (mount / "keep").read_text() == "precious"
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_ctrl_c_while_the_power_is_off_switches_it_back_on_before_exiting(emulated_flash, tmp_path):
    card = emulated_flash(card_model(durability=Durability.HONEST))
    process = subprocess.Popen(
        [sys.executable, "-m", "flashmark", "powercut", card.path, "--destructive", "--yes",
         "--cut-after", "0.3", "--off-command", card.power_command("off"),
         "--on-command", "sleep 3; " + card.power_command("on")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path)},
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while card.powered and time.monotonic() < deadline:
        time.sleep(0.05)  # until the off command has cut the card
    assert not card.powered
    process.send_signal(signal.SIGINT)  # during the on command's sleep
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert out.splitlines()[-1].startswith("verdict: uncertain — 0 cycles: no cut was checked")
    assert "stopped  by SIGINT" in out
    assert "the on command was run, to leave the device powered" in err
    assert card.powered
