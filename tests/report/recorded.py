"""Where the report tests' recorded inputs and golden files live, and how to read them.

tests/data/report/*.json come from `flashmark run --json` on the recordings of
tests/data/fio/ (see tests/data/report/record.py); nothing there is typed in by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"
REPORT_DATA = DATA / "report"
DISKSTATS = DATA / "diskstats"
# Recorded with ids 1 and 2, in this order, so a fresh history gives them the same ids.
DOCUMENT_NAMES = ("quick-a1-card", "standard-fast-card")


def load_document(name: str) -> dict[str, Any]:
    document = json.loads((REPORT_DATA / f"{name}.json").read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def read_golden(file_name: str) -> str:
    """A golden file as stored: newline="" keeps the CSV files' CRLF line ends."""
    with (REPORT_DATA / file_name).open(encoding="utf-8", newline="") as stream:
        return stream.read()
