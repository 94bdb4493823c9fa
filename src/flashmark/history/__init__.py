"""The history: every saved result in one SQLite file (store.py), the entries it holds
(entries.py), the cards they measured (cards.py), and the recovery file a result goes to when
the history cannot take it (recovery.py). Names load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.history.entries import HistoryEntry as HistoryEntry
    from flashmark.history.entries import StoredResult as StoredResult
    from flashmark.history.recovery import RecoveryFileError as RecoveryFileError
    from flashmark.history.recovery import keep_unsaved as keep_unsaved
    from flashmark.history.store import MAX_ID as MAX_ID
    from flashmark.history.store import History as History

_NAMES = {
    ".entries": ("HistoryEntry", "StoredResult"),
    ".recovery": ("RecoveryFileError", "keep_unsaved"),
    ".store": ("MAX_ID", "History"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
