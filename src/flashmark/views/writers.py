"""A kind's terminal, Markdown and CSV renderers, all made from its one view function: what a
kind gives `ResultKind` as `terminal`, `markdown` and `csv`. rich is imported when a terminal
view is drawn, so listing the kinds stays cheap."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from flashmark.views.csv_table import views_to_csv
from flashmark.views.markdown import views_to_markdown
from flashmark.views.model import View

if TYPE_CHECKING:
    from rich.console import RenderableType

R = TypeVar("R")


@dataclass(frozen=True)
class ViewWriters(Generic[R]):
    """`view` makes a result's view; `csv_columns` are the kind's CSV header."""

    view: Callable[[R], View]
    csv_columns: tuple[str, ...]

    def terminal(self, result: R) -> RenderableType:
        from flashmark.views.terminal import blocks_to_terminal

        return blocks_to_terminal(self.view(result).blocks)

    def markdown(self, results: Sequence[R]) -> str:
        return views_to_markdown([self.view(result) for result in results])

    def csv(self, results: Sequence[R]) -> str:
        return views_to_csv(self.csv_columns, [self.view(result) for result in results])
