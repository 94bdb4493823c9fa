"""Views on the terminal (rich): facts as a two-column grid, lines as they are, tables with
their figures right-aligned, a tone as a colour."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from flashmark.views.model import (
    Badges,
    Block,
    CellText,
    Facts,
    Figures,
    Heading,
    Lines,
    Notes,
    Sentence,
    Table,
    Tone,
    plain,
)

STYLES: dict[Tone, str] = {
    "": "",
    "pass": "green",
    "fail": "red",
    "uncertain": "yellow",
    "dim": "dim",
    "strong": "bold",
}


def blocks_to_terminal(blocks: Sequence[Block]) -> Group:
    """The blocks meant for a terminal, one under the other."""
    parts: list[RenderableType] = []
    for block in blocks:
        if block.shown != "documents":
            parts += _block(block)
    return Group(*parts)


def _block(block: Block) -> list[RenderableType]:
    if isinstance(block, Facts):
        grid = RichTable(
            title=block.title or None,
            title_justify="left",
            show_header=False,
            box=None,
            pad_edge=False,
        )
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(overflow="fold")
        for fact in block.rows:
            if fact.shown != "documents":
                # plain text as rich reads a cell (its markup too), as the terminal always has
                text = plain(fact.text)
                grid.add_row(fact.label, Text(text, style=STYLES[fact.tone]) if fact.tone else text)
        return [grid]
    if isinstance(block, Lines):
        return [Text("\n".join(block.lines))]
    if isinstance(block, Sentence):
        if block.wrap:
            return [Text(block.text, style=STYLES[block.tone])]
        return [Text(block.text, style=STYLES[block.tone], no_wrap=True, overflow="ignore")]
    if isinstance(block, Heading):
        return [Text(" ".join(filter(None, (block.text, block.note))), style="bold")]
    if isinstance(block, Notes):
        return [Text(f"{block.label}: {note}", style=STYLES[block.tone]) for note in block.items]
    if isinstance(block, Figures | Badges):
        return []  # drawn on the HTML page only
    return [_table(block)]


def _table(block: Table) -> RichTable:
    table = RichTable(
        title=block.title or None,
        title_justify="left",
        header_style="bold",
        show_edge=block.edge,
        caption=block.caption or None,
        caption_justify="left",
    )
    for column in block.columns:
        table.add_column(column.name, justify="right" if column.numeric else "left")
    for row in block.rows:
        table.add_row(*map(_cell, row.cells), style=STYLES[row.tone] or None)
    return table


def _cell(cell: CellText) -> RenderableType:
    # plain text as rich reads a cell (its markup too), as the terminal always has
    if isinstance(cell, str):
        return cell
    return Text.assemble(*((span.text, STYLES[span.tone]) for span in cell))
