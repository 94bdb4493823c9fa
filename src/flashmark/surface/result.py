"""What a surface scan found, and its JSON document (`flashmark.surface/1`, history in
docs/surface.md): frozen dataclasses written and read by the one codec (flashmark.codec), so a
saved scan reads back as the same object (`show`, `--resume`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flashmark.codec import Codec, document, written
from flashmark.surface.cache import CacheEstimate
from flashmark.surface.pattern import MISMATCH_KINDS, Kind, Range
from flashmark.units import format_rate, format_size, mb_per_s

SURFACE_SCHEMA = "flashmark.surface/1"
NS_PER_S = 1_000_000_000


@dataclass(frozen=True)
class SliceStats:
    """One slice of the surface: bytes moved and the time they took, per pass.

    Times are the intervals between request completions in the sequential pass, so the
    slices' times add up to the pass's time (host gaps included, where a user sees them).
    Bytes recovered by retries are not timed (they would mix retry speed into the rate)."""

    start: int
    length: int
    read_bytes: int = 0
    read_ns: int = 0
    write_bytes: int = 0
    write_ns: int = 0
    read_max_latency_ns: int = 0
    write_max_latency_ns: int = 0
    unreadable_bytes: int = 0
    mismatched_bytes: int = 0

    @property
    @written(before="read_bytes", digits=1)
    def read_bw_bytes(self) -> float | None:
        return _rate(self.read_bytes, self.read_ns)

    @property
    @written(before="read_bytes", digits=1)
    def write_bw_bytes(self) -> float | None:
        return _rate(self.write_bytes, self.write_ns)


@dataclass(frozen=True)
class Outlier:
    """A request that took far longer than the pass's median (a stall, a retry, a GC pause)."""

    offset: int
    length: int
    latency_ns: int


@dataclass(frozen=True)
class PassStats:
    """One sequential pass over the surface (write, or read)."""

    bytes: int  # timed bytes (first tries of the sequential pass)
    ns: int  # their time, end_fsync included for writes
    requests: int
    median_latency_ns: int
    max_latency_ns: int
    outliers: tuple[Outlier, ...] = ()
    host_stall_ns: int = 0  # host stalls left out of `ns` (gaps of more than 50 ms)
    # the write pass's flushes (one every 2 s of writing and at its end) and their time,
    # which `ns` includes: what making the writes durable in steps cost
    flushes: int = 0
    flush_ns: int = 0

    @property
    @written(before="bytes", digits=1)
    def bw_bytes(self) -> float | None:
        return _rate(self.bytes, self.ns)


@dataclass(frozen=True)
class Integrity:
    verified_bytes: int  # read back exactly as written
    mismatched_bytes: int  # read back, but not what was written (ranges say what instead)
    unreadable_bytes: int  # no read succeeded, down to the smallest request
    unwritable_bytes: int  # no write succeeded (not verified)
    ranges: tuple[Range, ...]  # sorted by start; mismatched, unreadable and unwritable

    @property
    @written(before="ranges")
    def bytes_by_kind(self) -> dict[str, int]:
        return {
            kind: sum(r.length for r in self.ranges if r.kind == kind)
            for kind in (*MISMATCH_KINDS, Kind.UNREADABLE, Kind.UNWRITABLE)
        }


@dataclass(frozen=True)
class ResumeState:
    """Where an interrupted scan stands, enough to continue it (`--resume`)."""

    # the pattern written: needed to verify what the first session wrote (as 16 hex digits)
    nonce: int = field(metadata=document(hex_digits=16))
    phase: str  # "write", "read", "retry" or "done"
    next_offset: int  # the sequential pass's next request
    pending: tuple[tuple[int, int, int], ...]  # (start, length, request size) still to map
    stop_reason: str | None = None  # why it stopped (a signal, a device failure)


@dataclass(frozen=True)
class SurfaceTarget:
    given: str  # as typed, made absolute
    path: str  # the device node, or the folder
    kind: str  # "device" or "folder"
    size_bytes: int  # the surface scanned: the device, or the files written in the folder
    sector_bytes: int  # the smallest request (logical block size), the mapping's resolution
    filesystem: str | None = None
    # The probed device in one line ("mmcblk0 (sd): SanDisk SN64G, 64 GB, ..."), and its CID
    # or serial number (a resumed scan must be of the same device); None when unknown.
    device: str | None = None
    identity: str | None = None


@dataclass(frozen=True)
class SurfaceSettings:
    block_bytes: int
    slices: int
    write: bool  # the write pass ran (--destructive, or a folder)
    verify: bool  # the read pass compared with the pattern

    @property
    @written()
    def direct_io(self) -> bool:
        return True  # the scan always reads and writes with O_DIRECT


@dataclass(frozen=True, kw_only=True)
class SurfaceResult:
    flashmark_version: str
    started_at: str
    finished_at: str
    complete: bool
    resumed_from: int | None = None
    target: SurfaceTarget
    settings: SurfaceSettings
    write: PassStats | None
    read: PassStats | None
    cache: CacheEstimate | None
    integrity: Integrity
    slices: tuple[SliceStats, ...]
    state: ResumeState  # phase "done" when complete
    warnings: tuple[str, ...] = field(default=())
    id: int | None = field(default=None, metadata=document(omit_none=True))

    @property
    @written(before="flashmark_version")
    def summary(self) -> str:
        """The scan's answer in one line (its function below)."""
        return scan_summary(self)

    @property
    @written(before="write")
    def units(self) -> str:
        return "bytes, bytes/s (MB/s shown = 10^6 bytes/s), ns"

    @property
    def label(self) -> str:
        what = "write+verify" if self.settings.write else "read"
        return what if self.complete else f"{what} (incomplete)"


def _rate(size: int, ns: int) -> float | None:
    return None if ns <= 0 or size <= 0 else size * NS_PER_S / ns


SURFACE_DOCUMENT = Codec(SurfaceResult, SURFACE_SCHEMA, "surface")
to_document = SURFACE_DOCUMENT.write
from_document = SURFACE_DOCUMENT.read


# -- the answer in one line -----------------------------------------------------------------------
# A surface scan's answer in one line: the terminal's `verdict:` line and the document's
# "summary" key. A scan that wrote and verified answers "is it genuine?" as f3 does ("fake: 128
# MiB real of 512 MiB, the rest wraps to the start", "failed: 4 KiB corrupted", "genuine, 512
# MiB"), then the average rates and where the write cache ran out; a read-only scan answers "is
# any of it unreadable?"; an incomplete scan says where it stopped.


# What the rest of a fake reads back as, by the kind of its mismatched ranges.
_FAKE_REST = {
    Kind.ALIASED: "the rest wraps to the start",
    Kind.ZEROS: "the rest reads back as zeros (writes dropped)",
    Kind.ERASED: "the rest reads back as 0xFF (writes dropped)",
    Kind.STALE: "the rest keeps old data (writes dropped)",
}
# A fake's pattern: written data found at another address, or writes dropped up to the end.
_DROPPED = (Kind.ZEROS, Kind.ERASED, Kind.STALE)


def scan_summary(result: SurfaceResult) -> str:
    """The scan's answer in one line (the comment above says how it reads)."""
    found, rates = _integrity_text(result), _rates_text(result)
    # "genuine, 512 MiB, reads ..." as one list; after a finding of its own, a clause apart
    text = found if not rates else f"{found}{', ' if _clean(result) else '; '}{rates}"
    if result.complete:
        return text
    state = result.state
    why = f" ({state.stop_reason})" if state.stop_reason else ""
    return (
        f"incomplete: stopped in the {state.phase} pass at {format_size(state.next_offset)} "
        f"of {format_size(result.target.size_bytes)}{why}; so far {text}"
    )


def _clean(result: SurfaceResult) -> bool:
    integrity = result.integrity
    return not (
        integrity.mismatched_bytes or integrity.unreadable_bytes or integrity.unwritable_bytes
    )


def _integrity_text(result: SurfaceResult) -> str:
    integrity, target = result.integrity, result.target
    size = format_size(target.size_bytes)
    by_kind = integrity.bytes_by_kind
    if not result.settings.verify:
        unreadable = integrity.unreadable_bytes
        if unreadable:
            return f"{format_size(unreadable)} unreadable of {size} (read only)"
        return f"no unreadable block in {size} (read only)"
    fake = _fake_kind(result)
    if fake is not None and target.kind == "device":
        return f"fake: {format_size(integrity.verified_bytes)} real of {size}, {_FAKE_REST[fake]}"
    if fake is not None:
        lost = integrity.mismatched_bytes
        return (
            f"{format_size(lost)} of {size} of files did not read back as written "
            f"({_FAKE_REST[fake]}): the card may be fake (`sudo flashmark capacity DEVICE`)"
        )
    damage = [
        f"{format_size(by_kind[kind])} {kind}"
        for kind in (Kind.CORRUPTED, *_DROPPED, Kind.UNREADABLE, Kind.UNWRITABLE)
        if by_kind.get(kind)
    ]
    if damage:
        return f"failed: {', '.join(damage)} of {size}"
    if target.kind == "device":
        return f"genuine, {size}" if result.complete else "all read back as written"
    return f"all {size} of files read back as written"


def _fake_kind(result: SurfaceResult) -> str | None:
    """The kind of a fake's pattern in the scan's mismatches: any aliasing, or dropped writes
    that run to the end of the surface; None otherwise."""
    ranges = result.integrity.ranges
    if any(found.kind == Kind.ALIASED for found in ranges):
        return Kind.ALIASED
    dropped = [found for found in ranges if found.kind in _DROPPED]
    if dropped and dropped[-1].end >= result.target.size_bytes:
        return dropped[-1].kind
    return None


def _rates_text(result: SurfaceResult) -> str:
    """'reads 50.0 MB/s, writes 40.0 MB/s for 32 MiB then 12.0': the passes' averages, the
    write cache where one was found."""
    parts = []
    if result.read is not None and result.read.bw_bytes is not None:
        parts.append(f"reads {format_rate(result.read.bw_bytes)}")
    if result.write is not None and result.write.bw_bytes is not None:
        cache = result.cache
        if (
            cache is not None
            and cache.found
            and cache.bytes is not None
            and cache.burst_bw_bytes is not None
            and cache.sustained_bw_bytes is not None
        ):
            parts.append(
                f"writes {format_rate(cache.burst_bw_bytes)} for {format_size(cache.bytes)} "
                f"then {mb_per_s(cache.sustained_bw_bytes):.1f}"
            )
        else:
            parts.append(f"writes {format_rate(result.write.bw_bytes)}")
    return ", ".join(parts)
