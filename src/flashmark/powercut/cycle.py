"""One power cut: write, cut the power at a random moment while writes are in flight, stop.

    outcome = cut_while_writing(sink, recorder, plan, number=3, first_seq=..., rng=...)

The off command runs a uniform random delay in [cut_min_s, cut_max_s] after the first write
started. The writer's next request must then fail within `off_timeout_s`: otherwise the power
was not cut, the cycle proves nothing, and that is an error, never a pass.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from flashmark.errors import DeviceFailed, FlashmarkError
from flashmark.powercut.commands import run_power_command
from flashmark.powercut.recorder import CutMark, FlushRecorder, RecorderFailed, cycle_entry
from flashmark.powercut.writer import JournalWriter, RecordSink, WriterProgress

_POLL_S = 0.02
_FIRST_WRITE_S = 30.0  # the first write must start by then (a device that hangs at once)
_JOIN_S = 10.0  # after the device stopped answering, the writer's last request returns


class PowerNotCut(FlashmarkError):
    """The device kept acknowledging writes after the off command: its power was not cut."""


@dataclass(frozen=True)
class CutPlan:
    nonce: bytes
    flush_every: int
    fua: bool
    cut_min_s: float
    cut_max_s: float
    off_command: str
    command_timeout_s: float
    off_timeout_s: float


@dataclass(frozen=True)
class CutOutcome:
    progress: WriterProgress
    mark: CutMark

    @property
    def records_in_flight(self) -> int:
        submitted, acked = self.mark.submitted_through, self.mark.acked_through
        if submitted is None:
            return 0
        return submitted - (acked if acked is not None else submitted - 1)


def cut_while_writing(
    sink: RecordSink,
    recorder: FlushRecorder,
    plan: CutPlan,
    *,
    number: int,
    first_seq: int,
    rng: random.Random,
    on_cut: Callable[[float], None] = lambda cut_at_s: None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> CutOutcome:
    """Write cycle `number` from `first_seq` and cut the power. `on_cut` runs just before the
    off command, with the seconds since the first write: from then on the power may be off."""
    recorder.append(cycle_entry(number, first_seq))
    writer = JournalWriter(
        sink,
        recorder,
        nonce=plan.nonce,
        cycle=number,
        first_seq=first_seq,
        flush_every=plan.flush_every,
        fua=plan.fua,
        clock=clock,
    )
    writer.start()
    try:
        progress = writer.progress
        began = clock()
        while progress.started_at is None and writer.running:
            if clock() - began > _FIRST_WRITE_S:
                raise DeviceFailed(f"the first write did not start within {_FIRST_WRITE_S:.0f} s")
            sleep(_POLL_S)
        delay = rng.uniform(plan.cut_min_s, plan.cut_max_s)
        started = progress.started_at if progress.started_at is not None else clock()
        while writer.running and clock() < started + delay:
            sleep(min(_POLL_S, max(0.0, started + delay - clock())))
        _stopped_before_the_cut(writer)
        cut_at = clock()
        on_cut(round(cut_at - started, 6))
        done = run_power_command(plan.off_command, what="off", timeout_s=plan.command_timeout_s)
        _wait_until_gone(writer, sink, plan.off_timeout_s, clock, sleep)
    finally:
        writer.stop()
        if not writer.join(_JOIN_S):
            raise DeviceFailed(
                f"a write has neither completed nor failed {_JOIN_S:.0f} s after the writer was "
                "stopped: the device (or its driver) hangs; it stays open until it returns"
            )
    if progress.unexpected is not None:
        raise progress.unexpected
    mark = CutMark(
        submitted_through=progress.submitted_through,
        acked_through=progress.acked_through,
        cut_at_s=round(cut_at - started, 6),
        off_command_s=round(done.seconds, 6),
    )
    return CutOutcome(progress, mark)


def _stopped_before_the_cut(writer: JournalWriter) -> None:
    """The writer may only have stopped early because the journal area is full (then the cut
    comes with no write in flight, and the result says so)."""
    if writer.running:
        return
    progress = writer.progress
    if progress.recorder_error is not None:
        raise progress.recorder_error
    if progress.device_error is not None:
        raise DeviceFailed(
            f"the device failed a request before its power was cut: {progress.device_error}"
        )
    if progress.unexpected is not None:
        raise progress.unexpected


def _wait_until_gone(
    writer: JournalWriter,
    sink: RecordSink,
    timeout_s: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> None:
    """The device must stop answering after the off command; PowerNotCut if it does not."""
    deadline = clock() + timeout_s
    while writer.running and clock() < deadline:
        sleep(_POLL_S)
    progress = writer.progress
    if progress.device_error is not None:
        return
    if progress.recorder_error is not None:
        raise RecorderFailed(str(progress.recorder_error))
    if writer.running:
        raise PowerNotCut(
            f"the device still acknowledged writes {timeout_s:g} s after the off command: its "
            "power was not cut (check the off command, e.g. the hub port or the plug)"
        )
    raise PowerNotCut(
        "the journal area filled before the cut, and the device's power cannot be confirmed "
        "off: give --cut-after a shorter range"
    )
