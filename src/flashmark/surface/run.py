"""A surface scan as library calls: what TARGET is, then the scan, safely.

    job = prepare_surface(SurfaceRequest("/dev/sdb", destructive=True), history=history)
    outcome = run_surface(job, history=history, progress=...)   # the command's two steps

`prepare_surface` finds the scan a request resumes and plans (refusals happen here);
`run_surface` keeps a device scan in the history as it goes. Writes happen inside
device_safety.claim_for_writing. A stopped scan raises ScanStopped with what was measured.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import (
    DirectIONotSupported,
    ExitStatus,
    FlashmarkError,
    Interrupted,
    StoppedEarly,
    TargetError,
    TargetPermissionDenied,
    UsageError,
)
from flashmark.history.store import History
from flashmark.probe.summary import measured_summary
from flashmark.probe.target import probe_target
from flashmark.surface.medium import (
    FolderMedium,
    Medium,
    folder_files,
    folder_surface_space,
    open_block_device,
)
from flashmark.surface.pattern import new_nonce
from flashmark.surface.result import SurfaceResult, SurfaceSettings, SurfaceTarget
from flashmark.surface.resume import HistoryCheckpoints, interrupted_scan
from flashmark.surface.scan import Checkpoint, Progress, SurfaceScan
from flashmark.surface.worker import io_process
from flashmark.system.block_device import BlockDevice
from flashmark.system.device_safety import check_writable, claim_for_writing
from flashmark.system.disk_space import SpacePlan, SpaceWatch
from flashmark.system.mounts import mount_of, read_mounts, refuse_read_only
from flashmark.system.paths import stat_target
from flashmark.system.signals import signal_of
from flashmark.system.sysroot import SystemRoots
from flashmark.system.system_disk import fill_refusal
from flashmark.system.target_lock import refuse_if_busy
from flashmark.system.watchdog import DEFAULT_FLOOR_S, Watchdog
from flashmark.units import KiB, MiB, format_size

DEVICE = "device"
FOLDER = "folder"
MIN_BLOCK = 4 * KiB
MAX_BLOCK = 64 * MiB
DEFAULT_BLOCK = 1 * MiB
# At least 256 slices; the most keeps a document of a 1 TB disk under ~20 MB.
MIN_SLICES, MAX_SLICES = 256, 65536


@dataclass(frozen=True)
class SurfaceRequest:
    """What `flashmark surface` is asked, as data; a request size out of bounds is refused
    when the request is made."""

    target: str  # a block device, or a folder (or a file's folder)
    destructive: bool = False  # a device: write it whole first, then verify
    block_bytes: int = DEFAULT_BLOCK
    slices: int = MIN_SLICES
    size_limit: int | None = None  # a folder: write at most this much
    resume: bool = False  # continue the target's interrupted scan kept in the history
    stall_timeout_s: float = DEFAULT_FLOOR_S  # the watchdog's floor (flashmark.system.watchdog)

    def __post_init__(self) -> None:
        block = self.block_bytes
        if not MIN_BLOCK <= block <= MAX_BLOCK or block % MIN_BLOCK:
            raise UsageError(
                f"--block-size {format_size(block)} must be 4 KiB to 64 MiB, a multiple of 4 KiB"
            )


@dataclass(frozen=True)
class SurfacePlan:
    given: str  # the device node or the folder, absolute (the history's target)
    kind: str  # DEVICE or FOLDER
    write: bool  # a device: --destructive; a folder: always
    size_bytes: int | None  # a folder: what will be written; a device: read when opened
    filesystem: str | None = None
    device: str | None = None  # the probed device in one line (flashmark.probe)
    identity: str | None = None  # its CID, else its serial number
    # A folder: its (st_dev, st_ino) when checked; the folder opened to scan must be this one.
    folder_identity: tuple[int, int] | None = None
    space: SpacePlan | None = None  # a folder: what is written where (system/disk_space.py)
    # A folder scan that fills the filesystem: why that needs the user's explicit consent
    # (the system's own filesystem or disk, a non-removable disk: system/system_disk.py).
    fill_refusal: str | None = None


class ScanStopped(StoppedEarly[SurfaceResult]):
    """The scan stopped before the end; `partial` is what it measured, `cause` why."""

    exit_status = ExitStatus.INTERRUPTED


@dataclass(frozen=True)
class SurfaceJob:
    """A scan about to run: its plan (whether it writes), the interrupted scan it continues
    (--resume), and the OS roots it was planned with."""

    request: SurfaceRequest
    plan: SurfacePlan
    previous: SurfaceResult | None
    roots: SystemRoots


@dataclass(frozen=True)
class SurfaceOutcome:
    """What a scan gave: its result (partial when `stopped` says why), and the history entry
    it was kept in as it ran (`replacing`), which the result takes the place of."""

    result: SurfaceResult
    replacing: int | None = None
    stopped: ScanStopped | None = None


def prepare_surface(
    request: SurfaceRequest, *, history: History | None = None, roots: SystemRoots | None = None
) -> SurfaceJob:
    """The interrupted scan a --resume continues (from `history`), and the plan: every refusal
    is raised here, before anything is measured (and before a confirmation is asked)."""
    roots = roots or SystemRoots.from_environment()
    previous: SurfaceResult | None = None
    write = request.destructive
    if request.resume:
        if history is None:
            raise UsageError("--resume reads the interrupted scan from the history: drop --no-save")
        previous = interrupted_scan(history, request.target)
        write = previous.settings.write
        if previous.state.phase == "write" and not request.destructive:
            raise UsageError(
                f"scan {previous.id} of {previous.target.path} stopped while writing: add "
                "--destructive to continue writing it (and confirm)"
            )
    plan = plan_surface(request, write=write, roots=roots)
    if request.resume and plan.kind == FOLDER:
        raise UsageError(
            "--resume is for block devices: a folder scan's files are removed when it stops, "
            "so there is nothing to continue; run it again"
        )
    return SurfaceJob(request, plan, previous, roots)


def run_surface(
    job: SurfaceJob,
    *,
    history: History | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] = lambda message: None,
) -> SurfaceOutcome:
    """Scan as prepared. A device scan is kept in `history` as it goes (a folder's files are
    removed when it stops, so there is nothing to resume); a checkpoint that cannot be kept is
    said once through `warn`. A scan that stops returns what it measured, with why."""
    checkpoints = None
    if history is not None and job.plan.kind == DEVICE:
        checkpoints = HistoryCheckpoints(history, warn)
    stopped: ScanStopped | None = None
    try:
        result = scan_surface(job, progress=progress, checkpoint=checkpoints)
    except ScanStopped as stop:
        stopped, result = stop, stop.partial
    return SurfaceOutcome(result, checkpoints.id if checkpoints else None, stopped)


def plan_surface(request: SurfaceRequest, *, write: bool, roots: SystemRoots) -> SurfacePlan:
    """What TARGET is and whether it may be scanned as asked; every refusal raised here,
    before anything is measured (and before a confirmation is asked)."""
    given, size_limit = request.target, request.size_limit
    path, status = stat_target(given, "device or folder")
    if stat.S_ISBLK(status.st_mode):
        node = os.path.realpath(path)
        with contextlib.suppress(PermissionError):  # said when the scan opens it
            refuse_if_busy(node)
        if size_limit is not None:
            raise UsageError("--size is for folders; a device is scanned whole")
        if write:
            check_writable(node, roots)  # refused now, held by claim_for_writing during the scan
        device, identity = identify(node, roots)
        return SurfacePlan(
            given=node,
            kind=DEVICE,
            write=write,
            size_bytes=None,
            device=device,
            identity=identity,
        )
    if write:
        raise UsageError(
            "--destructive is for block devices; a folder is scanned with files of its own "
            "that are always removed"
        )
    if stat.S_ISREG(status.st_mode):
        path = path.parent
    elif not stat.S_ISDIR(status.st_mode):
        raise TargetError(f"{given}: not a block device or a folder")
    folder = path.resolve()
    mount = mount_of(str(folder), read_mounts(roots))
    refuse_read_only(folder, mount)
    if mount is not None and mount.in_memory:
        raise DirectIONotSupported(
            f"{folder} is on {mount.fstype}, which lives in RAM: its surface is memory, not a "
            "device. Pick a folder on the device to scan"
        )
    if not os.access(folder, os.W_OK):
        raise TargetPermissionDenied(
            f"cannot write in {folder}: permission denied (pick a folder you can write, or sudo)"
        )
    folder_status = folder.stat()
    refuse_if_busy(str(folder))  # before the free space: a run there holds some of it
    space, fills = folder_surface_space(folder, size_limit, request.block_bytes, roots)
    device, identity = identify(str(folder), roots)
    return SurfacePlan(
        given=str(folder),
        kind=FOLDER,
        write=True,
        size_bytes=space.write_bytes,
        space=space,
        fill_refusal=fill_refusal(space.filesystem, roots) if fills else None,
        filesystem=mount.fstype if mount is not None else None,
        device=device,
        identity=identity,
        folder_identity=(folder_status.st_dev, folder_status.st_ino),
    )


def identify(path: str, roots: SystemRoots) -> tuple[str | None, str | None]:
    """The device under `path` in one line and its CID (SD/eMMC), else its serial number, so
    that a saved scan says which card it was; (None, None) when the probe cannot tell. Reads
    sysfs only (no activity sample): a probe that fails never stops a scan."""
    try:
        report = probe_target(path, roots, sample_s=0.0)
    except Interrupted:
        raise
    except (FlashmarkError, OSError):
        return None, None
    device = report.device
    if device is None:
        return measured_summary(report), None
    cid = device.card.cid.raw if device.card is not None and device.card.cid is not None else None
    return measured_summary(report), cid or device.serial


@contextlib.contextmanager
def _medium(
    plan: SurfacePlan, roots: SystemRoots, block_bytes: int, watchdog: Watchdog
) -> Iterator[Medium]:
    """The device or the folder's files, their requests made by an I/O process of their own,
    each within the watchdog's bound (surface/worker.py)."""
    with contextlib.ExitStack() as stack:
        local: BlockDevice | FolderMedium
        if plan.kind == FOLDER:
            assert plan.size_bytes is not None
            local = stack.enter_context(
                folder_files(Path(plan.given), plan.size_bytes, block_bytes, plan.folder_identity)
            )
        else:
            if plan.write:
                # Held from before the first write until after the last read of the
                # verification: nothing can mount or build on the device while its content
                # is being checked.
                stack.enter_context(claim_for_writing(plan.given, roots))
            local = stack.enter_context(open_block_device(plan.given, write=plan.write))
        yield stack.enter_context(io_process(local, block_bytes, watchdog, plan.given))


def scan_surface(
    job: SurfaceJob, *, progress: Progress | None = None, checkpoint: Checkpoint | None = None
) -> SurfaceResult:
    """Scan as prepared (or continue the interrupted scan); ScanStopped with the partial
    result when the scan is interrupted or the device fails, or stops answering (DeviceHung:
    no request done within the watchdog's bound, flashmark.system.watchdog). `checkpoint` is
    handed the scan as it stands now and then (always at a durable point), to keep for a
    resume after a SIGKILL or power cut."""
    plan, previous = job.plan, job.previous
    settings = SurfaceSettings(
        block_bytes=job.request.block_bytes,
        slices=job.request.slices,
        write=plan.write,
        verify=plan.write,
    )
    if previous is not None:
        settings = previous.settings
    watchdog = Watchdog(job.request.stall_timeout_s)
    with _medium(plan, job.roots, settings.block_bytes, watchdog) as medium:
        if settings.block_bytes % medium.sector_bytes:
            raise UsageError(
                f"--block-size must be a multiple of {medium.sector_bytes} bytes, the logical "
                f"block of {plan.given}"
            )
        if previous is not None and previous.target.size_bytes != medium.size_bytes:
            raise UsageError(
                f"cannot resume: {plan.given} now holds {medium.size_bytes} bytes, the "
                f"interrupted scan covered {previous.target.size_bytes}"
            )
        before = None if previous is None else previous.target.identity
        if before is not None and plan.identity is not None and before != plan.identity:
            raise UsageError(
                f"cannot resume: {plan.given} is now another device (identity {plan.identity}, "
                f"the interrupted scan's was {before}); scan it afresh without --resume"
            )
        target = SurfaceTarget(
            given=plan.given,
            path=plan.given,
            kind=plan.kind,
            size_bytes=medium.size_bytes,
            sector_bytes=medium.sector_bytes,
            filesystem=plan.filesystem,
            device=plan.device,
            identity=plan.identity,
        )
        scan = SurfaceScan(
            medium,
            target,
            settings,
            nonce=previous.state.nonce if previous is not None else new_nonce(),
            previous=previous,
            progress=progress,
            checkpoint=checkpoint,
            watchdog=watchdog,
            space_watch=SpaceWatch(plan.space).check if plan.space is not None else None,
        )
        try:
            scan.run()
        except (Exception, KeyboardInterrupt) as error:  # everything but SystemExit: keep it
            scan.stopped(_reason(error))
            raise ScanStopped(scan.snapshot(), error) from error
        return scan.snapshot()


def _reason(error: BaseException) -> str:
    name = signal_of(error)
    return f"stopped by {name}" if name else f"stopped: {error}"
