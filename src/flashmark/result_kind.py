"""What every kind of result provides: its document, its place in the history, its renderers.

A kind is one frozen `ResultKind` built in its own package (`flashmark.surface.kind`, ...) and
listed once in `flashmark.kinds.registry`. The commands that read results (show, export,
report, import, upload) look a result's kind up there and never branch on it.

Renderers import what they draw with when they are called (rich tables, pygal, Jinja2), so that
listing the kinds costs no more than importing their result types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from rich.console import RenderableType

    from flashmark.references import ReferenceDevice

R = TypeVar("R")


@dataclass(frozen=True)
class Listing:
    """How the history lists a result: what was measured (a folder, a device) and a label
    (a profile, a command, a verdict)."""

    target: str
    label: str


@dataclass(frozen=True)
class ResultKind(Generic[R]):
    """One kind of result and everything the commands that read results need of it.

    `name` is the history's kind and the word users see ("benchmark", "surface"); `schema` the
    NAME/VERSION its documents carry. `from_document` raises ResultFormatError for a document
    it cannot read whole. A format a kind has no renderer for is refused by name (`show
    --format md` of a kind without Markdown says which formats it has).
    """

    name: str
    schema: str
    to_document: Callable[[R], dict[str, Any]]
    from_document: Callable[[Mapping[str, Any]], R]
    listing: Callable[[R], Listing]
    terminal: Callable[[R], RenderableType]
    markdown: Callable[[Sequence[R]], str] | None = None
    csv: Callable[[Sequence[R]], str] | None = None
    html: Callable[[Sequence[R], Sequence[ReferenceDevice]], str] | None = None
    saved: bool = True  # kept in the history; False: printed only (probe, clean)

    def formats(self) -> tuple[str, ...]:
        """The file formats this kind can be written as (json always)."""
        named = {"md": self.markdown, "csv": self.csv, "html": self.html}
        return ("json", *(name for name, render in named.items() if render is not None))
