"""A destructive surface scan cut off by a power cut or a SIGKILL, then `--resume`d.

The card (tests.emulation.flash.writeback) keeps writes in a volatile cache until they are
flushed, and loses that cache when its power is cut; the host loses its power at the same
moment (flashmark is SIGKILLed). The scan must resume from what is durable, its last flushed
step, so that the resumed scan of this honest card verifies every byte.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.emulation.flash.model import FlashModel
from tests.emulation.flash.writeback import VolatileFlash
from tests.emulation.throttle import EmulationUnavailable

pytestmark = pytest.mark.flash

KiB, MiB = 1 << 10, 1 << 20
BLOCK = 256 * KiB
# 20 ms per 256 KiB write: 64 MiB take about 5 s, long enough to cut in the middle of its
# 2 s flush steps
WRITE_DELAY_MS = 20
MODEL = FlashModel(claimed_bytes=64 * MiB)


@pytest.fixture
def volatile_card() -> Iterator[Callable[..., VolatileFlash]]:
    with contextlib.ExitStack() as stack:

        def make(model: FlashModel, **options: Any) -> VolatileFlash:
            try:
                return stack.enter_context(VolatileFlash(model, **options))
            except EmulationUnavailable as error:
                pytest.skip(str(error))

        yield make


def start_scan(device: str, *extra: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "flashmark", "surface", device, "--destructive", "--yes"]
    argv += ["--block-size", "256K", *extra]
    return subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def checkpoint(history: Path) -> dict[str, Any] | None:
    """The newest surface entry in the history (a running scan's checkpoint), or None."""
    if not history.exists():
        return None
    with (
        contextlib.closing(sqlite3.connect(f"file:{history}?mode=ro", uri=True)) as db,
        contextlib.suppress(sqlite3.OperationalError),  # the table is not created yet
    ):
        row = db.execute(
            "SELECT document FROM results WHERE kind = 'surface' ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))
    return None


def wait_until(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert process.poll() is None, f"the scan ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within 60 s"
        time.sleep(0.02)


def written_through(device: str) -> int:
    """Bytes the loop device acknowledged as written (block/stat, field 7: sectors written)."""
    fields = (Path("/sys/block") / Path(device).name / "stat").read_text().split()
    return int(fields[6]) * 512


def resumed(device: str) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "flashmark", "surface", device, "--resume", "--destructive",
         "--yes", "--json"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), done.stderr


def assert_clean(document: dict[str, Any], model: FlashModel) -> None:
    integrity = document["integrity"]
    assert document["complete"]
    assert integrity["ranges"] == [], integrity["ranges"][:5]
    assert integrity["mismatched_bytes"] == 0
    assert integrity["verified_bytes"] == model.claimed_bytes


def test_a_power_cut_in_the_write_pass_resumes_from_the_last_flushed_step(
    volatile_card, private_history
):
    card: VolatileFlash = volatile_card(MODEL, write_delay_ms=WRITE_DELAY_MS)
    scan = start_scan(card.path)
    try:

        def durable_step_saved() -> bool:
            saved = checkpoint(private_history)
            return saved is not None and saved["state"]["next_offset"] > 0

        wait_until(durable_step_saved, scan, "checkpoint of a flushed step")

        def writes_in_the_cache() -> bool:  # acknowledged, not yet flushed to durable state
            return written_through(card.path) >= card.stats().bytes_written + 4 * BLOCK

        wait_until(writes_in_the_cache, scan, "unflushed writes")
        scan.kill()  # the host loses its power ...
        scan.wait()
        issued = written_through(card.path)
        card.power_cut()  # ... and so does the card, with the writes it had not flushed
    finally:
        if scan.poll() is None:
            scan.kill()
            scan.wait()
    saved = checkpoint(private_history)
    assert saved is not None and not saved["complete"]
    resume_at = saved["state"]["next_offset"]
    flushed = card.stats().bytes_written
    assert saved["state"]["phase"] == "write" and 0 < resume_at <= flushed < issued
    # The cut really lost writes the card had acknowledged: the first one after the durable
    # prefix is not on the card (a fresh card reads zeros there).
    assert card.durable(flushed, 4 * KiB) == bytes(4 * KiB)

    card.power_on()
    document, stderr = resumed(card.path)
    assert f"in its write phase at offset {resume_at}" in stderr
    assert document["resumed_from"] == saved["id"]
    assert_clean(document, MODEL)
    assert document["write"]["flushes"] >= 2  # steps of 2 s, then the end


def test_a_sigkill_in_the_read_pass_resumes_the_read_pass(volatile_card, private_history):
    card: VolatileFlash = volatile_card(MODEL, write_delay_ms=5)
    scan = start_scan(card.path)
    try:

        def reading() -> bool:
            saved = checkpoint(private_history)
            return saved is not None and saved["state"]["phase"] == "read"

        wait_until(reading, scan, "checkpoint in the read pass")
        scan.kill()
        scan.wait()
    finally:
        if scan.poll() is None:
            scan.kill()
            scan.wait()
    saved = checkpoint(private_history)
    assert saved is not None and saved["state"]["phase"] == "read"
    assert saved["write"]["bytes"] >= MODEL.claimed_bytes - BLOCK  # all but the ramp, durable
    document, stderr = resumed(card.path)
    assert "in its read phase" in stderr
    assert_clean(document, MODEL)
