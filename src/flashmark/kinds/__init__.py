"""The kinds of result flashmark keeps and shows, listed once (kinds.registry): each kind's
contract (flashmark.result_kind.ResultKind) is built in its own package. A document's kind by
its schema, the entry it is kept as, a result file read for `import` (files.py), and a
document as text. Names load when first used: listing the kinds imports every kind's types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.codec import to_text as to_text
    from flashmark.kinds.files import read_document_files as read_document_files
    from flashmark.kinds.registry import entry_for as entry_for
    from flashmark.kinds.registry import kind_named as kind_named
    from flashmark.kinds.registry import kind_of as kind_of
    from flashmark.result_kind import ResultKind as ResultKind

_NAMES = {
    "flashmark.codec": ("to_text",),
    "flashmark.result_kind": ("ResultKind",),
    ".files": ("read_document_files",),
    ".registry": ("entry_for", "kind_named", "kind_of"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
