"""The verifiable pattern a surface scan writes, and what a block read back turned out to be.

Every 512-byte sector is one of the sector format's (flashmark.system.sector_format): its
header names the run's nonce and its own offset, its body is the run's random pad, so a sector
read back tells, as f3write/f3read do per file:
verified, aliased (this run's sector of another offset), zeros or erased (a dropped write),
stale (another run's or foreign data) or corrupted (docs/surface.md, "The pattern"). The sector
is the unit because a block device addresses no less. Sectors are built as 64-bit words in the
host's order: little-endian, as the format is, on every SBC.
"""

from __future__ import annotations

import random
from array import array
from dataclasses import dataclass, field

from flashmark.codec import document
from flashmark.system.sector_format import BODY_AT, OFFSET_AT, SECTOR, Use, header, read_header

PAD_BYTES = 1 << 20  # the random pad repeats every MiB; the offset field keeps sectors unique
_WORDS = SECTOR // 8
_OFFSET_WORD = OFFSET_AT // 8
_ZEROS = bytes(SECTOR)
_ERASED = b"\xff" * SECTOR
# Body words compared to tell "corrupted" (mostly this sector) from "stale" (another sector):
# a few samples cost nothing, and a sector with most of them intact is this one, damaged.
_SAMPLES = tuple(range(BODY_AT // 8, _WORDS, 7))


class Kind:
    """What a mismatched or unreadable range holds (the `kind` of a range in the document)."""

    ALIASED = "aliased"
    ZEROS = "zeros"
    ERASED = "erased"
    STALE = "stale"
    CORRUPTED = "corrupted"
    UNREADABLE = "unreadable"
    UNWRITABLE = "unwritable"


MISMATCH_KINDS = (Kind.ALIASED, Kind.ZEROS, Kind.ERASED, Kind.STALE, Kind.CORRUPTED)


@dataclass(frozen=True)
class Range:
    """`length` bytes from `start` that hold `kind`; for aliased ranges `source` is the offset
    whose data was found at `start` (the rest follows at the same distance)."""

    start: int
    length: int
    kind: str
    source: int | None = field(default=None, metadata=document(omit_none=True))

    @property
    def end(self) -> int:
        return self.start + self.length

    def joins(self, other: Range) -> bool:
        """True when `other` continues this range (same kind, adjacent, same alias distance)."""
        if other.kind != self.kind or other.start != self.end:
            return False
        if self.source is None or other.source is None:
            return self.source is other.source
        return other.source - other.start == self.source - self.start


def merge(ranges: list[Range], new: Range) -> None:
    """Append `new` to a sorted list of ranges, extending the last one when it continues it."""
    if ranges and ranges[-1].joins(new):
        last = ranges[-1]
        ranges[-1] = Range(last.start, last.length + new.length, last.kind, last.source)
    else:
        ranges.append(new)


class Pattern:
    """The content of every sector of one run, from its nonce alone."""

    def __init__(self, nonce: int) -> None:
        if not 0 < nonce < 1 << 64:
            raise ValueError("the nonce must be a non-zero 64-bit number")
        self.nonce = nonce
        self._run = run_of(nonce)
        pad = array("Q")
        pad.frombytes(random.Random(nonce).randbytes(PAD_BYTES))
        sectors = PAD_BYTES // SECTOR
        head = array("Q")
        head.frombytes(header(Use.SURFACE, self._run, 0))
        for word, value in enumerate(head):
            if word != _OFFSET_WORD:
                pad[word::_WORDS] = array("Q", [value]) * sectors
        self._pad = pad + pad  # doubled: any window of up to PAD_BYTES is one slice

    def expected(self, offset: int, length: int) -> array[int]:
        """The words written at `offset` (both multiples of SECTOR)."""
        if offset % SECTOR or length % SECTOR or offset < 0:
            raise ValueError(f"{offset}+{length} is not whole sectors")
        out = array("Q")
        done = 0
        while done < length:
            piece = min(length - done, PAD_BYTES)
            start = ((offset + done) % PAD_BYTES) // 8
            out += self._pad[start : start + piece // 8]
            done += piece
        out[_OFFSET_WORD::_WORDS] = array("Q", range(offset, offset + length, SECTOR))
        return out

    def expected_bytes(self, offset: int, length: int) -> bytes:
        return self.expected(offset, length).tobytes()

    def classify(self, data: bytes, offset: int) -> list[Range]:
        """The ranges of `data` (read at `offset`) that differ from what was written there."""
        length = len(data)
        expected = self.expected_bytes(offset, length)
        if data == expected:
            return []
        whole = self._whole(data, offset)
        if whole is not None:
            return [whole]
        found: list[Range] = []
        view = memoryview(data)
        for at in range(0, length, SECTOR):
            sector = view[at : at + SECTOR]
            if sector == expected[at : at + SECTOR]:
                continue
            kind, source = self._sector_kind(sector, offset + at)
            merge(found, Range(offset + at, SECTOR, kind, source))
        return found

    def _whole(self, data: bytes, offset: int) -> Range | None:
        """The common cases in one comparison: a whole block aliased, zeroed or erased."""
        length = len(data)
        source = self._source(data)
        if (
            source is not None
            and source != offset
            and source % SECTOR == 0
            and data == self.expected_bytes(source, length)
        ):
            return Range(offset, length, Kind.ALIASED, source)
        if data.count(0) == length:
            return Range(offset, length, Kind.ZEROS)
        if data.count(0xFF) == length:
            return Range(offset, length, Kind.ERASED)
        return None

    def _sector_kind(self, sector: memoryview, offset: int) -> tuple[str, int | None]:
        source = self._source(sector)
        if source is not None:
            if (
                source != offset
                and source % SECTOR == 0
                and sector == self.expected_bytes(source, SECTOR)
            ):
                return Kind.ALIASED, source
            if source == offset:
                return Kind.CORRUPTED, None
        if sector == _ZEROS:
            return Kind.ZEROS, None
        if sector == _ERASED:
            return Kind.ERASED, None
        if self._mostly_this(sector, offset):
            return Kind.CORRUPTED, None
        return Kind.STALE, None

    def _source(self, sector: bytes | memoryview) -> int | None:
        """The offset a sector of this run was written at; None when it is none of this run's."""
        head = read_header(sector)
        if head is None or head.use != Use.SURFACE or head.run != self._run:
            return None
        return head.offset

    def _mostly_this(self, sector: memoryview, offset: int) -> bool:
        words = sector.cast("Q")
        expected = self.expected(offset, SECTOR)
        same = sum(words[i] == expected[i] for i in _SAMPLES)
        return same * 2 > len(_SAMPLES)


def run_of(nonce: int) -> bytes:
    """The run field of the sector format for a scan's 64-bit nonce."""
    return nonce.to_bytes(16, "little")


def new_nonce() -> int:
    """A random non-zero 64-bit nonce for a new run."""
    while True:
        nonce = random.SystemRandom().getrandbits(64)
        if nonce:
            return nonce
