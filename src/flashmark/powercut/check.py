"""A cycle's result: its records read back in a session and classified against its log.

Shared by the cycle loop (run.py), which knows exactly what it wrote, and by `verify`
(hostdown.py), which knows only what the recorder kept: the flush points, and the moment the
off command started. The records to classify run from the cycle's first to the last one whose
write started; without that mark (the cut took the host down before it could say), to one
flush group past the last recorded flush point, the furthest the writer can have got while
the recorder had not answered.
"""

from __future__ import annotations

from dataclasses import dataclass

from flashmark.powercut.classify import Tally, classify
from flashmark.powercut.media import Session
from flashmark.powercut.recorder import CycleLog
from flashmark.powercut.result import CycleResult, FsCheck


@dataclass(frozen=True)
class Return:
    """How the device came back after the cut."""

    state: str  # result.DEVICE_STATES
    node: str | None
    after_s: float | None


def records_to_check(log: CycleLog, flush_every: int, capacity: int) -> int:
    mark = log.cut
    if mark is not None and mark.submitted_through is not None:
        return mark.submitted_through - log.first_seq + 1
    last = log.flushed_through if log.flushed_through is not None else log.first_seq - 1
    if log.fua:
        last = max(last, *log.fua)
    return min(capacity, last - log.first_seq + 1 + flush_every)


def check_cycle(
    session: Session,
    log: CycleLog,
    *,
    nonce: bytes,
    record_bytes: int,
    count: int,
    written: int | None,
    in_flight: int,
    came_back: Return,
) -> CycleResult:
    """Classify the cycle's `count` records as they read back; DeviceFailed when they cannot
    be read. `written` is how many the device acknowledged (None: not known, the host went
    down with the power; the records found intact or recorded as flushed are counted)."""
    tally = classify(
        session.read(log.first_seq, count),
        first_seq=log.first_seq,
        nonce=nonce,
        cycle=log.number,
        record_bytes=record_bytes,
        offset_of=session.offset_of,
        flushed=log.flushed,
    )
    flushed = flushed_count(log, count)
    return _cycle_result(
        log,
        tally,
        records_written=written
        if written is not None
        else max(flushed, tally.durable + tally.torn + tally.corrupt),
        records_flushed=flushed,
        record_bytes=record_bytes,
        in_flight=in_flight,
        came_back=came_back,
        fsck=session.fsck,
    )


def unchecked_cycle(
    log: CycleLog, *, count: int, written: int | None, in_flight: int, came_back: Return
) -> CycleResult:
    """A cycle whose records could not be read (the device did not come back whole)."""
    flushed = flushed_count(log, count)
    return _cycle_result(
        log,
        _NOTHING_READ,
        records_written=written if written is not None else flushed,
        records_flushed=flushed,
        record_bytes=0,
        in_flight=in_flight,
        came_back=came_back,
        fsck=None,
    )


# An unchecked cycle's counts: no record was read, so none is counted lost or durable.
_NOTHING_READ = Tally(0, 0, 0, 0, 0, 0, reordered=False, first_lost_seq=None)
# What a cycle's result takes from its tally, under the same names.
_TALLIED = (
    "durable", "lost_after_flush", "lost_unflushed", "torn", "corrupt", "reordered",
    "first_lost_seq",
)  # fmt: skip


def _cycle_result(
    log: CycleLog,
    tally: Tally,
    *,
    records_written: int,
    records_flushed: int,
    record_bytes: int,
    in_flight: int,
    came_back: Return,
    fsck: FsCheck | None,
) -> CycleResult:
    return CycleResult(
        number=log.number,
        first_seq=log.first_seq,
        cut_at_s=None if log.cut is None else log.cut.cut_at_s,
        off_command_s=None if log.cut is None else log.cut.off_command_s,
        records_written=records_written,
        records_in_flight=in_flight,
        records_flushed=records_flushed,
        flushed_bytes_lost=tally.lost_after_flush * record_bytes,
        device=came_back.state,
        back_after_s=came_back.after_s,
        back_as=came_back.node,
        fsck=fsck,
        **{name: getattr(tally, name) for name in _TALLIED},
    )


def flushed_count(log: CycleLog, count: int) -> int:
    return sum(log.flushed(seq) for seq in range(log.first_seq, log.first_seq + count))
