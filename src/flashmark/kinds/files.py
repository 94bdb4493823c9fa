"""A result document from a file, for `flashmark import`: a recovery file or a `--json` output."""

from __future__ import annotations

import json
from pathlib import Path

from flashmark.errors import ResultFormatError, UsageError
from flashmark.history.entries import HistoryEntry
from flashmark.kinds.registry import entry_for


def read_document_file(path: Path) -> HistoryEntry:
    """A saved JSON document (a recovery file or `--json` output) checked for importing.

    Every problem is a UsageError naming the file: it is input the user gave.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else f"not UTF-8 text: {error}"
        raise UsageError(f"cannot read {path}: {reason}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path} is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise UsageError(
            f"{path} holds a JSON {type(document).__name__}, not one result document "
            "(a file of `export` holding several cannot be imported)"
        )
    try:
        return entry_for(document)
    except ResultFormatError as error:
        raise UsageError(f"{path}: {error}") from None
