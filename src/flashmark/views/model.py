"""A result as people read it, in no format yet: a title, a verdict, and blocks of facts,
preformatted lines, tables, sentences, headings and notes, plus the rows of its CSV table.

Every kind builds one `View` per result in one function; the writers (terminal, Markdown,
CSV) turn views into their format, so a kind never writes a format itself. A block may be
meant for the terminal only (what `flashmark show` adds on a screen: a bold title, a
per-phase table) or for the documents only (Markdown, HTML: the facts a terminal already
printed above the result); `shown` says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from flashmark.result_kind import LegendKey

# Where a block appears: everywhere, only on the terminal, only in the documents (Markdown).
Shown = Literal["everywhere", "terminal", "documents"]
# How a line or a row reads: "" plain, a verdict's outcome, or set back (dim) / set off (strong).
Tone = Literal["", "pass", "fail", "uncertain", "dim", "strong"]
# A CSV cell: text (guarded against spreadsheet formulas), a figure, or None (empty).
Cell = str | int | float | None


@dataclass(frozen=True)
class Code:
    """Text in a title that is shown as code (a command): in backticks that no text inside can
    end (Markdown), as it is on the terminal."""

    text: str


# A title: plain text, or plain text and code in turn.
Title = str | tuple[str | Code, ...]


@dataclass(frozen=True)
class Span:
    """Part of a table cell in a tone of its own (a verdict in its colour)."""

    text: str
    tone: Tone = ""


# A table cell: text, or spans of text in their tones.
CellText = str | tuple[Span, ...]


def plain(text: Title | CellText) -> str:
    """The text of a title or a cell without its code marks and tones."""
    if isinstance(text, str):
        return text
    return "".join(part if isinstance(part, str) else part.text for part in text)


@dataclass(frozen=True)
class Fact:
    """A labelled fact: "device", "/dev/sdb". A `literal` fact is flashmark's own words and
    figures (settings, versions), written in Markdown as they are rather than escaped."""

    label: str
    text: Title
    tone: Tone = ""
    shown: Shown = "everywhere"
    literal: bool = False


@dataclass(frozen=True)
class Facts:
    """Facts, one a line: a two-column grid on the terminal (under its `title`, if any), a list
    in Markdown."""

    rows: tuple[Fact, ...]
    shown: Shown = "everywhere"
    title: str = ""

    @classmethod
    def titled(cls, title: str, rows: Iterable[tuple[str, str]]) -> Facts:
        """Plain (label, text) rows under `title`."""
        return cls(tuple(Fact(label, text) for label, text in rows), title=title)


@dataclass(frozen=True)
class Lines:
    """Lines shown as they are, aligned by their own spacing (a code block in Markdown)."""

    lines: tuple[str, ...]
    shown: Shown = "everywhere"


@dataclass(frozen=True)
class Sentence:
    """A paragraph of text; one that must not `wrap` on the terminal runs past its edge."""

    text: str
    tone: Tone = ""
    shown: Shown = "everywhere"
    wrap: bool = True


@dataclass(frozen=True)
class Heading:
    """What the blocks after it are, with a `note` on what they mean: bold in the documents."""

    text: str
    note: str = ""
    shown: Shown = "everywhere"


@dataclass(frozen=True)
class Notes:
    """Remarks under a result: "note: ..." lines (`label`, in their `tone`) on the terminal, a
    bullet list in Markdown."""

    items: tuple[str, ...]
    shown: Shown = "everywhere"
    label: str = "note"
    tone: Tone = "dim"


@dataclass(frozen=True)
class Column:
    """A table's column: figures (`numeric`) are right-aligned; `colour` is the series colour
    its heading wears in HTML (a run's, as in the charts)."""

    name: str
    numeric: bool = False
    colour: str = ""


@dataclass(frozen=True)
class Row:
    cells: tuple[CellText, ...]
    tone: Tone = ""


@dataclass(frozen=True)
class Table:
    """A table of text cells; `title` is written above it on the terminal, `edge` draws its
    outer frame there; `padded` lines up its columns in the Markdown text (a long table of
    figures is left unpadded); `caption` is a footnote under it; `stack` sets its cells one under
    another on a narrow screen (HTML; None: when more than one column holds words)."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    title: str = ""
    edge: bool = True
    padded: bool = True
    shown: Shown = "everywhere"
    caption: str = ""
    stack: bool | None = None


@dataclass(frozen=True)
class Figure:
    """A drawn chart: its SVG (text in it escaped by the chart library), its legend in the
    order of its series, and a caption under it."""

    svg: str
    legend: tuple[LegendKey, ...]
    caption: str = ""


@dataclass(frozen=True)
class Figures:
    """Charts side by side: only the HTML page draws them."""

    figures: tuple[Figure, ...]
    shown: Shown = "documents"


@dataclass(frozen=True)
class Badges:
    """Verdicts in a word each, in their tones: a row of coloured badges in HTML."""

    items: tuple[Span, ...]
    shown: Shown = "documents"


Block = Facts | Lines | Sentence | Heading | Notes | Table | Figures | Badges


@dataclass(frozen=True)
class View:
    """One result: `title` heads it in the documents, `verdict` (its answer, set in bold) follows
    the title there; `badge` the verdict in a word ("fake", "pass") and `tone` how it reads;
    `blocks` in order; `records` its rows of the kind's CSV table."""

    title: Title
    blocks: tuple[Block, ...]
    verdict: str = ""
    badge: str = ""
    tone: Tone = ""
    records: tuple[tuple[Cell, ...], ...] = ()


def rows_of(cells: Iterable[Sequence[str]]) -> tuple[Row, ...]:
    """Plain rows of text cells."""
    return tuple(Row(tuple(row)) for row in cells)


@dataclass(frozen=True)
class Part:
    """A kind's part of the HTML page: its anchor and heading, the sentence under the heading
    (HTML: it may hold <code>), the noun of its subtitle ("capacity probe"), the prefix of its
    cards' anchors ("capacity" for "capacity-3") and what a result without an id is called."""

    anchor: str
    title: str
    intro: str
    noun: str
    card_prefix: str
    unnamed: str
