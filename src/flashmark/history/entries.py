"""What the history lists: a document with its kind, target and label, before and after it is
stored. Plain data, so the history and the views that list it need nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HistoryEntry:
    """A document and what the history lists it as."""

    kind: str
    target: str
    label: str
    document: Mapping[str, Any]


@dataclass(frozen=True)
class StoredResult:
    """A document as the history lists it: its id and entry, what `history` and reports read."""

    id: int
    kind: str
    created_at: str
    target: str
    label: str
    schema: str
    document: Mapping[str, Any]
    # Saved before every key of its schema was required, and not read since (store, 0004).
    unchecked: bool = False
