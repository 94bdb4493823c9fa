"""The capacity probe as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.capacity.result import CAPACITY_DOCUMENT, CAPACITY_SCHEMA, CapacityResult
from flashmark.result_kind import Listing, ResultKind

if TYPE_CHECKING:
    from rich.console import RenderableType


def _terminal(result: CapacityResult) -> RenderableType:
    from flashmark.capacity.render import render_capacity

    return render_capacity(result)


CAPACITY: ResultKind[CapacityResult] = ResultKind(
    name="capacity",
    schema=CAPACITY_SCHEMA,
    to_document=CAPACITY_DOCUMENT.write,
    from_document=CAPACITY_DOCUMENT.read,
    listing=lambda result: Listing(result.device, result.verdict),
    terminal=_terminal,
)
