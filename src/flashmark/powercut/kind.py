"""The power-cut test as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.powercut.result import (
    HISTORY_KIND,
    POWERCUT_SCHEMA,
    PowercutResult,
    from_document,
    to_document,
)
from flashmark.result_kind import Listing, ResultKind

if TYPE_CHECKING:
    from rich.console import RenderableType


def _terminal(result: PowercutResult) -> RenderableType:
    from flashmark.powercut.render import render_powercut

    return render_powercut(result)


def _markdown(results: Sequence[PowercutResult]) -> str:
    from flashmark.powercut.render import powercuts_to_markdown

    return powercuts_to_markdown(results)


def _csv(results: Sequence[PowercutResult]) -> str:
    from flashmark.powercut.render import powercuts_to_csv

    return powercuts_to_csv(results)


POWERCUT: ResultKind[PowercutResult] = ResultKind(
    name=HISTORY_KIND,
    schema=POWERCUT_SCHEMA,
    to_document=to_document,
    from_document=from_document,
    listing=lambda result: Listing(result.target.path, result.verdict),
    terminal=_terminal,
    markdown=_markdown,
    csv=_csv,
)
