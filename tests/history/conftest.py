"""The history's tests wait out locks: at 0.1 s instead of 5 s for the commands run in-process.
A lock held by another connection is refused after the wait either way; only its length is
the product's choice (store.BUSY_TIMEOUT_S), and the subprocess tests keep it."""

from __future__ import annotations

import pytest

import flashmark.history.store

SHORT_BUSY_TIMEOUT_S = 0.1


@pytest.fixture(autouse=True)
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(flashmark.history.store, "BUSY_TIMEOUT_S", SHORT_BUSY_TIMEOUT_S)
