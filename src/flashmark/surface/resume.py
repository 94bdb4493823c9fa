"""A device scan kept in the history as it runs, and found there again to be resumed.

A scan killed outright (SIGKILL, a power cut) leaves its last checkpoint in the history, which
`--resume` continues from what the device holds durably (scan.py says when a point is durable).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from flashmark.errors import HistoryError, UsageError
from flashmark.history.store import History
from flashmark.surface.kind import SURFACE
from flashmark.surface.result import SurfaceResult, from_document


class HistoryCheckpoints:
    """Keeps the running scan in one history entry, which the final result then replaces
    (`id`). A checkpoint that cannot be saved does not stop the scan: the first failure is
    said once through `warn`, and the end is saved (or kept in a recovery file) as usual."""

    def __init__(self, history: History, warn: Callable[[str], None]) -> None:
        self.history = history
        self.id: int | None = None
        self._warn = warn
        self._failed = False

    def __call__(self, result: SurfaceResult) -> None:
        document = SURFACE.to_document(result)
        listing = SURFACE.listing(result)
        fields = {"kind": SURFACE.name, "target": listing.target, "label": listing.label}
        try:
            if self.id is None:
                self.id = self.history.save(document=document, **fields)
            else:
                self.history.replace(self.id, document=document, **fields)
        except HistoryError as error:
            if not self._failed:
                self._failed = True
                self._warn(
                    f"the scan's progress cannot be kept in the history ({error}): a scan "
                    "killed outright could not be resumed"
                )


def interrupted_scan(history: History, given: str) -> SurfaceResult:
    """The newest incomplete scan of this target in the history; UsageError when its newest
    scan finished, or there is none."""
    wanted = history_target(given)
    for entry in history.list(kind=SURFACE.name):
        if entry.target != wanted:
            continue
        result = from_document(dict(entry.document) | {"id": entry.id})
        if result.complete:
            break  # the newest scan of this target finished: nothing to resume
        return result
    raise UsageError(
        f"no interrupted surface scan of {wanted} in the history {history.path} to resume "
        "(`flashmark history` lists the saved ones)"
    )


def history_target(given: str) -> str:
    """A target as the history lists scans of it: absolute, links resolved."""
    return os.path.realpath(os.path.expanduser(given))
