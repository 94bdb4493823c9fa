"""Results to test the verdict, the document and the renderers with, built from cycles."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flashmark.powercut.result import (
    BACK,
    CycleResult,
    FsCheck,
    PowercutResult,
    PowercutSettings,
    PowercutTarget,
)
from flashmark.powercut.verdict import judge

RECORD = 4096


def cycle(number: int, **changes: Any) -> CycleResult:
    """A cycle of an honest card: 800 records written, 792 flushed, all flushed ones kept."""
    base = CycleResult(
        number=number,
        first_seq=(number - 1) * 801,
        cut_at_s=2.5,
        off_command_s=0.1,
        records_written=800,
        records_in_flight=1,
        records_flushed=792,
        durable=795,
        lost_after_flush=0,
        lost_unflushed=6,
        torn=0,
        corrupt=0,
        flushed_bytes_lost=0,
        reordered=False,
        first_lost_seq=None,
        device=BACK,
        back_after_s=1.2,
        back_as="/dev/sdb",
    )
    return replace(base, **changes)


def lying(number: int, lost: int = 120, **changes: Any) -> CycleResult:
    return cycle(
        number,
        lost_after_flush=lost,
        durable=795 - lost,
        flushed_bytes_lost=lost * RECORD,
        first_lost_seq=(number - 1) * 801 + 600,
        **changes,
    )


def result_of(
    cycles: list[CycleResult], *, path: str = "/dev/sdb", **changes: Any
) -> PowercutResult:
    judgement = judge(cycles, RECORD)
    base = PowercutResult(
        target=PowercutTarget(
            path=path,
            identity="usb:0781:5581:4C530001:lun0",
            size_bytes=64 * 10**9,
            logical_block_bytes=512,
            write_cache="write back",
            fua=False,
            device="sdb (usb): SanDisk Ultra",
        ),
        settings=PowercutSettings(
            run="00112233445566778899aabbccddeeff",
            cycles=len(cycles),
            mode="raw",
            record_bytes=RECORD,
            flush_every=8,
            fua=False,
            area_start=0,
            area_bytes=1 << 30,
            cut_min_s=1.0,
            cut_max_s=4.0,
            off_command="uhubctl -l 1-1 -p 2 -a off",
            on_command="uhubctl -l 1-1 -p 2 -a on",
            come_back_timeout_s=60.0,
            recorder="/root/.local/state/flashmark/powercut/00112233.jsonl",
        ),
        cycles=tuple(cycles),
        flushed_bytes_lost=sum(c.flushed_bytes_lost for c in cycles),
        verdict=judgement.verdict,
        loss_rate_upper_95=judgement.loss_rate_upper_95,
        summary=judgement.summary,
        started_at="2026-11-26T10:00:00+00:00",
        finished_at="2026-11-26T10:01:00+00:00",
        duration_s=60.0,
        complete=True,
        notes=("the device does not take FUA writes (queue/fua: 0): flushes only",),
        flashmark_version="1.0",
    )
    return replace(base, **changes)


def fsck(state: str) -> FsCheck:
    problems = () if state == "clean" else ("Inode 12 has illegal blocks.",)
    return FsCheck("e2fsck", 0 if state == "clean" else 1, state, problems)
