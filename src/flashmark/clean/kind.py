"""What `flashmark clean` did as a kind of result (flashmark.kinds): printed, never saved."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.clean.result import CLEAN_DOCUMENT, CleanResult
from flashmark.result_kind import Listing, ResultKind

if TYPE_CHECKING:
    from rich.console import RenderableType


def _terminal(result: CleanResult) -> RenderableType:
    from flashmark.clean.render import render_clean

    return render_clean(result)


def _summary(result: CleanResult) -> str:
    from flashmark.clean.render import clean_summary

    return clean_summary(result)


def _listing(result: CleanResult) -> Listing:
    return Listing(result.folders[0] if result.folders else "", "dry run" if result.dry_run else "")


CLEAN: ResultKind[CleanResult] = ResultKind(
    name="clean",
    document=CLEAN_DOCUMENT,
    listing=_listing,
    terminal=_terminal,
    summary=_summary,
    saved=False,
)
