"""Every kind of result flashmark keeps, in one place: one line a kind; and the kinds it only
prints (`probe`, `clean`), whose JSON and terminal output go through the same tail.

`kind_of(document)` tells a document's kind by its schema, refusing a newer version of a known
kind by name (upgrade flashmark) and anything else as not a flashmark result. `entry_for`
reads a document whole, the same way whether a command saves it as it finishes or `flashmark
import` adds it later, so a result imported twice is recognised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flashmark.bench.probe_kind import PROBE
from flashmark.clean.kind import CLEAN
from flashmark.errors import ResultFormatError
from flashmark.history.entries import HistoryEntry
from flashmark.kinds.by_name import KIND_MODULES, kind_named
from flashmark.kinds.strict import DocumentKind
from flashmark.result_kind import ResultKind

# The saved kinds, in the order of kinds.by_name's table (the one list of them).
KINDS: tuple[ResultKind[Any], ...] = tuple(kind_named(name) for name in KIND_MODULES)
# Printed, never saved (`saved=False`): no history entry, file format or upload takes them.
PRINTED_KINDS: tuple[ResultKind[Any], ...] = (PROBE, CLEAN)

_BY_SCHEMA = {kind.schema: kind for kind in KINDS}
# How each kind is read and written back, for the check of every document that comes in
# (kinds.strict: `flashmark import`, and the results service's uploads).
DOCUMENT_KINDS = {
    kind.schema: DocumentKind(read=kind.from_document, write=kind.to_document) for kind in KINDS
}
def kind_of(document: Mapping[str, Any]) -> ResultKind[Any]:
    """The kind of a result document, by its schema; ResultFormatError for one this version
    does not read (another program's JSON, a newer schema, a malformed one)."""
    schema = document.get("schema")
    kind = _BY_SCHEMA.get(schema) if isinstance(schema, str) else None
    if kind is not None:
        return kind
    known = ", ".join(_BY_SCHEMA)
    name, _, version = str(schema).rpartition("/")
    if any(known_schema.rpartition("/")[0] == name for known_schema in _BY_SCHEMA):
        raise ResultFormatError(
            f"document schema {schema!r} is version {version}, newer than this flashmark "
            f"reads ({known}): upgrade flashmark"
        )
    raise ResultFormatError(
        f"not a flashmark result document: schema {schema!r} (the history keeps {known})"
    )


def entry_for(document: Mapping[str, Any]) -> HistoryEntry:
    """The entry a result document is kept as, after reading it whole (a malformed document is
    a ResultFormatError, never a half-kept result)."""
    kind = kind_of(document)
    listing = kind.listing(kind.from_document(document))
    return HistoryEntry(kind.name, listing.target, listing.label, document)
