"""What a surface scan found, and its JSON document (`flashmark.surface/1`).

Frozen dataclasses cross the boundaries (docs/design.md); `to_document` and `from_document` are each
other's inverse, so a saved scan reads back as the same object (`show`, `--resume`).

Schema history (docs/surface.md):
  flashmark.surface/1: first version. Later additions a 1-reader can ignore:
    "target": "device" (the probed device in one line) and "identity" (its CID, else its
    serial number; what --resume compares), null when unknown or in older documents;
    "write"/"read": "flushes" and "flush_ns" (the write pass's flushes, every 2 s of writing;
    0 in older documents).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flashmark.errors import ResultFormatError
from flashmark.surface.cache import CacheEstimate
from flashmark.surface.pattern import MISMATCH_KINDS, Kind, Range

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
    def read_bw_bytes(self) -> float | None:
        return _rate(self.read_bytes, self.read_ns)

    @property
    def write_bw_bytes(self) -> float | None:
        return _rate(self.write_bytes, self.write_ns)

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "length": self.length,
            "read_bw_bytes": _round(self.read_bw_bytes),
            "write_bw_bytes": _round(self.write_bw_bytes),
            "read_bytes": self.read_bytes,
            "read_ns": self.read_ns,
            "write_bytes": self.write_bytes,
            "write_ns": self.write_ns,
            "read_max_latency_ns": self.read_max_latency_ns,
            "write_max_latency_ns": self.write_max_latency_ns,
            "unreadable_bytes": self.unreadable_bytes,
            "mismatched_bytes": self.mismatched_bytes,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SliceStats:
        return cls(
            **{
                name: int(d[name])
                for name in (
                    "start",
                    "length",
                    "read_bytes",
                    "read_ns",
                    "write_bytes",
                    "write_ns",
                    "read_max_latency_ns",
                    "write_max_latency_ns",
                    "unreadable_bytes",
                    "mismatched_bytes",
                )
            }
        )


@dataclass(frozen=True)
class Outlier:
    """A request that took far longer than the pass's median (a stall, a retry, a GC pause)."""

    offset: int
    length: int
    latency_ns: int

    def to_dict(self) -> dict[str, int]:
        return {"offset": self.offset, "length": self.length, "latency_ns": self.latency_ns}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Outlier:
        return cls(int(d["offset"]), int(d["length"]), int(d["latency_ns"]))


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
    def bw_bytes(self) -> float | None:
        return _rate(self.bytes, self.ns)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bw_bytes": _round(self.bw_bytes),
            "bytes": self.bytes,
            "ns": self.ns,
            "requests": self.requests,
            "median_latency_ns": self.median_latency_ns,
            "max_latency_ns": self.max_latency_ns,
            "outliers": [o.to_dict() for o in self.outliers],
            "host_stall_ns": self.host_stall_ns,
            "flushes": self.flushes,
            "flush_ns": self.flush_ns,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PassStats:
        return cls(
            bytes=int(d["bytes"]),
            ns=int(d["ns"]),
            requests=int(d["requests"]),
            median_latency_ns=int(d["median_latency_ns"]),
            max_latency_ns=int(d["max_latency_ns"]),
            outliers=tuple(Outlier.from_dict(o) for o in d.get("outliers", ())),
            host_stall_ns=int(d.get("host_stall_ns", 0)),
            flushes=int(d.get("flushes", 0)),
            flush_ns=int(d.get("flush_ns", 0)),
        )


@dataclass(frozen=True)
class Integrity:
    verified_bytes: int  # read back exactly as written
    mismatched_bytes: int  # read back, but not what was written (ranges say what instead)
    unreadable_bytes: int  # no read succeeded, down to the smallest request
    unwritable_bytes: int  # no write succeeded (not verified)
    ranges: tuple[Range, ...]  # sorted by start; mismatched, unreadable and unwritable

    def to_dict(self) -> dict[str, Any]:
        return {
            "verified_bytes": self.verified_bytes,
            "mismatched_bytes": self.mismatched_bytes,
            "unreadable_bytes": self.unreadable_bytes,
            "unwritable_bytes": self.unwritable_bytes,
            "bytes_by_kind": {
                kind: sum(r.length for r in self.ranges if r.kind == kind)
                for kind in (*MISMATCH_KINDS, Kind.UNREADABLE, Kind.UNWRITABLE)
            },
            "ranges": [
                {"start": r.start, "length": r.length, "kind": r.kind}
                | ({"source": r.source} if r.source is not None else {})
                for r in self.ranges
            ],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Integrity:
        return cls(
            verified_bytes=int(d["verified_bytes"]),
            mismatched_bytes=int(d["mismatched_bytes"]),
            unreadable_bytes=int(d["unreadable_bytes"]),
            unwritable_bytes=int(d.get("unwritable_bytes", 0)),
            ranges=tuple(
                Range(int(r["start"]), int(r["length"]), str(r["kind"]), r.get("source"))
                for r in d["ranges"]
            ),
        )


@dataclass(frozen=True)
class ResumeState:
    """Where an interrupted scan stands, enough to continue it (`--resume`)."""

    nonce: int  # the pattern written: needed to verify what the first session wrote
    phase: str  # "write", "read", "retry" or "done"
    next_offset: int  # the sequential pass's next request
    pending: tuple[tuple[int, int, int], ...]  # (start, length, request size) still to map
    stop_reason: str | None = None  # why it stopped (a signal, a device failure)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nonce": f"{self.nonce:016x}",
            "phase": self.phase,
            "next_offset": self.next_offset,
            "pending": [list(p) for p in self.pending],
            "stop_reason": self.stop_reason,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ResumeState:
        return cls(
            nonce=int(str(d["nonce"]), 16),
            phase=str(d["phase"]),
            next_offset=int(d["next_offset"]),
            pending=tuple((int(a), int(b), int(c)) for a, b, c in d["pending"]),
            stop_reason=d.get("stop_reason"),
        )


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


@dataclass(frozen=True)
class SurfaceResult:
    target: SurfaceTarget
    settings: SurfaceSettings
    started_at: str
    finished_at: str
    complete: bool
    read: PassStats | None
    write: PassStats | None
    slices: tuple[SliceStats, ...]
    integrity: Integrity
    cache: CacheEstimate | None
    state: ResumeState  # phase "done" when complete
    flashmark_version: str
    resumed_from: int | None = None
    warnings: tuple[str, ...] = field(default=())
    id: int | None = None

    @property
    def label(self) -> str:
        what = "write+verify" if self.settings.write else "read"
        return what if self.complete else f"{what} (incomplete)"


def _rate(size: int, ns: int) -> float | None:
    return None if ns <= 0 or size <= 0 else size * NS_PER_S / ns


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def to_document(result: SurfaceResult) -> dict[str, Any]:
    target, settings = result.target, result.settings
    document: dict[str, Any] = {
        "schema": SURFACE_SCHEMA,
        "flashmark_version": result.flashmark_version,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
        "complete": result.complete,
        "resumed_from": result.resumed_from,
        "target": {
            "given": target.given,
            "path": target.path,
            "kind": target.kind,
            "size_bytes": target.size_bytes,
            "sector_bytes": target.sector_bytes,
            "filesystem": target.filesystem,
            "device": target.device,
            "identity": target.identity,
        },
        "settings": {
            "block_bytes": settings.block_bytes,
            "slices": settings.slices,
            "write": settings.write,
            "verify": settings.verify,
            "direct_io": True,
        },
        "units": "bytes, bytes/s (MB/s shown = 10^6 bytes/s), ns",
        "write": None if result.write is None else result.write.to_dict(),
        "read": None if result.read is None else result.read.to_dict(),
        "cache": None if result.cache is None else result.cache.to_dict(),
        "integrity": result.integrity.to_dict(),
        "slices": [s.to_dict() for s in result.slices],
        "state": result.state.to_dict(),
        "warnings": list(result.warnings),
    }
    if result.id is not None:
        document["id"] = result.id
    return document


def from_document(document: Mapping[str, Any]) -> SurfaceResult:
    """The inverse of to_document; ResultFormatError naming what is wrong."""
    if document.get("schema") != SURFACE_SCHEMA:
        raise ResultFormatError(f"not a {SURFACE_SCHEMA} document: {document.get('schema')!r}")
    try:
        target, settings = document["target"], document["settings"]
        return SurfaceResult(
            target=SurfaceTarget(
                given=str(target["given"]),
                path=str(target["path"]),
                kind=str(target["kind"]),
                size_bytes=int(target["size_bytes"]),
                sector_bytes=int(target["sector_bytes"]),
                filesystem=target.get("filesystem"),
                device=target.get("device"),
                identity=target.get("identity"),
            ),
            settings=SurfaceSettings(
                block_bytes=int(settings["block_bytes"]),
                slices=int(settings["slices"]),
                write=bool(settings["write"]),
                verify=bool(settings["verify"]),
            ),
            started_at=str(document["started_at"]),
            finished_at=str(document["finished_at"]),
            complete=bool(document["complete"]),
            read=None if document["read"] is None else PassStats.from_dict(document["read"]),
            write=None if document["write"] is None else PassStats.from_dict(document["write"]),
            slices=tuple(SliceStats.from_dict(s) for s in document["slices"]),
            integrity=Integrity.from_dict(document["integrity"]),
            cache=None if document["cache"] is None else CacheEstimate.from_dict(document["cache"]),
            state=ResumeState.from_dict(document["state"]),
            flashmark_version=str(document["flashmark_version"]),
            resumed_from=document.get("resumed_from"),
            warnings=tuple(str(w) for w in document.get("warnings", ())),
            id=document.get("id"),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ResultFormatError(
            f"surface document is malformed ({type(error).__name__}: {error})"
        ) from None
