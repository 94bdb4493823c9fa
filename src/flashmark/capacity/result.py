"""The result of `flashmark capacity`: a frozen dataclass and its JSON document.

Schema history ("schema" key):
    flashmark.capacity/1   first version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from flashmark.capacity.search import Findings, Observation
from flashmark.capacity.signature import Found
from flashmark.errors import ResultFormatError

CAPACITY_SCHEMA = "flashmark.capacity/1"
# The survey reads thousands of blocks; the document keeps every one that did not come back as
# written up to this many (and their count), and every bisection and modulus step.
MAX_ANOMALIES = 256


@dataclass(frozen=True)
class BackupSummary:
    ranges: int
    bytes: int
    restored: bool
    differing_after_aliasing: int  # see backup.py: only possible on a device that wraps


@dataclass(frozen=True)
class CapacityResult:
    device: str  # the node as given, e.g. /dev/sdb
    claimed_bytes: int
    real_bytes: int | None  # None when the probe could not pin it down (see notes)
    verdict: str  # "genuine", "fake", "uncertain"
    behaviour: tuple[str, ...]  # "wraps", "zeros", "erased", "drops", "corrupts"
    granularity_bytes: int  # the real size is in [real_bytes, real_bytes + granularity)
    block_bytes: int
    destructive: bool
    started_at: str
    finished_at: str
    duration_s: float
    blocks_written: int
    blocks_read: int
    layout: Mapping[str, int]
    anomalies: tuple[Observation, ...]
    anomalies_total: int
    steps: tuple[Observation, ...]
    backup: BackupSummary | None
    card_cid: str | None = None  # the card's CID register, to recognise it again (passport)
    notes: tuple[str, ...] = ()
    flashmark_version: str = ""
    id: int | None = None

    def with_id(self, result_id: int) -> CapacityResult:
        return replace(self, id=result_id)

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "schema": CAPACITY_SCHEMA,
            "flashmark_version": self.flashmark_version,
            "device": self.device,
            "claimed_bytes": self.claimed_bytes,
            "real_bytes": self.real_bytes,
            "verdict": self.verdict,
            "behaviour": list(self.behaviour),
            "granularity_bytes": self.granularity_bytes,
            "block_bytes": self.block_bytes,
            "destructive": self.destructive,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_s": self.duration_s,
            "card_cid": self.card_cid,
            "evidence": {
                "layout": dict(self.layout),
                "blocks_written": self.blocks_written,
                "blocks_read": self.blocks_read,
                "anomalies_total": self.anomalies_total,
                "anomalies": [_observation(o) for o in self.anomalies],
                "steps": [_observation(o) for o in self.steps],
            },
            "backup": None
            if self.backup is None
            else {
                "ranges": self.backup.ranges,
                "bytes": self.backup.bytes,
                "restored": self.backup.restored,
                "differing_after_aliasing": self.backup.differing_after_aliasing,
            },
            "notes": list(self.notes),
        }
        if self.id is not None:
            document["id"] = self.id
        return document

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> CapacityResult:
        try:
            if document.get("schema") != CAPACITY_SCHEMA:
                raise ValueError(f"schema is {document.get('schema')!r}")
            evidence = document["evidence"]
            backup = document.get("backup")
            return cls(
                device=str(document["device"]),
                claimed_bytes=int(document["claimed_bytes"]),
                real_bytes=None if document["real_bytes"] is None else int(document["real_bytes"]),
                verdict=_choice(document["verdict"], ("genuine", "fake", "uncertain")),
                behaviour=tuple(str(b) for b in document["behaviour"]),
                granularity_bytes=int(document["granularity_bytes"]),
                block_bytes=int(document["block_bytes"]),
                destructive=bool(document["destructive"]),
                started_at=str(document["started_at"]),
                finished_at=str(document["finished_at"]),
                duration_s=float(document["duration_s"]),
                blocks_written=int(evidence["blocks_written"]),
                blocks_read=int(evidence["blocks_read"]),
                layout={str(k): int(v) for k, v in evidence["layout"].items()},
                anomalies=tuple(_read_observation(o) for o in evidence["anomalies"]),
                anomalies_total=int(evidence["anomalies_total"]),
                steps=tuple(_read_observation(o) for o in evidence["steps"]),
                backup=None
                if backup is None
                else BackupSummary(
                    int(backup["ranges"]),
                    int(backup["bytes"]),
                    bool(backup["restored"]),
                    int(backup["differing_after_aliasing"]),
                ),
                card_cid=document.get("card_cid"),
                notes=tuple(str(n) for n in document.get("notes", ())),
                flashmark_version=str(document.get("flashmark_version", "")),
                id=document.get("id"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ResultFormatError(
                f"capacity document is malformed ({type(error).__name__}: {error})"
            ) from None


def _choice(value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{value!r} is not one of {', '.join(allowed)}")
    return str(value)


def _observation(observation: Observation) -> dict[str, Any]:
    return {
        "offset": observation.offset,
        "phase": observation.phase,
        "wrote": "signature",
        "found": observation.found.value,
        "origin": observation.origin,
        "own_sectors": observation.own_sectors,
    }


def _read_observation(data: Mapping[str, Any]) -> Observation:
    origin = data.get("origin")
    return Observation(
        offset=int(data["offset"]),
        phase=str(data["phase"]),
        found=Found(data["found"]),
        origin=None if origin is None else int(origin),
        own_sectors=int(data.get("own_sectors", 0)),
    )


def layout_dict(findings: Findings) -> dict[str, int]:
    layout = findings.layout
    return {
        "ruler_first": layout.marks[0] if layout.marks else layout.window_start,
        "ruler_step": layout.step,
        "ruler_marks": len(layout.marks),
        "window_start": layout.window_start,
        "window_bytes": layout.window_bytes,
        "flush_start": layout.flush_start,
        "flush_bytes": layout.flush_bytes,
        "probed_top": layout.top,
    }


def anomalies_of(findings: Findings) -> tuple[tuple[Observation, ...], int]:
    odd = [o for o in findings.survey if o.found is not Found.OWN]
    return tuple(odd[:MAX_ANOMALIES]), len(odd)
