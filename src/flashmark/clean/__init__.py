"""`flashmark clean`: remove what killed flashmark runs left, whose owner is gone (their names
say who made them: flashmark.system.leftovers).

    result = run_clean(CleanRequest("/media/card", dry_run=True))   # CleanResult
    notes = clean_at_start("/media/card")   # what a measuring command says when it starts

run.py does it, result.py is the document (`flashmark.clean/1`), render.py the terminal view,
kind.py its contract (printed only). Names load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.clean.kind import CLEAN as CLEAN
    from flashmark.clean.result import CLEAN_SCHEMA as CLEAN_SCHEMA
    from flashmark.clean.result import CleanResult as CleanResult
    from flashmark.clean.run import CleanRequest as CleanRequest
    from flashmark.clean.run import clean_at_start as clean_at_start
    from flashmark.clean.run import clean_failure as clean_failure
    from flashmark.clean.run import run_clean as run_clean

_NAMES = {
    ".kind": ("CLEAN",),
    ".result": ("CLEAN_SCHEMA", "CleanResult"),
    ".run": ("CleanRequest", "clean_at_start", "clean_failure", "run_clean"),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
