"""What a power-cut test found, and its JSON document (`flashmark.powercut/1`, history in
docs/powercut.md, "The result"): frozen dataclasses encoded and decoded by the one codec
(flashmark.codec). Every key is required. Documents whose "summary" begins with "verdict: "
are read without that prefix (powercut_summary).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from flashmark.codec import Codec, document

POWERCUT_SCHEMA = "flashmark.powercut/1"
HISTORY_KIND = "powercut"
VERDICTS = ("pass", "fail", "uncertain")
# What became of the device after a cut.
BACK = "back"  # the same device came back and could be read
VANISHED = "vanished"  # no device with its identity within the timeout
CAPACITY_CHANGED = "capacity changed"
UNREADABLE = "unreadable"  # it came back, and reading the journal failed
DEVICE_STATES = (BACK, VANISHED, CAPACITY_CHANGED, UNREADABLE)
RAW = "raw"  # the journal written to the device itself; else the filesystem's name


@dataclass(frozen=True)
class PowercutTarget:
    path: str  # the device node at the start, absolute
    identity: str | None  # how it is recognised when it comes back: "cid:...", "loop:...", ...
    size_bytes: int
    logical_block_bytes: int
    write_cache: str | None  # sysfs queue/write_cache: "write back" or "write through"
    fua: bool | None  # sysfs queue/fua: the device takes Force Unit Access writes
    device: str | None = None  # the probed device in one line


@dataclass(frozen=True)
class PowercutSettings:
    run: str  # the run's nonce in hex: every record carries it
    cycles: int  # asked for
    mode: str  # RAW, "ext4" or "f2fs"
    record_bytes: int  # a journal record, or a file of the filesystem mode
    flush_every: int  # records (files) per flush
    fua: bool  # the last record before each flush is written with RWF_DSYNC (FUA)
    area_start: int  # RAW: where the journal lives on the device
    area_bytes: int
    cut_min_s: float  # the off command runs at a random moment in [min, max] after the
    cut_max_s: float  # cycle's first write
    off_command: str
    on_command: str
    come_back_timeout_s: float
    recorder: str  # where the acknowledged flush points went: a file, or [USER@]HOST


@dataclass(frozen=True)
class FsCheck:
    """fsck after a cut, run as a boot would (the journal replayed first)."""

    tool: str  # "e2fsck", "fsck.f2fs"
    exit_status: int
    state: str  # "clean", "repaired", "errors left", "failed"
    problems: tuple[str, ...] = ()  # what it reported, a line each (at most 20)


@dataclass(frozen=True)
class CycleResult:
    number: int
    first_seq: int
    # from the cycle's first write to the start of the off command, and how long that took:
    # the power went within it (None: the host went down with the power before it could say)
    cut_at_s: float | None
    off_command_s: float | None
    records_written: int  # acknowledged by the device (host down: those known to the recorder)
    records_in_flight: int  # submitted, not acknowledged when the power went
    records_flushed: int  # covered by an acknowledged flush (or FUA write), as recorded
    durable: int  # found intact afterwards (acknowledged or not)
    lost_after_flush: int  # flushed and not found intact: the card lost what it promised
    lost_unflushed: int  # never flushed and not found: allowed
    torn: int  # found partly written (some sectors new, some not), flushed or not
    corrupt: int  # found damaged: a sector of this run whose checksum fails
    flushed_bytes_lost: int  # lost_after_flush x record_bytes
    reordered: bool  # a flushed record lost while a later record survived
    first_lost_seq: int | None  # the first flushed record lost, to look at
    device: str  # DEVICE_STATES
    back_after_s: float | None  # from the end of the on command to the device's return
    back_as: str | None  # the node it came back as (it may differ from the path)
    fsck: FsCheck | None = None  # the filesystem mode's check after the cut

    @property
    def informative(self) -> bool:
        """A cut that tested something: a flush had been acknowledged before it, or the device
        failed as a whole."""
        return self.records_flushed > 0 or self.device != BACK

    @property
    def lost_acknowledged(self) -> bool:
        return (
            self.lost_after_flush > 0
            or self.device != BACK
            or (self.fsck is not None and self.fsck.state != "clean")
        )


@dataclass(frozen=True)
class PowercutResult:
    target: PowercutTarget
    settings: PowercutSettings
    cycles: tuple[CycleResult, ...]
    flushed_bytes_lost: int  # over all cycles
    verdict: str  # VERDICTS
    loss_rate_upper_95: float  # one-sided Clopper-Pearson bound on losses per cut
    summary: str  # one line, the verdict first (powercut_summary reads it)
    started_at: str
    finished_at: str
    duration_s: float
    complete: bool  # every asked cycle was run (False: stopped, see `stopped`)
    stopped: str | None = None  # why the run stopped before its last cycle
    notes: tuple[str, ...] = ()
    flashmark_version: str = ""
    id: int | None = field(default=None, metadata=document(omit_none=True))

    def with_id(self, result_id: int) -> PowercutResult:
        return replace(self, id=result_id)


def powercut_summary(result: PowercutResult) -> str:
    """The test's answer in one line, "pass — 6 cycles, ...": its "summary", which documents
    written before the verdict line began with "verdict: " themselves."""
    return result.summary.removeprefix("verdict: ")


def _check(result: PowercutResult) -> None:
    if result.verdict not in VERDICTS:
        raise ValueError(f"verdict {result.verdict!r} is not one of {', '.join(VERDICTS)}")
    for cycle in result.cycles:
        if cycle.device not in DEVICE_STATES:
            raise ValueError(f"cycle {cycle.number}: device state {cycle.device!r}")


POWERCUT_DOCUMENT = Codec(PowercutResult, POWERCUT_SCHEMA, "power-cut", check=_check)
to_document = POWERCUT_DOCUMENT.write
from_document = POWERCUT_DOCUMENT.read
