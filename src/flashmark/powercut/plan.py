"""What the power-cut test will write to, checked before anything is written.

    plan = plan_powercut(request, roots)    # every refusal happens here, before a confirmation

The request is the test's typed settings; the plan is what the device is (its node, identity,
size and the kernel's view of its cache). Refused: settings that make no sense, anything but a
block device, a device whose stack is in use (flashmark.system.device_safety), a flush record that
would live on the device under test, a filesystem mode this machine cannot run.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from flashmark.errors import EnvironmentProblem, TargetError, UsageError
from flashmark.powercut.cycle import CutPlan
from flashmark.powercut.filesystem import FsMedium, filesystem_missing, filesystem_space
from flashmark.powercut.journal import JournalLayout
from flashmark.powercut.media import Medium, RawMedium
from flashmark.powercut.result import RAW
from flashmark.system.block_device import QueueFacts, queue_facts
from flashmark.system.device_identity import device_identity, size_of
from flashmark.system.device_safety import check_writable
from flashmark.system.device_stack import device_stack, kernel_name_of_node, name_of_majmin
from flashmark.system.disk_space import SpacePlan
from flashmark.system.places import state_home
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import refuse_if_busy

DEFAULT_AREA_BYTES = 1 << 30  # the raw journal's area: the device's first GiB (or all of it)
FILESYSTEMS = ("ext4", "f2fs")


@dataclass(frozen=True)
class PowercutRequest:
    device: str  # the block device as given
    cycles: int
    off_command: str
    on_command: str
    mode: str = RAW  # RAW, or a filesystem of FILESYSTEMS
    record_bytes: int = 4096
    flush_every: int = 8
    area_bytes: int | None = None  # RAW: the journal's area (default DEFAULT_AREA_BYTES)
    cut_min_s: float = 1.0
    cut_max_s: float = 4.0
    come_back_timeout_s: float = 60.0
    command_timeout_s: float = 30.0
    off_timeout_s: float = 10.0  # after the off command, the device must stop answering
    record_file: Path | None = None  # where the flush points go (default: state_folder())
    seed: int | None = None  # the cut moments (tests)

    def cut_plan(
        self, nonce: bytes, *, flush_every: int, fua: bool, off_timeout_s: float
    ) -> CutPlan:
        """How each cycle cuts the power, as asked: the caller gives what the run it continues
        or its mode decides (the run's nonce and flushes, FUA, how long the off command takes)."""
        return CutPlan(
            nonce=nonce,
            flush_every=flush_every,
            fua=fua,
            cut_min_s=self.cut_min_s,
            cut_max_s=self.cut_max_s,
            off_command=self.off_command,
            command_timeout_s=self.command_timeout_s,
            off_timeout_s=off_timeout_s,
        )


@dataclass(frozen=True)
class PowercutPlan:
    """What the device is, checked before anything is written (and before a confirmation)."""

    node: str
    name: str
    identity: str | None
    size_bytes: int
    facts: QueueFacts
    summary: str | None  # the probed device in one line
    # The filesystem mode: what one cycle writes on the new filesystem at most, and into a
    # sparse image below the device (flashmark.system.disk_space); None in the raw mode.
    space: SpacePlan | None = None


def state_folder() -> Path:
    """$XDG_STATE_HOME/flashmark/powercut (places.state_home)."""
    return state_home(needed_for="power-cut records") / "flashmark" / "powercut"


def plan_powercut(request: PowercutRequest, roots: SystemRoots | None = None) -> PowercutPlan:
    """Every refusal, before anything is written: bad settings, not a block device, a device
    in use or measured by another flashmark, a record file on the device itself."""
    roots = roots or SystemRoots.from_environment()
    _check_settings(request)
    try:
        status = os.stat(request.device)
    except OSError as error:
        raise TargetError(f"{request.device}: {error.strerror}") from None
    if not stat.S_ISBLK(status.st_mode):
        raise TargetError(
            f"{request.device} is not a block device: the power-cut test writes a whole device "
            "(or a partition); give its node, e.g. /dev/sdb"
        )
    if request.mode != RAW:
        missing = filesystem_missing(request.mode, roots)
        if missing is not None:
            raise EnvironmentProblem(missing)
    node = os.path.realpath(request.device)
    name = kernel_name_of_node(node, roots)
    check_writable(node, roots)
    refuse_if_busy(node)  # held while writing (run.py): one flashmark per device
    size = size_of(name, roots)
    if size < request.record_bytes * request.flush_every * 4:
        raise TargetError(f"{node} holds {size} bytes: too small for a journal")
    record_file = request.record_file or state_folder()
    _refuse_record_on_device(record_file, name, roots)
    space = None
    if request.mode != RAW:
        space = filesystem_space(request.mode, node, size, request.record_bytes, roots)
        space.check("free some space there, or give the test a device of its own")
    return PowercutPlan(
        node=node,
        name=name,
        identity=device_identity(name, roots),
        size_bytes=size,
        facts=queue_facts(name, roots),
        summary=_probe_summary(node, roots),
        space=space,
    )


def medium_for(request: PowercutRequest, size_bytes: int, roots: SystemRoots) -> Medium:
    """Where the records go: the raw journal in the device's first GiB (or all of it), or
    files on a fresh filesystem."""
    if request.mode != RAW:
        return FsMedium(request.mode, request.record_bytes, size_bytes, roots)
    area = min(request.area_bytes or DEFAULT_AREA_BYTES, size_bytes)
    area -= area % request.record_bytes
    return RawMedium(JournalLayout(0, area, request.record_bytes), roots)


def _check_settings(request: PowercutRequest) -> None:
    if request.cycles < 1:
        raise UsageError("--cycles must be at least 1")
    if request.mode != RAW and request.mode not in FILESYSTEMS:
        raise UsageError(f"--filesystem must be one of {', '.join(FILESYSTEMS)}")
    if request.record_bytes % 4096 or not 4096 <= request.record_bytes <= 1 << 20:
        raise UsageError("the record size must be a multiple of 4 KiB, at most 1 MiB")
    if request.flush_every < 1:
        raise UsageError("--flush-every must be at least 1")
    if not 0 < request.cut_min_s <= request.cut_max_s:
        raise UsageError("--cut-after MIN-MAX needs 0 < MIN <= MAX seconds")
    for name in ("come_back_timeout_s", "command_timeout_s", "off_timeout_s"):
        if getattr(request, name) <= 0:
            raise UsageError(f"{name.removesuffix('_s').replace('_', ' ')} must be positive")
    if not request.off_command.strip() or not request.on_command.strip():
        raise UsageError("--off-command and --on-command must not be empty")


def _refuse_record_on_device(folder: Path, name: str, roots: SystemRoots) -> None:
    """The record of acknowledgements must not live on the device whose power is cut."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        device = os.stat(probe).st_dev
    except OSError:
        return
    holder = name_of_majmin(f"{os.major(device)}:{os.minor(device)}", roots)
    if holder is None:
        return
    if any(member.name == holder for member in device_stack(name, roots).devices()):
        raise UsageError(
            f"the flush record would be kept in {folder}, on the device under test ({holder}): "
            "give --record-dir on another device, or --record-to HOST"
        )


def _probe_summary(node: str, roots: SystemRoots) -> str | None:
    """The device in one line (flashmark.probe); None when the probe cannot tell."""
    from flashmark.surface.run import identify  # the probe is loaded only to plan a test

    return identify(node, roots)[0]
