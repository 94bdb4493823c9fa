"""Views in Markdown: a section per result, its title a heading, its verdict in bold, its
blocks one paragraph each (text escaped by flashmark.markdown)."""

from __future__ import annotations

from collections.abc import Sequence

from flashmark.markdown import (
    bullets,
    code,
    escape_cell,
    escape_inline,
    fenced,
    markdown_table,
)
from flashmark.views.model import (
    Badges,
    Block,
    Code,
    Facts,
    Figures,
    Heading,
    Lines,
    Notes,
    Sentence,
    Title,
    View,
    plain,
)


def views_to_markdown(views: Sequence[View]) -> str:
    """The sections of `views`, an empty line between two."""
    return "\n".join(_section(view) for view in views)


def _section(view: View) -> str:
    paragraphs = [[f"### {_title(view.title)}"]] if view.title else []
    if view.verdict:
        paragraphs.append([f"**{escape_inline(view.verdict)}**"])
    paragraphs += [
        lines for block in view.blocks if block.shown != "terminal" if (lines := _block(block))
    ]
    return "\n\n".join("\n".join(lines) for lines in paragraphs) + "\n"


def _title(title: Title, *, literal: bool = False) -> str:
    """Plain parts escaped (the blanks at their ends kept) unless `literal`, code in
    backticks."""
    if isinstance(title, str):
        return title if literal else escape_inline(title)
    return "".join(
        code(part.text)
        if isinstance(part, Code)
        else part
        if literal
        else " " * part[:1].isspace() + escape_inline(part) + " " * part[-1:].isspace()
        for part in title
    )


def _block(block: Block) -> list[str]:
    if isinstance(block, Facts):
        return [
            f"- {f.label}: {_title(f.text, literal=f.literal)}"
            for f in block.rows
            if f.shown != "terminal"
        ]
    if isinstance(block, Lines):
        return fenced(block.lines)
    if isinstance(block, Sentence):
        return [escape_inline(block.text)]
    if isinstance(block, Heading):
        note = f" {escape_inline(block.note)}" if block.note else ""
        return [f"**{escape_inline(block.text)}**{note}"]
    if isinstance(block, Notes):
        return bullets(block.items)
    if isinstance(block, Figures | Badges):
        return []  # drawn on the HTML page only
    header = [column.name for column in block.columns]
    right = [column.numeric for column in block.columns]
    rows = [[plain(cell) for cell in row.cells] for row in block.rows]
    caption = ["", escape_inline(block.caption)] if block.caption else []
    if block.padded:
        return markdown_table(header, rows, right) + caption
    return [
        _unpadded(header),
        _unpadded(["---:" if numeric else "---" for numeric in right]),
        *(_unpadded([escape_cell(cell) for cell in row]) for row in rows),
        *caption,
    ]


def _unpadded(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
