"""The card's slow moments seen so far in a run's writes, and what a later write test that
stops on its verdict may have missed of them. Pure.

A card pauses now and then to collect garbage or flush a cache: rarely enough (a 250 ms pause
every 32 MiB written) that a random-write test stopped after 8 MiB may meet none, its rate
then above the card's long-run rate by the pauses it did not meet, its interval (built on its
own samples) blind to them. A run's earlier writes, the sequential write above all, write much
more: their pauses per byte are the card's, and a later window that met fewer than its bytes
call for is widened down by the time those would have taken (docs/methodology.md, "Spread and
confidence"). Assumes the pauses come with the bytes written, whatever the request's size,
as the emulated flash card's do; a card whose random writes pause more than its sequential
ones is met only by its own windows' spread.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flashmark.fio.window import Completion, read_completions

# A pause: the time between two completions beyond the writes' usual spacing (their median) by
# at least this much and by half that spacing. A 120 ms pause stands out of 1 MiB writes at
# 6 MB/s (175 ms apart); a host's scheduling hiccup of a few milliseconds does not.
PAUSE_MIN_MS = 50.0
PAUSE_MIN_SPACINGS = 0.5

METHOD = (
    "; widened down by the card's pauses per byte written in the run's earlier writes, "
    "one more than seen, that its own window did not meet"
)


@dataclass(frozen=True)
class Pauses:
    """The pauses found in one window's write completions (`pauses_in`), or in a run's writes
    so far, pooled (`seen`: its SlowMoments)."""

    written_bytes: int = 0
    count: int = 0
    total_ms: float = 0.0  # their time beyond the usual spacing
    longest_ms: float = 0.0

    def seen(self, pauses: Pauses) -> Pauses:
        return Pauses(
            self.written_bytes + pauses.written_bytes,
            self.count + pauses.count,
            self.total_ms + pauses.total_ms,
            max(self.longest_ms, pauses.longest_ms),
        )

    def unmet_s(self, own: Pauses) -> float:
        """How much longer a window (or windows, pooled) with `own` pauses would have taken
        had it paused as the card does per byte (these pauses, a run's so far), with one pause
        more than seen (a count of 2 in 80 MiB says little more than that): 0 when it paused
        as much, or nothing paused before."""
        if not self.count or not self.written_bytes:
            return 0.0
        per_byte_ms = (self.total_ms + self.longest_ms) / self.written_bytes
        return max(0.0, per_byte_ms * own.written_bytes - own.total_ms) / 1000


# A run's pauses so far: its writes' Pauses, pooled.
SlowMoments = Pauses


def pauses_in(completions: Sequence[Completion]) -> Pauses:
    """The pauses (see PAUSE_MIN_MS) between `completions`, in time order."""
    written = sum(c.bytes for c in completions)
    gaps = [b.time_ms - a.time_ms for a, b in itertools.pairwise(completions)]
    if len(gaps) < 2:
        return Pauses(written)
    spacing = statistics.median(gaps)
    least = max(PAUSE_MIN_MS, PAUSE_MIN_SPACINGS * spacing)
    excesses = [gap - spacing for gap in gaps if gap - spacing >= least]
    return Pauses(written, len(excesses), sum(excesses), max(excesses, default=0.0))


def pauses_of_writes(logs: Mapping[str, str]) -> Pauses:
    """The pauses among the writes of a fio run's per-I/O logs."""
    return pauses_in(read_completions(logs, 1))
