"""What a full write + verify scan must report for a model, from the model alone.

Every sector is written once, in address order, then read back. A sector that the model stores
at the same place as later sectors shows the last of them (a wrapping fake); one stored nowhere
reads as the model's fill (zeros or 0xFF); one in a bad read range cannot be read.
"""

from __future__ import annotations

from flashmark.surface.pattern import Kind, Range, merge
from flashmark.system.sector_format import SECTOR
from tests.emulation.flash.model import FakeMode, FlashModel


def expected_ranges(model: FlashModel, sector: int = SECTOR) -> list[Range]:
    claimed, real = model.claimed_bytes, model.real_capacity
    found: list[Range] = []
    for offset in range(0, claimed, sector):
        if model.is_bad(offset, sector, write=False):
            merge(found, Range(offset, sector, Kind.UNREADABLE))
            continue
        if not model.is_fake:
            continue
        if model.fake is FakeMode.WRAP:
            within = offset % real
            last = within + (claimed - 1 - within) // real * real  # the last write stored there
            if last != offset:
                merge(found, Range(offset, sector, Kind.ALIASED, last))
        elif offset >= real:
            kind = Kind.ERASED if model.fake is FakeMode.ERASED else Kind.ZEROS
            merge(found, Range(offset, sector, kind))
    return found


def mismatched_bytes(ranges: list[Range]) -> int:
    return sum(r.length for r in ranges if r.kind not in (Kind.UNREADABLE, Kind.UNWRITABLE))


def unreadable_bytes(ranges: list[Range]) -> int:
    return sum(r.length for r in ranges if r.kind == Kind.UNREADABLE)
