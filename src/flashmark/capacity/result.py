"""The result of `flashmark capacity`: frozen dataclasses and their JSON document, in the one
codec (flashmark.codec); every key of its document is required.

Schema history ("schema" key):
    flashmark.capacity/1   first version. Later additions a 1-reader can ignore: "summary"
                           (the probe's answer in one line, the terminal's `verdict:` line,
                           below: written, never read back).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from flashmark.capacity.search import Findings, Observation
from flashmark.capacity.signature import Found
from flashmark.codec import Codec, document, written
from flashmark.units import format_size

CAPACITY_SCHEMA = "flashmark.capacity/1"
# The survey reads thousands of blocks; the document keeps every one that did not come back as
# written up to this many (and their count), and every bisection and modulus step.
MAX_ANOMALIES = 256
VERDICTS = ("genuine", "fake", "uncertain")


@dataclass(frozen=True)
class BackupSummary:
    ranges: int
    bytes: int
    restored: bool
    differing_after_aliasing: int  # see backup.py: only possible on a device that wraps


@dataclass(frozen=True)
class Evidence:
    """How the probe came to its verdict: where it wrote, what it wrote and read, and every
    block that did not come back as written."""

    layout: Mapping[str, int]  # layout_dict
    blocks_written: int
    blocks_read: int
    anomalies_total: int
    anomalies: tuple[Observation, ...]  # the first MAX_ANOMALIES of them
    steps: tuple[Observation, ...]


@dataclass(frozen=True, kw_only=True)
class CapacityResult:
    flashmark_version: str = ""
    device: str  # the node as given, e.g. /dev/sdb
    claimed_bytes: int
    real_bytes: int | None  # None when the probe could not pin it down (see notes)
    verdict: str  # VERDICTS
    behaviour: tuple[str, ...]  # "wraps", "zeros", "erased", "drops", "corrupts"
    granularity_bytes: int  # the real size is in [real_bytes, real_bytes + granularity)
    block_bytes: int
    destructive: bool
    started_at: str
    finished_at: str
    duration_s: float
    card_cid: str | None = None  # the card's CID register, to recognise it again (passport)
    evidence: Evidence
    backup: BackupSummary | None
    notes: tuple[str, ...] = ()
    id: int | None = field(default=None, metadata=document(omit_none=True))

    def with_id(self, result_id: int) -> CapacityResult:
        return replace(self, id=result_id)

    @property
    @written(before="flashmark_version")
    def summary(self) -> str:
        """The probe's answer in one line (its function below)."""
        return capacity_summary(self)


def _check(result: CapacityResult) -> None:
    if result.verdict not in VERDICTS:
        raise ValueError(f"{result.verdict!r} is not one of {', '.join(VERDICTS)}")


CAPACITY_DOCUMENT = Codec(CapacityResult, CAPACITY_SCHEMA, "capacity", _check)


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


# -- the answer in one line -----------------------------------------------------------------------
# A capacity probe's answer in one line: the terminal's `verdict:` line and the document's
# "summary" key. "fake: 128 MiB of the claimed 512 MiB hold data, the rest wraps to the start";
# "genuine: every probed block of the claimed 512 MiB held its data" (binary units, as fakes'
# real sizes are powers of two).

# What lies beyond the real size, by the behaviour the probe found (capacity.search).
_BEYOND = {
    "wraps": "the rest wraps to the start",
    "zeros": "the rest reads back as zeros (writes dropped)",
    "erased": "the rest reads back as 0xFF (writes dropped)",
    "drops": "writes to the rest are dropped",
    "corrupts": "the rest reads back as something else than was written",
}


def capacity_summary(result: CapacityResult) -> str:
    """The probe's answer in one line (the comment above says how it reads)."""
    claimed = format_size(result.claimed_bytes)
    if result.verdict == "genuine":
        return f"genuine: every probed block of the claimed {claimed} held its data"
    beyond = ", ".join(_BEYOND.get(b, b) for b in result.behaviour)
    rest = f", {beyond}" if beyond else ""
    if result.real_bytes is None:
        return f"{result.verdict}: the real size of the claimed {claimed} is unknown{rest}"
    real = format_size(result.real_bytes)
    return f"{result.verdict}: {real} of the claimed {claimed} hold data{rest}"
