"""One capacity probe from start to end: refuse what must not be written, claim the device,
back up, search, restore and verify, whatever stops it in between (signals wait for the
restore, `signals_held`; a SIGKILL leaves the backup file for `--restore`).

    plan = plan_capacity(CapacityRequest("/dev/sdb"))     # refusals, before a confirmation
    result = run_capacity(plan, progress=...)              # CapacityResult
    node, outcome = restore_capacity(RestoreRequest(backup_file))   # after a killed probe
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from flashmark import __version__
from flashmark.capacity.backup import (
    Journal,
    RestoreOutcome,
    create_backup_file,
    read_backup,
    restore_ours,
)
from flashmark.capacity.result import (
    BackupSummary,
    CapacityResult,
    Evidence,
    anomalies_of,
    layout_dict,
)
from flashmark.capacity.search import BLOCK_BYTES, Findings, Progress, find_capacity
from flashmark.errors import (
    DeviceFailed,
    EnvironmentProblem,
    FlashmarkError,
    Interrupted,
    TargetError,
    UsageError,
    add_outcome,
)
from flashmark.probe.target import probe_target
from flashmark.system.block_device import BlockDevice, open_direct
from flashmark.system.device_identity import find_by_identity, identity_of_node
from flashmark.system.device_safety import check_writable, claim_for_writing
from flashmark.system.device_stack import device_stack, kernel_name_of_node
from flashmark.system.paths import stat_target
from flashmark.system.pending_backups import backup_folder, forget, refuse_if_pending, register
from flashmark.system.signals import signals_held
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import held_path
from flashmark.units import utc_text


def _opened(node: str) -> AbstractContextManager[BlockDevice]:
    return open_direct(node, write=True, needs_root="writing a device")


@dataclass(frozen=True)
class CapacityRequest:
    """What `flashmark capacity` is asked: the device, whether to go without a backup, and
    where the backup file goes (None: the default folder)."""

    device: str
    destructive: bool = False
    backup_folder: Path | None = None


@dataclass(frozen=True)
class CapacityPlan:
    """A device that may be probed: its node, its card's CID (so that the passport recognises
    the card again; None if not a card), and the OS roots it was checked with."""

    request: CapacityRequest
    node: str
    card_cid: str | None
    roots: SystemRoots


@dataclass(frozen=True)
class RestoreRequest:
    """`flashmark capacity --restore FILE [DEVICE]`: a killed probe's backup to put back."""

    backup_file: Path
    device: str | None = None


def plan_capacity(request: CapacityRequest, roots: SystemRoots | None = None) -> CapacityPlan:
    """Every refusal, before anything is written (and before a confirmation is asked): not a
    block device (a folder: one line pointing to `flashmark surface`), in use or held."""
    roots = roots or SystemRoots.from_environment()
    node, _ = check_block_device(request.device)
    check_writable(node, roots)
    return CapacityPlan(request, node, _card_cid(node, roots), roots)


def _card_cid(node: str, roots: SystemRoots) -> str | None:
    """The card's CID; None if not a card, or when the probe cannot tell."""
    try:
        report = probe_target(node, roots)
    except (FlashmarkError, OSError):
        return None
    for device in report.devices:
        if device.card and device.card.cid:
            return device.card.cid.raw
    return None


def check_block_device(given: str) -> tuple[str, str]:
    """(path, major:minor) of a block device; TargetError for anything else."""
    path, status = stat_target(given, "device")
    if stat.S_ISDIR(status.st_mode) or stat.S_ISREG(status.st_mode):
        what = "a folder" if stat.S_ISDIR(status.st_mode) else "a file"
        raise TargetError(
            f"{given} is {what}: the capacity probe needs raw access to a block device "
            f"(e.g. /dev/sdb); `flashmark surface {given}` verifies a folder's free space instead"
        )
    if not stat.S_ISBLK(status.st_mode):
        raise TargetError(f"{given}: not a block device")
    return str(path), f"{os.major(status.st_rdev)}:{os.minor(status.st_rdev)}"


def run_capacity(
    plan: CapacityPlan,
    *,
    progress: Progress | None = None,
    on_backup_file: Callable[[Path], None] | None = None,
) -> CapacityResult:
    """The probe as planned; `on_backup_file` is told where the backup is before anything is
    written. Raises TargetError kinds for what cannot be probed, UnsafeDevice for what is in
    use (or holds a killed probe's backup: the `--restore` line), DeviceFailed when the device
    fails, Interrupted (after the restore) when a signal stops it."""
    roots, destructive = plan.roots, plan.request.destructive
    node, majmin = check_block_device(plan.node)
    folder = plan.request.backup_folder or backup_folder()
    # a killed probe's backup (in the default folder, found through its pointers, or in
    # `folder`) that belongs to the device or its stack
    devices = device_stack(kernel_name_of_node(node, roots), roots)
    refuse_if_pending(node, devices, roots, extra_folders=(folder,))
    nonce = os.urandom(16)
    started = time.time()
    path: Path | None = None
    with claim_for_writing(node, roots), held_path(node):  # held: flashmark.system.target_lock
        try:
            with _opened(node) as device:
                if not destructive:
                    header = {
                        "device": node,
                        "majmin": majmin,
                        # what --restore and the other writing commands recognise it by
                        # (flashmark.system.device_identity), whatever its path is then
                        "identity": identity_of_node(node, roots),
                        "size_bytes": device.size_bytes,
                        "nonce": nonce.hex(),
                        "created_at": utc_text(started),
                        "pid": os.getpid(),
                        "flashmark_version": __version__,
                    }
                    path = _new_backup_file(folder, node, header)
                try:
                    journal = Journal(device, path, backup=not destructive)
                    if path is not None and on_backup_file is not None:
                        on_backup_file(path)
                except BaseException:
                    if path is not None:  # nothing written yet: the file holds no backup
                        path.unlink(missing_ok=True)
                    raise
                findings, outcome = _search_and_restore(journal, nonce, progress)
        finally:
            if path is not None and not path.exists():  # put back: nothing is pending
                forget(path)
    finished = time.time()
    anomalies, total = anomalies_of(findings)
    return CapacityResult(
        device=node,
        claimed_bytes=device.size_bytes,
        real_bytes=findings.real_bytes,
        verdict=findings.verdict,
        behaviour=findings.behaviour,
        granularity_bytes=findings.granularity_bytes,
        block_bytes=BLOCK_BYTES,
        destructive=destructive,
        started_at=utc_text(started),
        finished_at=utc_text(finished),
        duration_s=round(finished - started, 3),
        evidence=Evidence(
            layout=layout_dict(findings),
            blocks_written=findings.blocks_written,
            blocks_read=findings.blocks_read,
            anomalies_total=total,
            anomalies=anomalies,
            steps=findings.steps,
        ),
        backup=None
        if outcome is None
        else BackupSummary(
            outcome.ranges, outcome.bytes_restored, True, outcome.differing_after_aliasing
        ),
        card_cid=plan.card_cid,
        notes=findings.notes + _restore_notes(outcome),
        flashmark_version=__version__,
    )


def _new_backup_file(folder: Path, node: str, header: Mapping[str, object]) -> Path:
    """The backup file, and where the default folder can find it (a pointer, when it is
    elsewhere): a probe killed later must leave a backup that every writing command sees.
    EnvironmentProblem (one line, nothing written) when either cannot be written."""
    try:
        path = create_backup_file(folder, Path(node).name, header)
    except OSError as error:
        raise EnvironmentProblem(
            f"cannot write the backup of the blocks the probe overwrites in {folder}: "
            f"{error.strerror or error}; give --backup-dir DIR (a writable folder on another "
            "device), or --destructive to probe without a backup"
        ) from None
    try:
        register(path)
    except (OSError, EnvironmentProblem) as error:
        path.unlink(missing_ok=True)
        reason = error.strerror if isinstance(error, OSError) else str(error)
        raise EnvironmentProblem(
            f"cannot note the backup {path} in {backup_folder()}: {reason}; a killed probe's "
            "backup must be found there (so that no command writes over its blocks before "
            "`flashmark capacity --restore`): make it writable, or set XDG_STATE_HOME"
        ) from None
    return path


def _search_and_restore(
    journal: Journal, nonce: bytes, progress: Progress | None
) -> tuple[Findings, RestoreOutcome | None]:
    try:
        findings = find_capacity(journal, nonce, progress)
    except BaseException as stop:
        if not journal.backing_up:
            journal.close()
            raise
        try:
            outcome = _restore(journal)
        except DeviceFailed as failed:
            raise DeviceFailed(f"{stop}; then restoring the device failed: {failed}") from stop
        add_outcome(
            stop,
            f"the {outcome.ranges} range(s) the probe had overwritten "
            f"({outcome.bytes_restored} bytes) were restored and verified",
        )
        raise
    if not journal.backing_up:
        journal.close()
        return findings, None
    if progress is not None:
        progress("restoring", 0.0)
    return findings, _restore(journal)


def _restore(journal: Journal) -> RestoreOutcome:
    """The restore, which a signal must not cut in two: one arriving meanwhile is raised once
    it is done, saying so."""
    try:
        with signals_held():
            return journal.restore()
    except Interrupted as stop:
        add_outcome(stop, "the ranges the probe had overwritten were restored and verified first")
        raise


def _restore_notes(outcome: RestoreOutcome | None) -> tuple[str, ...]:
    if outcome is None or not outcome.differing_after_aliasing:
        return ()
    return (
        f"{outcome.differing_after_aliasing} restored range(s) read back differently: they "
        "were backed up through addresses that share storage with ranges restored later, "
        "which is expected on a device that wraps",
    )


def restore_capacity(
    request: RestoreRequest, roots: SystemRoots | None = None
) -> tuple[str, RestoreOutcome]:
    """Put a killed probe's backup back on its device, only where the device still holds
    the probe's blocks (backup.restore_ours), verify, and remove the file; the device it was
    put back on, and what was put back.

    The device is the one the backup names by identity (flashmark.system.device_identity), wherever
    it is now; `given` must be that device. A backup without an identity (a device that says
    nothing about itself) must find the same device number and size."""
    backup, given = request.backup_file, request.device
    roots = roots or SystemRoots.from_environment()
    header, records = read_backup(backup)
    try:
        nonce = bytes.fromhex(str(header["nonce"]))
    except (KeyError, ValueError):
        raise UsageError(f"{backup}: the backup's header is damaged (no nonce)") from None
    node = _backup_device(backup, header, given, roots)
    node, majmin = check_block_device(node)
    if not header.get("identity") and header.get("majmin") != majmin:
        raise UsageError(
            f"{backup} was taken from device {header.get('majmin')} ({header.get('device')}), "
            f"not {node} ({majmin}): give the right device"
        )
    with claim_for_writing(node, roots, restoring=backup), _opened(node) as device:
        if device.size_bytes != header.get("size_bytes"):
            raise UsageError(
                f"{node} holds {device.size_bytes} bytes, the backup's device held "
                f"{header.get('size_bytes')}: not the same device"
            )
        try:
            with signals_held():
                outcome = restore_ours(device, records, nonce, str(backup))
        except Interrupted as stop:
            add_outcome(stop, f"the backup was put back first; {backup} is kept")
            raise
    backup.unlink()
    forget(backup)
    return node, outcome


def _backup_device(
    backup: Path, header: dict[str, object], given: str | None, roots: SystemRoots
) -> str:
    """The node of the device a backup belongs to (see restore_capacity)."""
    recorded = header.get("identity")
    named = str(header.get("device") or "")
    if not recorded:
        if not (given or named):
            raise UsageError(
                f"{backup} does not name its device: give it (`--restore FILE DEVICE`)"
            )
        return given or named
    if given is not None:
        now = identity_of_node(given, roots)
        if now != recorded:
            raise UsageError(
                f"{given} is not the device {backup} was taken from (its identity is "
                f"{now or 'unknown'}, the backup's {recorded}): give that device"
            )
        return given
    if named and identity_of_node(named, roots) == recorded:
        return named
    found = find_by_identity(str(recorded), roots)
    if found is None:
        raise UsageError(
            f"the device {backup} was taken from ({named}, identity {recorded}) is not "
            "attached: attach it, then run the same command again"
        )
    return f"/dev/{found.replace('!', '/')}"
