"""Markdown that a forum renders as meant, and that reads as a table where it is not rendered.

Every kind's Markdown (`show --format md`, `export`) is made of these pieces: text escaped where
Markdown would see emphasis, code or the end of a table cell (a result may come from another
machine: its paths and names are data), and GitHub-flavoured pipe tables padded so that the
raw text lines up. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def escape_inline(text: str) -> str:
    """Text where Markdown would see emphasis or code: the loose marker `*`, `_` in notes."""
    return re.sub(r"([\\`*_])", r"\\\1", " ".join(text.split()))


def escape_cell(text: str) -> str:
    """A table cell: also `|`, which would end the cell (line breaks are already gone)."""
    return escape_inline(text).replace("|", "\\|")


def code(text: str) -> str:
    """Inline code (paths): fenced with one backtick more than the longest run in the text."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padding = " " if "`" in (text[:1], text[-1:]) else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]
) -> list[str]:
    """Lines of a padded pipe table; `right[i]` right-aligns column i (figures)."""
    cells = [[escape_cell(cell) for cell in row] for row in (header, *rows)]
    widths = [max(3, *(len(row[i]) for row in cells)) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        padded = (
            cell.rjust(width) if align else cell.ljust(width)
            for cell, width, align in zip(row, widths, right, strict=True)
        )
        return "| " + " | ".join(padded) + " |"

    rule = "| " + " | ".join(
        "-" * (width - 1) + ":" if align else "-" * width
        for width, align in zip(widths, right, strict=True)
    )
    return [line(cells[0]), rule + " |", *(line(row) for row in cells[1:])]


def bullets(items: Sequence[str]) -> list[str]:
    return [f"- {escape_inline(item)}" for item in items]


def fenced(lines: Sequence[str]) -> list[str]:
    """Lines shown as they are (a terminal's summary), in a code fence longer than any run of
    backticks inside them, so that no text can end the fence early."""
    longest = max((len(run) for line in lines for run in re.findall("`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *lines, fence]
