"""The volatile write cache of an emulated card: what a power cut loses, and what it keeps.

A completed write stays here until it becomes durable: at a flush, at its due time (a card
writing back on its own), or when the cache is full (oldest first). Reads see the cache over
the durable state. A power cut keeps the entries due by then and drops the rest; what it
dropped is the truth a power-cut test is judged against. Standard library only (model.py).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.emulation.flash.model import SECTOR

# Writes a run of sectors to the durable state: (real offset, bytes).
DurableWrite = Callable[[int, bytes], None]


@dataclass
class _Entry:
    """One completed write still in the cache, by the order it arrived in (seq)."""

    seq: int
    length: int  # bytes the host wrote (what a test counts), whatever was superseded since
    sectors: tuple[int, ...]  # real sector numbers, in the write's order
    due_ns: int | None  # when it becomes durable on its own (None: never)
    flushed: bool = False  # a flush completed after it: the host was told it is durable


@dataclass(frozen=True)
class Dropped:
    """What a power cut dropped from the cache."""

    writes: int = 0
    bytes: int = 0
    flushed_bytes: int = 0  # of those, bytes a completed flush had covered (the card lied)


@dataclass
class VolatileCache:
    """Completed writes not yet durable, and the sectors they hold, newest per sector."""

    capacity_bytes: int
    write_durable: DurableWrite
    _sectors: dict[int, tuple[int, bytes]] = field(default_factory=dict)  # sector -> (seq, data)
    _entries: dict[int, _Entry] = field(default_factory=dict)  # seq -> entry, arrival order
    _due: list[tuple[int, int]] = field(default_factory=list)  # heap of (due_ns, seq)

    @property
    def fill_bytes(self) -> int:
        return len(self._sectors) * SECTOR

    def add(self, seq: int, pieces: list[tuple[int, memoryview]], due_ns: int | None) -> None:
        """A completed write of `pieces` ((real offset, data) in the write's order)."""
        sectors: list[int] = []
        for real, data in pieces:
            first = real // SECTOR
            for index in range(len(data) // SECTOR):
                part = bytes(data[index * SECTOR : (index + 1) * SECTOR])
                self._sectors[first + index] = (seq, part)
                sectors.append(first + index)
        length = sum(len(data) for _, data in pieces)
        self._entries[seq] = _Entry(seq, length, tuple(sectors), due_ns)
        if due_ns is not None:
            heapq.heappush(self._due, (due_ns, seq))
        while self.fill_bytes > self.capacity_bytes and self._entries:
            self._make_durable(next(iter(self._entries)))  # full: the oldest goes first

    def overlay(self, view: memoryview, real: int) -> None:
        """Put what the cache holds for `real`..`real + len(view)` over `view` (read from the
        durable state)."""
        if not self._sectors:
            return
        first = real // SECTOR
        for index in range(len(view) // SECTOR):
            held = self._sectors.get(first + index)
            if held is not None:
                view[index * SECTOR : (index + 1) * SECTOR] = held[1]

    def flush(self, *, honest: bool) -> None:
        """A flush completed: every write in the cache was completed before it. An honest card
        makes them durable; any card has now told the host they are."""
        for entry in self._entries.values():
            entry.flushed = True
        if honest:
            for seq in list(self._entries):
                self._make_durable(seq)

    def make_due_durable(self, now_ns: int) -> None:
        """Write back every entry due by `now_ns`, in the order they fell due."""
        while self._due and self._due[0][0] <= now_ns:
            _, seq = heapq.heappop(self._due)
            if seq in self._entries:
                self._make_durable(seq)

    def make_all_durable(self) -> None:
        for seq in list(self._entries):
            self._make_durable(seq)

    def forget(self, seq: int) -> None:
        """Take a write out of the cache without making it durable (it was cut in service)."""
        entry = self._entries.pop(seq, None)
        if entry is None:
            return
        for sector in entry.sectors:
            held = self._sectors.get(sector)
            if held is not None and held[0] == seq:
                del self._sectors[sector]

    def drop(self) -> Dropped:
        """The power went: everything still here is lost."""
        dropped = Dropped(
            writes=len(self._entries),
            bytes=sum(entry.length for entry in self._entries.values()),
            flushed_bytes=sum(e.length for e in self._entries.values() if e.flushed),
        )
        self._sectors.clear()
        self._entries.clear()
        self._due.clear()
        return dropped

    def _make_durable(self, seq: int) -> None:
        """Write the entry's sectors that no later write superseded (those are written back
        with the later write; an older version never overwrites a newer durable one)."""
        entry = self._entries.pop(seq)
        own = [s for s in entry.sectors if self._sectors.get(s, (None,))[0] == seq]
        for start, count in _runs(sorted(own)):
            data = b"".join(self._sectors.pop(start + i)[1] for i in range(count))
            self.write_durable(start * SECTOR, data)


def _runs(sectors: list[int]) -> list[tuple[int, int]]:
    """Consecutive sector numbers as (first, count)."""
    runs: list[list[int]] = []
    for sector in sectors:
        if runs and runs[-1][0] + runs[-1][1] == sector:
            runs[-1][1] += 1
        else:
            runs.append([sector, 1])
    return [(first, count) for first, count in runs]
