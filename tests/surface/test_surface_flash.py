"""`flashmark surface` on emulated cards through the whole stack (nbdkit, nbdfuse, direct-I/O
loop): the figures against the model's truth, the error map, safety, Ctrl-C and --resume, and
folder scans that leave nothing behind.

Rates are asserted within 2% and the cache size within 5%: the emulated
card paces by its own clock and absorbs host stalls up to 50 ms (docs/emulated-flash.md), and
the scan times whole passes, so load on the host does not flip them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flashmark.surface.medium import FOLDER_FILE_OVERHEAD_BYTES
from flashmark.surface.result import SurfaceResult
from flashmark.surface.run import SurfaceRequest, prepare_surface, scan_surface
from flashmark.system.disk_space import reserve_bytes
from flashmark.units import format_size
from tests.cli_runner import flashmark_script as flashmark
from tests.emulation.flash.device import EmulatedFlash
from tests.emulation.flash.engine import FlashStats
from tests.emulation.flash.model import Backing, BadRange, FakeMode, FlashModel
from tests.emulation.runs import DEVICE_TIMING
from tests.surface.truth import expected_ranges, mismatched_bytes, unreadable_bytes

pytestmark = [pytest.mark.flash, DEVICE_TIMING]

KiB, MiB = 1 << 10, 1 << 20
MB = 10**6
BLOCK = 256 * KiB


def scanned(*args: str) -> dict[str, Any]:
    done = flashmark("surface", *args, "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def ranges_of(document: dict[str, Any]) -> list[tuple[int, int, str, int | None]]:
    return [
        (r["start"], r["length"], r["kind"], r.get("source"))
        for r in document["integrity"]["ranges"]
    ]


def truth_of(model: FlashModel) -> list[tuple[int, int, str, int | None]]:
    return [(r.start, r.length, r.kind, r.source) for r in expected_ranges(model)]


# A pass's reports: (the host's clock, the card's counters) at its first (after its ramp) and
# at its last completion, each seen a moment later.
Reports = dict[str, list[tuple[int, FlashStats]]]


def card_clock(card: FlashStats) -> int:
    """The instant the card finished its work so far, by its own clock."""
    return card.first_request_ns + card.busy_ns + card.idle_ns


def scanned_by_the_library(
    device: EmulatedFlash, block: int
) -> tuple[SurfaceResult, FlashStats, Reports]:
    """`scan_surface` with the card's counters read before and as each pass reports."""
    request = SurfaceRequest(device.path, destructive=True, block_bytes=block, slices=256)
    job = prepare_surface(request)
    reports: Reports = {}

    def stats() -> FlashStats:
        # The engine (another process) publishes its counters under a seqlock; a descheduled
        # engine can hold it longer than the reader spins: read again a moment later.
        for _ in range(100):
            try:
                return device.stats()
            except RuntimeError:
                time.sleep(0.01)
        return device.stats()

    def progress(phase: str, done: int, total: int) -> None:
        seen = reports.setdefault(phase, [])
        if not seen or (done == total and len(seen) == 1):
            now = time.monotonic_ns()
            seen.append((now, stats()))

    before = stats()
    result = scan_surface(job, progress=progress)
    return result, before, reports


def test_a_card_with_a_write_cache_measured_against_its_truth(emulated_flash):
    """The library call, so that the card's own clock can be read while the passes run.

    A pass's time is its wall time from its ramp (the first request, not timed) to its last
    completion, less the host stalls the scan saw (its I/O thread not run for more than 50 ms:
    host_stall_ns; flashmark.surface.scan). On a host that keeps pace that is the card's busy
    time, the model's. On a loaded host the card also waits: for a request delivered more than
    50 ms late it idles (FlashStats.idle_ns), as a real device would; one delivered up to 50 ms
    late it absorbs, serving it as if it had come at once. Its clock (first request + busy +
    idle) then runs up to 50 ms apart from the host's at a pass's edges: a read pass read 3.3%
    below the card's busy and idle time (the host 37 ms behind at its end), and another 3.4%
    above the model's rate (its ramp seen late, the card's catching up taken as its speed). So
    the truth of a pass is the card's clock between the same two completions, known to within
    how late the host saw them (its first and last reports come a moment after them; 0.3 ms on
    an idle host), and the rate is asserted within 2% of that range."""
    model = FlashModel(
        claimed_bytes=48 * MiB,
        read_bps=80 * MB,
        cache_bytes=8 * MiB,
        cache_write_bps=40 * MB,
        write_bps=16 * MB,
        backing=Backing.MEMORY,
    )
    device: EmulatedFlash = emulated_flash(model)
    result, before, reports = scanned_by_the_library(device, BLOCK)
    assert result.complete and result.write is not None and result.read is not None
    timed = model.claimed_bytes - BLOCK  # the first request of each pass is its ramp
    # the model's busy time of each pass and of its ramp (the cache takes the first writes)
    busy_ns = {
        "write": model.cache_bytes / (40 * MB) * 1e9
        + (model.claimed_bytes - model.cache_bytes) / (16 * MB) * 1e9,
        "read": model.claimed_bytes / (80 * MB) * 1e9,
    }
    ramp_ns = {"write": BLOCK / (40 * MB) * 1e9, "read": BLOCK / (80 * MB) * 1e9}
    start = {"write": before, "read": reports["write"][1][1]}
    for phase, measured in (("write", result.write), ("read", result.read)):
        (host_first, first), (host_last, last) = reports[phase]
        # the card served the pass at the model's rates
        assert last.busy_ns - start[phase].busy_ns == pytest.approx(busy_ns[phase], rel=1e-3)
        # and the scan cut only time the card sat idle (a stall is a gap of the host's)
        stall_ns = measured.host_stall_ns
        assert 0 <= stall_ns <= last.idle_ns - start[phase].idle_ns + 1_000_000, phase
        # The ramp completed, by the card's clock, no sooner than its clock at the first
        # report less what it did since (the requests after the ramp, and at most the pass's
        # idle time so far); the host saw it by that report. The last completion was at the
        # card's clock at the last report, and seen by then.
        since_ramp_ns = first.busy_ns - start[phase].busy_ns - ramp_ns[phase]
        idle_so_far_ns = first.idle_ns - start[phase].idle_ns
        ramp_end_ns = card_clock(first) - since_ramp_ns - idle_so_far_ns
        shortest_s = (card_clock(last) - host_first - stall_ns) / 1e9
        longest_s = (host_last - ramp_end_ns - stall_ns) / 1e9
        rate = measured.bw_bytes
        assert rate is not None and timed / longest_s * 0.98 <= rate <= timed / shortest_s * 1.02, (
            phase, timed / longest_s, timed / shortest_s, stall_ns,
        )  # fmt: skip
    cache = result.cache
    assert cache is not None and cache.found
    assert cache.bytes == pytest.approx(model.cache_bytes, rel=0.05)
    assert cache.burst_bw_bytes == pytest.approx(model.burst_write_bps_at(BLOCK), rel=0.02)
    assert cache.sustained_bw_bytes == pytest.approx(model.sustained_write_bps_at(BLOCK), rel=0.02)
    integrity = result.integrity
    assert integrity.verified_bytes == model.claimed_bytes  # a genuine card: 0 false alarms
    assert (integrity.mismatched_bytes, integrity.unreadable_bytes) == (0, 0)
    assert integrity.ranges == ()
    assert len(result.slices) == 256
    assert device.stats().bytes_written == model.claimed_bytes


FAKES = {
    "wrap-64MiB-on-16MiB": FlashModel(
        claimed_bytes=64 * MiB,
        real_bytes=16 * MiB,
        backing=Backing.MEMORY,
        bad_ranges=(BadRange(20 * MiB + 1536, 1024), BadRange(63 * MiB, 4096)),
    ),
    "zeros-32MiB-on-20MiB": FlashModel(
        claimed_bytes=32 * MiB,
        real_bytes=20 * MiB + 512,
        fake=FakeMode.ZEROS,
        backing=Backing.MEMORY,
    ),
    "erased-32MiB-on-8MiB": FlashModel(
        claimed_bytes=32 * MiB, real_bytes=8 * MiB, fake=FakeMode.ERASED, backing=Backing.MEMORY
    ),
}


@pytest.mark.parametrize("model", FAKES.values(), ids=FAKES.keys())
def test_every_aliased_dropped_or_unreadable_sector_is_reported(emulated_flash, model):
    device = emulated_flash(model)
    document = scanned(device.path, "--destructive", "--yes")
    truth = expected_ranges(model)
    assert ranges_of(document) == truth_of(model)  # 0 missed, 0 false, to the sector
    integrity = document["integrity"]
    assert integrity["mismatched_bytes"] == mismatched_bytes(truth)
    assert integrity["unreadable_bytes"] == unreadable_bytes(truth)
    assert integrity["verified_bytes"] == (
        model.claimed_bytes - mismatched_bytes(truth) - unreadable_bytes(truth)
    )
    # the answer, as f3 gives it: how much of the claimed size is real, and what the rest does
    real, unreadable = model.real_capacity, integrity["unreadable_bytes"]
    assert real - unreadable <= integrity["verified_bytes"] <= real
    rest = {
        FakeMode.WRAP: "the rest wraps to the start",
        FakeMode.ZEROS: "the rest reads back as zeros (writes dropped)",
        FakeMode.ERASED: "the rest reads back as 0xFF (writes dropped)",
    }[model.fake]
    assert document["summary"].startswith(
        f"fake: {format_size(integrity['verified_bytes'])} real of "
        f"{format_size(model.claimed_bytes)}, {rest}"
    )


def test_without_destructive_nothing_is_written_and_errors_are_mapped(emulated_flash):
    model = FlashModel(
        claimed_bytes=16 * MiB, bad_ranges=(BadRange(5 * MiB, 512),), backing=Backing.MEMORY
    )
    device = emulated_flash(model)
    document = scanned(device.path)
    assert device.stats().bytes_written == 0
    assert document["write"] is None and document["cache"] is None
    assert ranges_of(document) == [(5 * MiB, 512, "unreadable", None)]
    assert document["integrity"]["verified_bytes"] == 0
    saved = flashmark("show", str(document["id"]))
    assert saved.returncode == 0, saved.stderr
    assert "unreadable: I/O error down to the block" in saved.stdout
    assert "read MB/s" in saved.stdout


def test_destructive_needs_a_typed_confirmation(emulated_flash):
    device = emulated_flash(FlashModel(claimed_bytes=16 * MiB, backing=Backing.MEMORY))
    done = flashmark("surface", device.path, "--destructive")
    assert done.returncode == 4
    assert "needs a typed confirmation" in done.stderr and "--yes" in done.stderr
    assert device.stats().bytes_written == 0
    history = flashmark("history", "--json")
    assert json.loads(history.stdout) == []  # nothing measured, nothing saved


def _wait_for(process: subprocess.Popen[str], text: str, timeout: float = 30) -> str:
    """Read the process's stderr until `text` appears."""
    assert process.stderr is not None
    seen = ""
    deadline = time.monotonic() + timeout
    while text not in seen:
        assert time.monotonic() < deadline, seen
        line = process.stderr.readline()
        assert line, seen  # the process ended first
        seen += line
    return seen


def test_ctrl_c_keeps_the_partial_scan_and_resume_finishes_it(emulated_flash):
    model = FlashModel(
        claimed_bytes=24 * MiB, read_bps=40 * MB, write_bps=10 * MB, backing=Backing.MEMORY,
        real_bytes=8 * MiB,
    )  # fmt: skip
    device = emulated_flash(model)
    argv = [sys.executable, "-m", "flashmark", "surface", device.path, "--destructive", "--yes"]
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_for(process, "write pass")
        time.sleep(0.8)  # the write pass takes 2.5 s
        process.send_signal(signal.SIGINT)
        _, rest = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, rest
    assert "stopped by SIGINT" in rest and "--resume" in rest and "--destructive" in rest
    assert "[1/2] write pass: stopped" in rest and "write pass: done" not in rest
    (entry,) = json.loads(flashmark("history", "--json").stdout)
    assert entry["kind"] == "surface" and "incomplete" in entry["label"]
    partial = json.loads(flashmark("show", str(entry["id"]), "--json").stdout)
    assert not partial["complete"] and partial["state"]["phase"] == "write"
    assert 0 < partial["write"]["bytes"] < model.claimed_bytes
    written_before = device.stats().bytes_written

    document = scanned(device.path, "--resume", "--destructive", "--yes")
    assert document["complete"] and document["resumed_from"] == entry["id"]
    # the resumed run wrote only the rest, and the whole surface was verified as one scan
    assert device.stats().bytes_written - written_before <= model.claimed_bytes - (
        partial["state"]["next_offset"] - BLOCK
    )
    # every block written and timed, but the ramp (first request) of each session
    assert model.claimed_bytes - 2 * MiB <= document["write"]["bytes"] < model.claimed_bytes
    assert ranges_of(document) == truth_of(model)
    nothing = flashmark("surface", device.path, "--resume")
    assert nothing.returncode == 2 and "no interrupted surface scan" in nothing.stderr


def test_a_vanishing_card_stops_with_exit_5_and_the_partial_scan_saved(emulated_flash):
    model = FlashModel(claimed_bytes=64 * MiB, vanish_after_bytes=72 * MiB, backing=Backing.MEMORY)
    device = emulated_flash(model)
    done = flashmark("surface", device.path, "--destructive", "--yes", "--json")
    assert done.returncode == 5, done.stderr
    assert "stopped answering" in done.stderr and "--resume" in done.stderr
    document = json.loads(done.stdout)
    assert not document["complete"] and document["state"]["phase"] == "read"
    assert document["write"]["bytes"] == model.claimed_bytes - MiB  # all but the ramp


@contextlib.contextmanager
def mounted_ext4(device_path: str) -> Iterator[Path]:
    subprocess.run(["mkfs.ext4", "-q", "-F", device_path], check=True, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="flashmark-surface-test-") as folder:
        subprocess.run(["mount", device_path, folder], check=True, capture_output=True)
        try:
            yield Path(folder)
        finally:
            subprocess.run(["umount", folder], check=True, capture_output=True)


def test_a_folder_is_filled_verified_and_left_as_it_was(emulated_flash):
    model = FlashModel(claimed_bytes=128 * MiB, backing=Backing.MEMORY)
    device = emulated_flash(model)
    with mounted_ext4(device.path) as folder:
        before = sorted(os.listdir(folder))
        stats = os.statvfs(folder)
        free, total = stats.f_bavail * stats.f_frsize, stats.f_blocks * stats.f_frsize
        done = flashmark("surface", str(folder), "--json")
        assert done.returncode == 0, done.stderr[-3000:]
        document = json.loads(done.stdout)
        # the passes numbered as planned, the answer last (on stderr beside a JSON document)
        assert "[1/2] write pass: done" in done.stderr and "[2/2] read pass: done" in done.stderr
        assert done.stderr.splitlines()[-1] == f"verdict: {document['summary']}; saved as #1"
        scanned_size = format_size(document["target"]["size_bytes"])
        assert document["summary"].startswith(f"all {scanned_size} of files read back as written")
        assert document["target"]["kind"] == "folder"
        assert document["target"]["filesystem"] == "ext4"
        size = document["target"]["size_bytes"]
        # all of it but the reserve and the room kept for the one file's own metadata
        room = free - reserve_bytes(total) - FOLDER_FILE_OVERHEAD_BYTES
        assert room - MiB < size <= room
        assert f"space    writes up to {scanned_size} to {device.path} (ext4 on " in done.stderr
        assert document["integrity"]["verified_bytes"] == size
        assert document["integrity"]["ranges"] == []
        assert sorted(os.listdir(folder)) == before
        refused = flashmark("surface", str(folder), "--destructive")
        assert refused.returncode == 2 and "block devices" in refused.stderr


def test_sigterm_during_a_folder_scan_removes_its_files(emulated_flash):
    model = FlashModel(claimed_bytes=96 * MiB, write_bps=10 * MB, backing=Backing.MEMORY)
    device = emulated_flash(model)
    with mounted_ext4(device.path) as folder:
        before = sorted(os.listdir(folder))
        argv = [sys.executable, "-m", "flashmark", "surface", str(folder), "--size", "16M"]
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_for(process, "write pass")
            assert any(name.startswith(".flashmark-") for name in os.listdir(folder))
            process.send_signal(signal.SIGTERM)
            _, rest = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert process.returncode == 143, rest
        assert "files were removed" in rest
        assert sorted(os.listdir(folder)) == before


def test_a_killed_folder_scan_leaves_files_that_clean_removes(emulated_flash):
    model = FlashModel(claimed_bytes=96 * MiB, write_bps=10 * MB, backing=Backing.MEMORY)
    device = emulated_flash(model)
    with mounted_ext4(device.path) as folder:
        before = sorted(os.listdir(folder))
        argv = [sys.executable, "-m", "flashmark", "surface", str(folder), "--size", "16M"]
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            _wait_for(process, "write pass")
            process.kill()  # SIGKILL: no chance to clean up
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        left = [name for name in os.listdir(folder) if name.startswith(".flashmark-")]
        assert left  # owner-stamped: the next command can tell its owner is gone
        cleaned = flashmark("clean", str(folder))
        assert cleaned.returncode == 0, cleaned.stderr
        assert sorted(os.listdir(folder)) == before


def test_a_mounted_device_is_refused_before_anything_is_written(emulated_flash):
    model = FlashModel(claimed_bytes=64 * MiB, backing=Backing.MEMORY)
    device = emulated_flash(model)
    with mounted_ext4(device.path) as folder:
        done = flashmark("surface", device.path, "--destructive", "--yes")
        assert done.returncode == 4, done.stderr
        assert f"refusing to write to {device.path}" in done.stderr
        assert f"mounted on {folder}" in done.stderr
        # refused while planning, before any scan (ext4's own journal writes go on meanwhile,
        # so the device's write counter cannot tell)
        assert json.loads(flashmark("history", "--json").stdout) == []
