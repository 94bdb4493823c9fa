"""The reference data set: figures published in the seed documents, not measured by flashmark.

Each record (ReferenceDevice) keeps its source, host board, tool and method, and every figure
as printed (text and unit) next to its value in flashmark's units. Comparisons must label these
as published figures. See docs/references.md for the sources, units and caveats.
"""

from __future__ import annotations

from flashmark.references.loader import (
    DOCUMENT_SCHEMA,
    PUBLISHED_LABEL,
    find_reference,
    load_references,
    references_document,
    select_references,
)
from flashmark.references.records import (
    Figure,
    Measurement,
    MediaKind,
    ReferenceDevice,
    ReferenceValue,
    Setup,
    Source,
)

__all__ = [
    "DOCUMENT_SCHEMA",
    "PUBLISHED_LABEL",
    "Figure",
    "Measurement",
    "MediaKind",
    "ReferenceDevice",
    "ReferenceValue",
    "Setup",
    "Source",
    "find_reference",
    "load_references",
    "references_document",
    "select_references",
]
