"""Presenting results across kinds: the exporter registry (Markdown, CSV, JSON, HTML), the HTML
report's page, comparisons of runs and published references, and the tables of the history and
of the reference data set. Names load when first used: rich, pygal and Jinja2 are the heavy
part of flashmark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.lazy import face_names, lazy_face

if TYPE_CHECKING:
    from flashmark.report.compare import build_comparison as build_comparison
    from flashmark.report.compare import comparison_to_document as comparison_to_document
    from flashmark.report.compare_views import comparison_to_csv as comparison_to_csv
    from flashmark.report.compare_views import comparison_to_markdown as comparison_to_markdown
    from flashmark.report.compare_views import render_comparison as render_comparison
    from flashmark.report.exporters import SavedResult as SavedResult
    from flashmark.report.exporters import exporter as exporter
    from flashmark.report.exporters import formats as formats
    from flashmark.report.exporters import suffix_formats as suffix_formats
    from flashmark.report.history_table import render_history as render_history
    from flashmark.report.references_table import reference_tables as reference_tables

_NAMES = {
    ".compare": ("build_comparison", "comparison_to_document"),
    ".compare_views": ("comparison_to_csv", "comparison_to_markdown", "render_comparison"),
    ".exporters": ("SavedResult", "exporter", "formats", "suffix_formats"),
    ".history_table": ("render_history",),
    ".references_table": ("reference_tables",),
}
__getattr__ = lazy_face(__name__, _NAMES)
__all__ = face_names(_NAMES)
