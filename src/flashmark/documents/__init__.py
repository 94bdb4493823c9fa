"""Every document flashmark writes or reads, in one place: one codec, one list of schemas with
their versions, and the mapping of each kind of result to and from its document.

    schemas.py    the name/version of every document, with its history
    codec.py      dataclasses <-> JSON-ready values; JSON text as flashmark writes it
    result.py     Run <-> flashmark.result/1 (`run --json`, the history's benchmarks)
    monitor.py    a monitor recording -> flashmark.monitor/1
    workloads.py  workload results -> flashmark.workloads/1
    entries.py    a document as the history lists it (kind, target, label; id once stored)
    kinds.py      which documents the history keeps, as what; reading one back for import
    cards.py      which card (by CID) a document measured: the history's CID index

`from flashmark.documents import run_to_document` works for every name below. The modules load
when a name is first used: the data types (probe, monitor series) use the codec and the schemas
without loading the result mapping, which is built from them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flashmark.bench.document import document_to_run, run_to_document
    from flashmark.codec import compact, decode, encode, to_text
    from flashmark.documents import schemas
    from flashmark.documents.kinds import (
        KINDS,
        entry_for,
        read_document_file,
        workload_results,
    )
    from flashmark.history.entries import HistoryEntry, StoredResult
    from flashmark.monitor.document import monitor_document
    from flashmark.workloads.document import workload_document

_HOMES = {
    "schemas": "flashmark.documents.schemas",
    "compact": "flashmark.codec",
    "decode": "flashmark.codec",
    "encode": "flashmark.codec",
    "to_text": "flashmark.codec",
    "KINDS": "flashmark.documents.kinds",
    "HistoryEntry": "flashmark.history.entries",
    "StoredResult": "flashmark.history.entries",
    "entry_for": "flashmark.documents.kinds",
    "read_document_file": "flashmark.documents.kinds",
    "workload_results": "flashmark.documents.kinds",
    "monitor_document": "flashmark.monitor.document",
    "document_to_run": "flashmark.bench.document",
    "run_to_document": "flashmark.bench.document",
    "workload_document": "flashmark.workloads.document",
}


def __getattr__(name: str) -> Any:
    if name == "schemas":
        return importlib.import_module(_HOMES[name])
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "KINDS",
    "HistoryEntry",
    "StoredResult",
    "compact",
    "decode",
    "document_to_run",
    "encode",
    "entry_for",
    "monitor_document",
    "read_document_file",
    "run_to_document",
    "schemas",
    "to_text",
    "workload_document",
    "workload_results",
]
