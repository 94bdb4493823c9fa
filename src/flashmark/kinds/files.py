"""A result document from a file, for `flashmark import`: a recovery file or a `--json` output."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from flashmark.errors import ResultFormatError, UsageError
from flashmark.history.entries import HistoryEntry
from flashmark.kinds.registry import DOCUMENT_KINDS, entry_for
from flashmark.kinds.strict import DocumentInvalid, check_document, parse_json

# The largest document `import` reads. The largest flashmark writes is a surface scan of
# 65,536 slices (--slices' maximum), about 20 MB; reading JSON takes several times its size in
# memory (Python objects), so a limit near it keeps an import of a hostile file within a few
# hundred MB, even on a small board.
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024


def read_document_files(path: Path) -> tuple[HistoryEntry, ...]:
    """The saved JSON documents of a file (a recovery file, `--json` output, or `export`'s
    JSON of several results: a list of them), each checked for importing.

    Only a regular file is read (a FIFO would block forever, /dev/zero never ends: refused
    before anything is read), and at most MAX_DOCUMENT_BYTES + 1 bytes of it. Every problem is
    a UsageError naming the file (and the list's item): it is input the user gave.
    """
    try:
        text = _read_limited(path).decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"cannot read {path}: not UTF-8 text: {error}") from None
    try:
        document = parse_json(text)
    except DocumentInvalid as error:
        raise UsageError(f"{path} is not JSON: {error}") from None
    if isinstance(document, dict):
        return (_entry(document, str(path)),)
    if not isinstance(document, list):
        raise UsageError(
            f"{path} holds a JSON {type(document).__name__}, not a result document or a list "
            "of them"
        )
    if not document:
        raise UsageError(f"{path} holds an empty list: no result document to import")
    return tuple(
        _entry(item, f"{path} (item {number} of {len(document)})")
        for number, item in enumerate(document, 1)
    )


def _entry(document: object, where: str) -> HistoryEntry:
    if not isinstance(document, dict):
        raise UsageError(f"{where} is a JSON {type(document).__name__}, not a result document")
    try:
        # The same check as an upload to the results service: what imports can be shown,
        # reported and exported. Unknown keys are dropped (kinds.strict says why).
        schema = document.get("schema")
        if isinstance(schema, str) and schema in DOCUMENT_KINDS:
            document = check_document(document, DOCUMENT_KINDS, own=True).document
        return entry_for(document)
    except (DocumentInvalid, ResultFormatError) as error:
        raise UsageError(f"{where}: {error}") from None


def _read_limited(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_DOCUMENT_BYTES; UsageError otherwise."""
    try:
        status = os.stat(path)  # refused before it is opened: opening a device may act
        if not stat.S_ISREG(status.st_mode):
            raise UsageError(_not_regular(path, status.st_mode))
        # O_NONBLOCK: had it become a FIFO since, opening it must not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        status = os.fstat(fd)  # what was opened, whatever the name points at now
        if not stat.S_ISREG(status.st_mode):
            raise UsageError(_not_regular(path, status.st_mode))
        if status.st_size > MAX_DOCUMENT_BYTES:
            raise UsageError(_too_big(path, status.st_size))
        chunks: list[bytes] = []
        left = MAX_DOCUMENT_BYTES + 1  # one byte more tells a file that grew past the limit
        while left > 0:
            try:
                chunk = os.read(fd, min(left, 1 << 20))
            except OSError as error:
                raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > MAX_DOCUMENT_BYTES:
            raise UsageError(_too_big(path, len(data)))
        return data
    finally:
        os.close(fd)


def _not_regular(path: Path, mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    what = next((name for test, name in kinds if test(mode)), "not a regular file")
    return f"{path} is {what}: import reads result files (regular files) only"


def _too_big(path: Path, size: int) -> str:
    return (
        f"{path} holds {size:,} bytes or more: larger than any result document "
        f"({MAX_DOCUMENT_BYTES // (1 << 20)} MiB at most), so it is not one"
    )
