"""A surface scan's answer in one line: the terminal's `verdict:` line and the document's
"summary" key. A scan that wrote and verified answers "is it genuine?" as f3 does ("fake: 128
MiB real of 512 MiB, the rest wraps to the start", "failed: 4 KiB corrupted", "genuine, 512
MiB"), then the average rates and where the write cache ran out; a read-only scan answers "is
any of it unreadable?"; an incomplete scan says where it stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.surface.pattern import Kind
from flashmark.units import format_rate, format_size, mb_per_s

if TYPE_CHECKING:
    from flashmark.surface.result import SurfaceResult

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
    """The scan's answer in one line (see the module's docstring)."""
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
