"""Where a result stands among results of the same model and profile (pure).

The group's figures come sorted from one query (`Storage.group_figures`) and are kept by the
application for a short while (`GroupCache`): a device page then costs a few binary searches,
whatever the size of the group. A percentile rank counts the results below the value and half
of those equal to it (Hazen's plotting position), so a group of one gives 50 and the best of
many approaches 100.
"""

from __future__ import annotations

import bisect
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from flashmark.server.intake import HEADLINE_COLUMNS

BINS = 20  # bars of the distribution chart on a device page
CACHE_SECONDS = 30.0  # how old a page's percentiles may be (uploads here clear it at once)
CACHE_GROUPS = 512
T = TypeVar("T")


@dataclass(frozen=True)
class Standing:
    """One headline of a result within its group."""

    column: str
    value: float | None
    count: int  # results of the group with this figure
    below: int
    equal: int
    low: float | None
    high: float | None
    bins: tuple[int, ...] = ()  # BINS counts from low to high

    @property
    def percentile(self) -> float | None:
        if self.value is None or self.count == 0:
            return None
        return 100.0 * (self.below + 0.5 * self.equal) / self.count


def standings(
    figures: Mapping[str, Sequence[float]], headlines: Mapping[str, float | None]
) -> list[Standing]:
    """Each headline of a result among `figures` (per column, sorted ascending)."""
    return [
        _standing(column, figures.get(column, ()), headlines[column]) for column in HEADLINE_COLUMNS
    ]


def _standing(column: str, values: Sequence[float], value: float | None) -> Standing:
    if not values:
        return Standing(column, value, 0, 0, 0, None, None)
    low, high = values[0], values[-1]
    below = equal = 0
    if value is not None:
        below = bisect.bisect_left(values, value)
        equal = bisect.bisect_right(values, value) - below
    bins = [0] * BINS
    if high > low:
        # The edges split [low, high] evenly; the counts are differences of binary searches.
        edges = [low + (high - low) * index / BINS for index in range(1, BINS)]
        positions = [0, *(bisect.bisect_left(values, edge) for edge in edges), len(values)]
        bins = [positions[i + 1] - positions[i] for i in range(BINS)]
    else:
        bins[0] = len(values)
    return Standing(column, value, len(values), below, equal, low, high, tuple(bins))


class GroupCache(Generic[T]):
    """Sorted figures per (model, profile), each kept CACHE_SECONDS, the newest CACHE_GROUPS
    groups at most. Used from the event loop only (no lock needed)."""

    def __init__(self, seconds: float = CACHE_SECONDS, groups: int = CACHE_GROUPS) -> None:
        self.seconds = seconds
        self.groups = groups
        self._entries: OrderedDict[tuple[str, str], tuple[float, T]] = OrderedDict()

    def get(self, key: tuple[str, str]) -> T | None:
        value, fresh = self.lookup(key)
        return value if fresh else None

    def lookup(self, key: tuple[str, str]) -> tuple[T | None, bool]:
        """The entry, and whether it is younger than `seconds` (an older one may still be
        shown while it is read again)."""
        entry = self._entries.get(key)
        if entry is None:
            return None, False
        self._entries.move_to_end(key)
        return entry[1], entry[0] >= time.monotonic()

    def put(self, key: tuple[str, str], value: T) -> None:
        self._entries[key] = (time.monotonic() + self.seconds, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.groups:
            self._entries.popitem(last=False)

    def peek(self, key: tuple[str, str]) -> T | None:
        """The entry, expired or not, without touching its age (to update it in place)."""
        entry = self._entries.get(key)
        return None if entry is None else entry[1]


def count_upload(
    groups: GroupCache[dict[str, list[float]]],
    counts: GroupCache[dict[str, int]],
    model_key: str,
    profile: str,
    headlines: Mapping[str, float | None],
) -> None:
    """A result this process just stored, added to the cached figures of its group: the
    uploader's next device page ranks it among the others at once (a group's whole figures
    are read again only when the entry expires, so a popular model is not re-read per upload)."""
    figures = groups.peek((model_key, profile))
    if figures is not None:
        for column, value in headlines.items():
            if value is not None:
                bisect.insort(figures.setdefault(column, []), value)
    per_profile = counts.peek((model_key, ""))
    if per_profile is not None:
        per_profile[profile] = per_profile.get(profile, 0) + 1
