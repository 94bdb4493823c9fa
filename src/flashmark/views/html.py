"""Views as HTML: a kind's section of the report is a card per result (its title, its verdict
as a badge and a sentence, then its blocks meant for documents); a part of a page is its blocks
alone. One set of Jinja macros (templates/view.html.j2) writes both, in the classes of
report/templates/report.css."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup, escape

from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, legend_html, section_of
from flashmark.views.model import Block, Code, Part, Title, View

_BADGE_CLASS = {"pass": "pass", "fail": "fail"}


@dataclass(frozen=True)
class Shown:
    """One result on the page: its view, its id in the history (None: not saved) and its
    target as a legend names it."""

    view: View
    id: int | None
    target: str


@dataclass(frozen=True)
class Card:
    """A result's card: its view, its anchor, its title as HTML, its badge's class, and the
    colour its series wear in the page's charts (a swatch by its title), if any."""

    view: View
    anchor: str
    heading: Markup
    badge_class: str = "uncertain"
    colour: str = ""


def views_section(part: Part, shown: Sequence[Shown]) -> HtmlSection:
    cards, entries = [], []
    for index, result in enumerate(shown):
        name = f"#{result.id}" if result.id is not None else f"{part.unnamed} {index + 1}"
        anchor = (
            f"{part.card_prefix}-{result.id}"
            if result.id is not None
            else f"{part.card_prefix}-n{index + 1}"
        )
        view = result.view
        cards.append(
            Card(view, anchor, title_html(view.title), _BADGE_CLASS.get(view.tone, "uncertain"))
        )
        entries.append(HtmlEntry(name, f"{name} {result.target}", anchor))
    body = cards_html(Markup(part.intro), cards)
    return section_of(HtmlPart(part.anchor, part.title, body), entries, part.noun)


def cards_html(intro: str, cards: Sequence[Card]) -> Markup:
    """A note, then a card per result."""
    return Markup(_macros().section(intro, cards))


def blocks_html(blocks: Sequence[Block]) -> Markup:
    """Blocks as a part of a page, without a card around them."""
    return Markup(_macros().blocks(blocks))


def title_html(title: Title) -> Markup:
    """A title's plain parts escaped, its code in <code>."""
    parts = (title,) if isinstance(title, str) else title
    return Markup("").join(
        Markup("<code>{}</code>").format(part.text) if isinstance(part, Code) else escape(part)
        for part in parts
    )


def page_templates(package: str, *, keep_trailing_newline: bool = True) -> jinja2.Environment:
    """The templates in `package`'s templates folder, as every HTML page's are read: every
    value is text unless marked safe, a misspelt name fails (the tests, not the page), and a
    block's tags leave no blank lines."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=keep_trailing_newline,
    )


@cache
def _macros() -> Any:
    environment = page_templates("flashmark.views")
    environment.filters.update(title_html=title_html, legend_html=legend_html)
    return environment.get_template("view.html.j2").module
