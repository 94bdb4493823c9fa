"""The surface scan as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.result_kind import Listing, ResultKind
from flashmark.surface.result import SURFACE_SCHEMA, SurfaceResult, from_document, to_document

if TYPE_CHECKING:
    from rich.console import RenderableType

    from flashmark.references import ReferenceDevice


def _terminal(scan: SurfaceResult) -> RenderableType:
    from flashmark.surface.render import render_surface

    return render_surface(scan)


def _markdown(scans: Sequence[SurfaceResult]) -> str:
    from flashmark.surface.render import surfaces_to_markdown

    return surfaces_to_markdown(scans)


def _csv(scans: Sequence[SurfaceResult]) -> str:
    from flashmark.surface.render import surfaces_to_csv

    return surfaces_to_csv(scans)


def _html(scans: Sequence[SurfaceResult], references: Sequence[ReferenceDevice]) -> str:
    from flashmark.surface.html import render_surface_html

    return render_surface_html(scans)


SURFACE: ResultKind[SurfaceResult] = ResultKind(
    name="surface",
    schema=SURFACE_SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda scan: Listing(scan.target.given, scan.label),
    terminal=_terminal,
    markdown=_markdown,
    csv=_csv,
    html=_html,
)
