"""When the power cut takes the host down too: one cycle per boot, checked after the reboot.

The flush points go to a recorder on another machine, through ssh (remote.py), as they happen,
each confirmed before the writer goes on; `powercut DEVICE --host-down` writes and runs the off
command, and `powercut verify DEVICE` after the reboot checks the last cycle. The next
`--host-down` run continues the device's run. What the writer did after its last confirmed
flush point is unknown, so the check covers one flush group past it. docs/powercut.md.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from flashmark.codec import decode, encode
from flashmark.errors import DeviceFailed, FlashmarkError, UsageError
from flashmark.powercut.check import Return, check_cycle, records_to_check, unchecked_cycle
from flashmark.powercut.cycle import PowerNotCut, cut_while_writing
from flashmark.powercut.plan import PowercutPlan, PowercutRequest, medium_for, plan_powercut
from flashmark.powercut.recorder import (
    CutMark,
    CycleLog,
    FileRecorder,
    FlushRecorder,
    RunHeader,
    RunLog,
    cut_entry,
    read_entries,
    read_run,
    run_entry,
    verified_entry,
    void_entry,
)
from flashmark.powercut.remote import RemoteSpec, fetch_run
from flashmark.powercut.result import BACK, UNREADABLE, CycleResult, PowercutResult
from flashmark.powercut.run import (
    PowercutEvent,
    Progress,
    build_result,
    checked_line,
    run_header,
    utc_now,
)
from flashmark.system.block_device import queue_facts
from flashmark.system.device_identity import device_identity, size_of
from flashmark.system.device_stack import kernel_name_of_node
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import device_held

HOST_DOWN_TIMEOUT_S = 60.0  # after the off command, this host should be gone by then


class HostStayedUp(FlashmarkError):
    """The off command of a --host-down cycle did not take this host down."""


def run_host_down_cycle(
    request: PowercutRequest,
    plan: PowercutPlan,
    remote: RemoteSpec,
    *,
    roots: SystemRoots | None = None,
    progress: Progress = lambda event: None,
    new_run: bool = False,
    host_down_timeout_s: float = HOST_DOWN_TIMEOUT_S,
) -> None:
    """Write one cycle and cut the power, which takes this host down: it does not return.
    HostStayedUp when the host is still up `host_down_timeout_s` after the off command."""
    roots = roots or SystemRoots.from_environment()
    identity = plan.identity
    if identity is None:
        raise UsageError(
            f"{plan.node} names no identity (CID, WWID, serial): after a reboot it could not "
            "be told from another device, so --host-down cannot be used with it"
        )
    entries = fetch_run(remote, identity)
    log = None if new_run or not entries else read_run(entries)
    if log is not None and _done(log) >= log.header.cycles:
        log = None  # that run has all its cycles: start another
    if log is not None and log.last is not None and not _settled(log.last):
        raise UsageError(
            f"cycle {log.last.number} of run {log.header.run} has not been checked: run "
            f"`flashmark powercut verify {plan.node} --record-to {remote.where}` first"
        )
    settings = request if log is None else _request_of(log.header, request.device, None)
    medium = medium_for(settings, plan.size_bytes, roots)
    if log is None:
        nonce = os.urandom(16)
        header = run_header(request, plan, nonce, medium, utc_now())
        recorder = remote.recorder(nonce.hex())
        recorder.append(run_entry(header))
        number, first_seq = 1, 0
        if medium.mode != "raw":
            with device_held(plan.node):  # one flashmark per device (system.target_lock)
                medium.prepare(plan.node)
    else:
        header = log.header
        nonce = bytes.fromhex(header.run)
        recorder = remote.recorder(header.run, _next_entry(entries))
        last = log.last
        number = 1 if last is None else last.number + 1
        first_seq = (
            0
            if last is None
            else last.first_seq + records_to_check(last, header.flush_every, medium.capacity)
        )
    say = _sayer(progress, number, header.cycles)
    say(
        f"run {header.run}, writing from record {first_seq:,}; the off command takes this host down"
    )

    def record_cut(cut_at_s: float) -> None:
        recorder.append(cut_entry(number, CutMark(None, None, cut_at_s, None)))

    plan_cut = request.cut_plan(
        nonce, flush_every=header.flush_every, fua=header.fua, off_timeout_s=host_down_timeout_s
    )
    try:
        # after_cut=False: `verify` checked (and repaired) the filesystem after the last cut
        with device_held(plan.node), medium.session(plan.node, after_cut=False) as session:
            cut_while_writing(
                session.sink,
                recorder,
                plan_cut,
                number=number,
                first_seq=first_seq,
                rng=random.Random(request.seed),
                on_cut=record_cut,
            )
        # Still here: the device lost its power but this host did not.
        reason = "the device lost its power and this host kept running"
    except PowerNotCut as error:  # only a host still running can report it
        reason = str(error)
    with contextlib.suppress(FlashmarkError):
        recorder.append(void_entry(number, reason))
    recorder.close()
    raise HostStayedUp(
        f"{reason}: --host-down needs an off command that cuts this host's power too "
        "(without --host-down, --on-command brings the device back and the test goes on)"
    )


def verify_powercut(
    device: str,
    *,
    roots: SystemRoots | None = None,
    remote: RemoteSpec | None = None,
    record_file: Path | None = None,
    progress: Progress = lambda event: None,
) -> PowercutResult:
    """Check the last cycle of the device's run that is not checked yet, record its result,
    and return the run's result so far."""
    roots = roots or SystemRoots.from_environment()
    began = time.monotonic()
    if (remote is None) == (record_file is None):
        raise UsageError("verify reads the run from --record-to HOST or --record-file FILE")
    node = os.path.realpath(device)
    name = kernel_name_of_node(node, roots)
    identity = device_identity(name, roots)
    if remote is not None:
        if identity is None:
            raise UsageError(f"{node} names no identity: its run cannot be found at the recorder")
        entries = fetch_run(remote, identity)
        if not entries:
            raise UsageError(f"the recorder at {remote.where} has no run of {node} ({identity})")
    else:
        assert record_file is not None
        entries = read_entries(record_file)
    log = read_run(entries)
    header = log.header
    if header.identity is not None and identity is not None and identity != header.identity:
        raise UsageError(
            f"{node} is another device ({identity}) than the run's ({header.identity})"
        )
    request = _request_of(header, node, record_file)
    plan = plan_powercut(request, roots) if _pending(log) else _plan_without_checks(node, roots)
    medium = medium_for(request, plan.size_bytes, roots)
    notes: list[str] = []
    pending = _pending(log)
    checked: CycleResult | None = None
    if pending is None:
        notes.append("nothing new to check: every cycle of this run was checked already")
    else:
        count = records_to_check(pending, header.flush_every, medium.capacity)
        came_back = Return(BACK, node, None)
        try:
            with device_held(node), medium.session(node, after_cut=True) as session:
                checked = check_cycle(
                    session,
                    pending,
                    nonce=bytes.fromhex(header.run),
                    record_bytes=header.record_bytes,
                    count=count,
                    written=None
                    if pending.cut is None or pending.cut.acked_through is None
                    else pending.cut.acked_through - pending.first_seq + 1,
                    in_flight=0,
                    came_back=came_back,
                )
        except DeviceFailed as error:
            notes.append(f"cycle {pending.number}: {error}")
            unread = Return(UNREADABLE, node, None)
            checked = unchecked_cycle(
                pending, count=count, written=None, in_flight=0, came_back=unread
            )
        recorder = _recorder_for(header.run, entries, remote, record_file)
        try:
            recorder.append(verified_entry(pending.number, encode(checked)))
        finally:
            recorder.close()
        _sayer(progress, pending.number, header.cycles)(checked_line(checked))
    cycles = [_decoded(cycle.verified) for cycle in log.cycles if cycle.verified is not None]
    if checked is not None:
        cycles.append(checked)
    where = remote.where if remote is not None else str(record_file)
    if len(cycles) < header.cycles:
        notes.append(
            f"{len(cycles)} of the run's {header.cycles} cycles so far: the next "
            "`flashmark powercut --host-down` continues it"
        )
    return build_result(
        plan,
        header,
        cycles,
        recorder=where,
        duration_s=time.monotonic() - began,
        stopped=None,
        notes=notes,
    )


def _pending(log: RunLog) -> CycleLog | None:
    last = log.last
    return None if last is None or _settled(last) else last


def _settled(cycle: CycleLog) -> bool:
    return cycle.verified is not None or cycle.void is not None


def _done(log: RunLog) -> int:
    return sum(cycle.verified is not None for cycle in log.cycles)


def _next_entry(entries: Sequence[Mapping[str, Any]]) -> int:
    return max((int(entry.get("i", -1)) for entry in entries), default=-1) + 1


def _recorder_for(
    run: str,
    entries: Sequence[Mapping[str, Any]],
    remote: RemoteSpec | None,
    record_file: Path | None,
) -> FlushRecorder:
    if remote is not None:
        return remote.recorder(run, _next_entry(entries))
    assert record_file is not None
    return FileRecorder(record_file)


def _request_of(header: RunHeader, device: str, record_file: Path | None) -> PowercutRequest:
    """The run's own settings (a continued run keeps those it started with)."""
    return PowercutRequest(
        device=device,
        cycles=header.cycles,
        off_command=header.off_command or "-",
        on_command=header.on_command or "-",
        mode=header.mode,
        record_bytes=header.record_bytes,
        flush_every=header.flush_every,
        area_bytes=header.area_bytes or None,
        cut_min_s=header.cut_min_s,
        cut_max_s=header.cut_max_s,
        come_back_timeout_s=header.come_back_timeout_s,
        record_file=None if record_file is None else record_file.parent,
    )


def _plan_without_checks(node: str, roots: SystemRoots) -> PowercutPlan:
    """The device as it is, for a result when nothing is read or written."""
    name = kernel_name_of_node(node, roots)
    return PowercutPlan(
        node=node,
        name=name,
        identity=device_identity(name, roots),
        size_bytes=size_of(name, roots),
        facts=queue_facts(name, roots),
        summary=None,
    )


def _decoded(document: Mapping[str, Any]) -> CycleResult:
    result: CycleResult = decode(CycleResult, dict(document))
    return result


def _sayer(progress: Progress, number: int, cycles: int) -> Callable[[str], None]:
    return lambda text: progress(PowercutEvent(number, cycles, text))
