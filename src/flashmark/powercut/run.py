"""The power-cut test as one library call.

    plan = plan_powercut(request, roots)            # plan.py: refusals, nothing written
    result = run_powercut(request, plan, roots=roots, progress=print_event)

Each cycle a session (media.py) checks the last cut's records, writes and cuts (cycle.py), and
releases the device; after the on command the same device is awaited by its identity. A run
that cannot go on raises PowercutStopped; the device is always left powered.
"""

from __future__ import annotations

import contextlib
import datetime
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

from flashmark import __version__
from flashmark.codec import encode
from flashmark.errors import DeviceFailed, FlashmarkError, StoppedEarly
from flashmark.powercut.check import Return, check_cycle, unchecked_cycle
from flashmark.powercut.commands import run_power_command, shown
from flashmark.powercut.cycle import CutOutcome, CutPlan, cut_while_writing
from flashmark.powercut.media import Medium, RawMedium, Session
from flashmark.powercut.plan import PowercutPlan, PowercutRequest, medium_for, state_folder
from flashmark.powercut.record import new_nonce
from flashmark.powercut.recorder import (
    CycleLog,
    FileRecorder,
    FlushRecorder,
    RunHeader,
    cut_entry,
    run_entry,
    verified_entry,
)
from flashmark.powercut.remote import RemoteSpec
from flashmark.powercut.result import (
    BACK,
    CAPACITY_CHANGED,
    UNREADABLE,
    VANISHED,
    CycleResult,
    PowercutResult,
    PowercutSettings,
    PowercutTarget,
)
from flashmark.powercut.verdict import judge
from flashmark.system.device_identity import size_of, wait_for_device
from flashmark.system.device_stack import kernel_name_of_node
from flashmark.system.signals import signal_of
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import device_held


@dataclass(frozen=True)
class PowercutEvent:
    cycle: int
    cycles: int
    text: str


Progress = Callable[[PowercutEvent], None]


class PowercutStopped(StoppedEarly[PowercutResult]):
    """The test stopped before its last cycle; `partial` holds the cycles checked so far."""


def run_powercut(
    request: PowercutRequest,
    plan: PowercutPlan,
    *,
    roots: SystemRoots | None = None,
    progress: Progress = lambda event: None,
    recorder_for: Callable[[str], FlushRecorder] | None = None,
    remote: RemoteSpec | None = None,
) -> PowercutResult:
    """Run the cycles; the result (or PowercutStopped with the cycles checked so far).

    `recorder_for(run)` gives the recorder of the run's flush points: by default the network
    recorder `remote` names (remote.RemoteRecorder), else a file named after the run in
    `request.record_file` or `state_folder()`."""
    if recorder_for is None and remote is not None:
        recorder_for = remote.recorder
    roots = roots or SystemRoots.from_environment()
    return _Run(request, plan, roots, progress, recorder_for).run()


@dataclass(frozen=True)
class _Written:
    number: int
    first_seq: int
    outcome: CutOutcome
    back: Return


class _Run:
    def __init__(
        self,
        request: PowercutRequest,
        plan: PowercutPlan,
        roots: SystemRoots,
        progress: Progress,
        recorder_for: Callable[[str], FlushRecorder] | None,
    ) -> None:
        self.request = request
        self.plan = plan
        self.roots = roots
        self.progress = progress
        self.nonce = new_nonce()
        self.rng = random.Random(request.seed)
        self.medium = medium_for(request, plan.size_bytes, roots)
        self.recorder = (recorder_for or self._record_file)(self.nonce.hex())
        self.fua = bool(plan.facts.fua)
        self.cycles: list[CycleResult] = []
        self.notes: list[str] = list(_notes(plan, self.fua))
        self.node = plan.node
        self.off_ran = False  # the off command ran and the on command not yet: power is off
        self.started_at = utc_now()
        self.began = time.monotonic()

    def _record_file(self, run: str) -> FlushRecorder:
        return FileRecorder((self.request.record_file or state_folder()) / f"{run}.jsonl")

    # -- the cycles ---------------------------------------------------------------------------
    def run(self) -> PowercutResult:
        stopped: str | None = None
        try:
            self.recorder.append(run_entry(self._header()))
            # One flashmark per device (flashmark.system.target_lock), and each session the
            # device as it came back: its number may have changed with its power.
            with device_held(self.node):
                self.medium.prepare(self.node)
                stopped = self._cycles()
        except BaseException as error:
            self._power_back_on_after(error)
            partial = self._result(_stop_reason(error))
            raise PowercutStopped(partial, error) from error
        finally:
            self.recorder.close()
        return self._result(stopped)

    def _cycles(self) -> str | None:
        written: _Written | None = None
        seq = 0
        total = self.request.cycles
        for number in range(1, total + 1):
            with (
                device_held(self.node),
                self.medium.session(self.node, after_cut=written is not None) as session,
            ):
                if written is not None:
                    checked = self._check(session, written)
                    stop = _stop_after(checked, session)
                    if stop is not None:
                        return stop
                    session.forget(written.first_seq, _log_of(written)[1])
                self._say(number, f"writing from record {seq:,}")
                outcome = cut_while_writing(
                    session.sink,
                    self.recorder,
                    self._cut_plan(),
                    number=number,
                    first_seq=seq,
                    rng=self.rng,
                    on_cut=self._off_starts,
                )
                self.recorder.append(cut_entry(number, outcome.mark))
                self._say(number, _cut_line(outcome))
            back = self._power_on(number)
            written = _Written(number, seq, outcome, back)
            if outcome.progress.submitted_through is not None:
                seq = outcome.progress.submitted_through + 1
            if back.state != BACK:
                self._record(self._unchecked(written))
                return _gone_reason(back, number, self.request.come_back_timeout_s)
        if written is not None:
            with device_held(self.node), self.medium.session(self.node, after_cut=True) as session:
                return _stop_after(self._check(session, written), session)
        return None

    def _check(self, session: Session, written: _Written) -> CycleResult:
        """Read the cycle's records back and classify them against what was recorded."""
        log, count = _log_of(written)
        try:
            result = check_cycle(
                session,
                log,
                nonce=self.nonce,
                record_bytes=self.medium.record_bytes,
                count=count,
                written=written.outcome.progress.records_written,
                in_flight=written.outcome.records_in_flight,
                came_back=written.back,
            )
        except DeviceFailed as error:
            self.notes.append(f"cycle {written.number}: {error}")
            return self._record(self._unchecked(written, device=UNREADABLE))
        self._say(written.number, checked_line(result))
        return self._record(result)

    def _unchecked(self, written: _Written, device: str | None = None) -> CycleResult:
        log, count = _log_of(written)
        back = written.back if device is None else Return(device, written.back.node, None)
        return unchecked_cycle(
            log,
            count=count,
            written=written.outcome.progress.records_written,
            in_flight=written.outcome.records_in_flight,
            came_back=back,
        )

    def _record(self, result: CycleResult) -> CycleResult:
        self.cycles.append(result)
        self.recorder.append(verified_entry(result.number, encode(result)))
        return result

    # -- power --------------------------------------------------------------------------------
    def _off_starts(self, cut_at_s: float) -> None:
        self.off_ran = True

    def _power_on(self, number: int) -> Return:
        run_power_command(
            self.request.on_command, what="on", timeout_s=self.request.command_timeout_s
        )
        self.off_ran = False
        back = self._wait_back()
        if back.state == BACK:
            moved = f" (was {self.node})" if back.node != self.node else ""
            self._say(number, f"back as {back.node}{moved} after {back.after_s:.2f} s")
            assert back.node is not None
            self.node = back.node
        return back

    def _wait_back(self) -> Return:
        timeout = self.request.come_back_timeout_s
        identity = self.plan.identity
        if identity is None:
            found = _wait_for_path(self.plan.node, self.roots, timeout)
        else:
            waited = wait_for_device(identity, self.roots, timeout_s=timeout)
            found = None if waited is None else (waited[0].node, waited[0].size_bytes, waited[1])
        if found is None:
            return Return(VANISHED, None, None)
        node, size, seconds = found
        if size != self.plan.size_bytes:
            self.notes.append(f"the device came back with {size} bytes, not {self.plan.size_bytes}")
            return Return(CAPACITY_CHANGED, node, round(seconds, 3))
        return Return(BACK, node, round(seconds, 3))

    def _power_back_on_after(self, error: BaseException) -> None:
        """The run stops while the power is off: switch it back on, so the device is left
        usable; what happened is added to the error."""
        if not self.off_ran:
            return
        self.off_ran = False
        try:
            run_power_command(
                self.request.on_command, what="on", timeout_s=self.request.command_timeout_s
            )
        except FlashmarkError as failed:
            error.add_note(f"the on command failed too, the device may be without power: {failed}")
        else:
            error.add_note("the on command was run, to leave the device powered")

    # -- the result ---------------------------------------------------------------------------
    def _cut_plan(self) -> CutPlan:
        request = self.request
        return request.cut_plan(
            self.nonce,
            flush_every=request.flush_every,
            fua=self.fua,
            off_timeout_s=request.off_timeout_s,
        )

    def _header(self) -> RunHeader:
        return run_header(self.request, self.plan, self.nonce, self.medium, self.started_at)

    def _result(self, stopped: str | None) -> PowercutResult:
        return build_result(
            self.plan,
            self._header(),
            self.cycles,
            recorder=self.recorder.where,
            duration_s=time.monotonic() - self.began,
            stopped=stopped,
            notes=self.notes,
        )

    def _say(self, number: int, text: str) -> None:
        self.progress(PowercutEvent(number, self.request.cycles, text))


def run_header(
    request: PowercutRequest, plan: PowercutPlan, nonce: bytes, medium: Medium, started_at: str
) -> RunHeader:
    """What the recorder keeps about a run: enough to find and check its records later. The
    commands are kept with their passwords left out (commands.shown)."""
    layout = medium.layout if isinstance(medium, RawMedium) else None
    return RunHeader(
        run=nonce.hex(),
        identity=plan.identity,
        mode=medium.mode,
        record_bytes=medium.record_bytes,
        flush_every=request.flush_every,
        fua=bool(plan.facts.fua),
        area_start=0 if layout is None else layout.area_start,
        area_bytes=0 if layout is None else layout.area_bytes,
        cycles=request.cycles,
        started_at=started_at,
        off_command=shown(request.off_command),
        on_command=shown(request.on_command),
        cut_min_s=request.cut_min_s,
        cut_max_s=request.cut_max_s,
        come_back_timeout_s=request.come_back_timeout_s,
    )


def build_result(
    plan: PowercutPlan,
    header: RunHeader,
    cycles: Sequence[CycleResult],
    *,
    recorder: str,
    duration_s: float,
    stopped: str | None,
    notes: Sequence[str],
) -> PowercutResult:
    """The result of the cycles checked so far, judged (verdict.py)."""
    judgement = judge(cycles, header.record_bytes)
    return PowercutResult(
        target=PowercutTarget(
            path=plan.node,
            identity=plan.identity,
            size_bytes=plan.size_bytes,
            logical_block_bytes=plan.facts.logical_block_bytes,
            write_cache=plan.facts.write_cache,
            fua=plan.facts.fua,
            device=plan.summary,
        ),
        # the header's fields under the same names, and where the flush points went
        settings=PowercutSettings(
            **{
                f.name: getattr(header, f.name)
                for f in fields(PowercutSettings)
                if f.name != "recorder"
            },
            recorder=recorder,
        ),
        cycles=tuple(cycles),
        flushed_bytes_lost=sum(cycle.flushed_bytes_lost for cycle in cycles),
        verdict=judgement.verdict,
        loss_rate_upper_95=judgement.loss_rate_upper_95,
        summary=judgement.summary,
        started_at=header.started_at,
        finished_at=utc_now(),
        duration_s=round(duration_s, 3),
        complete=stopped is None and len(cycles) == header.cycles,
        stopped=stopped,
        notes=tuple(notes),
        flashmark_version=__version__,
    )


def _stop_after(checked: CycleResult, session: Session) -> str | None:
    """Why the run cannot go on after this check, or None."""
    if checked.device != BACK:
        return f"the device came back {checked.device} after cut {checked.number}"
    if not session.usable:
        state = checked.fsck.state if checked.fsck is not None else "unusable"
        return f"the filesystem could not be mounted after cut {checked.number} (fsck: {state})"
    return None


def _log_of(written: _Written) -> tuple[CycleLog, int]:
    """The cycle's log as the recorder holds it, and how many records were submitted."""
    progress, mark = written.outcome.progress, written.outcome.mark
    log = CycleLog(
        written.number, written.first_seq, progress.flushed_through, frozenset(progress.fua), mark
    )
    submitted = mark.submitted_through
    return log, 0 if submitted is None else submitted - written.first_seq + 1


def _wait_for_path(
    node: str, roots: SystemRoots, timeout_s: float
) -> tuple[str, int, float] | None:
    """Without an identity: the same node with a size again."""
    began = time.monotonic()
    while True:
        with contextlib.suppress(FlashmarkError, OSError):
            size = size_of(kernel_name_of_node(node, roots), roots)
            if size > 0:
                return node, size, time.monotonic() - began
        if time.monotonic() - began >= timeout_s:
            return None
        time.sleep(0.1)


def _notes(plan: PowercutPlan, fua: bool) -> list[str]:
    notes = []
    if plan.identity is None:
        notes.append(
            "the device names no identity (no CID, WWID, serial, by-id name): it is recognised "
            "by its path and capacity only"
        )
    if plan.facts.write_cache == "write through":
        notes.append(
            "the kernel sees no volatile write cache (queue/write_cache: write through): it "
            "completes flushes without sending them, so the device is trusted to keep every "
            "write it acknowledges"
        )
    if fua:
        notes.append("the device takes FUA writes: each group's last record is written with FUA")
    else:
        notes.append("the device does not take FUA writes (queue/fua: 0): flushes only")
    return notes


def _cut_line(outcome: CutOutcome) -> str:
    progress, mark = outcome.progress, outcome.mark
    full = "; the journal area was full" if progress.full else ""
    off = mark.off_command_s or 0.0
    return (
        f"power cut at {mark.cut_at_s:.2f} s: {progress.records_written:,} records acknowledged,"
        f" {progress.flushes:,} flushes recorded (off command {off:.2f} s){full}"
    )


def checked_line(result: CycleResult) -> str:
    line = (
        f"checked: {result.durable:,} durable, {result.lost_after_flush:,} lost after a flush, "
        f"{result.lost_unflushed:,} lost unflushed, {result.torn:,} torn"
    )
    if result.corrupt:
        line += f", {result.corrupt:,} corrupt"
    if result.fsck is not None:
        line += f"; fsck: {result.fsck.state}"
    return line


def _gone_reason(back: Return, number: int, timeout_s: float) -> str:
    if back.state == VANISHED:
        return f"the device did not come back within {timeout_s:g} s after cut {number}"
    return f"the device came back with another capacity after cut {number}"


def _stop_reason(error: BaseException) -> str:
    """Why the run stopped, as the result's `stopped` says it ("stopped  by SIGTERM")."""
    name = signal_of(error)
    return f"by {name}" if name else str(error) or type(error).__name__


def utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
