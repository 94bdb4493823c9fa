"""Saved results of any kinds -> one self-contained HTML page. Pure.

Styles, charts and script are inline and a Content-Security-Policy (`default-src 'none'`)
forbids anything else, so a stray reference fails the browser test. Each kind gives its section
(result_kind.HtmlSection); this module puts them in one page with a title, a link to every part,
what has no data, and, with several kinds, each card's results side by side (docs/reports.md).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from flashmark import __version__
from flashmark.kinds.by_name import kind_named
from flashmark.references.records import ReferenceDevice
from flashmark.result_kind import HtmlEntry, HtmlSection, ResultKind
from flashmark.views.html import page_templates

# Nothing may be fetched: no scripts but the page's own (by its hash), no images, fonts,
# frames or connections. Inline styles stay allowed: the SVG charts carry their own.
_CSP = (
    "default-src 'none'; "
    "script-src 'sha256-{hash}'; "
    "style-src 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'"
)
CARDS_ANCHOR = "cards"


@dataclass(frozen=True)
class KindResults:
    """Results of one kind, in the order asked, for one section of the page."""

    kind: ResultKind[Any]
    results: tuple[Any, ...]


@dataclass(frozen=True)
class OverviewEntry:
    """One result in a card's overview: its kind's name, its entry, and its answer in one line
    (the kind's `summary`, the same line its command ended with)."""

    kind: str
    entry: HtmlEntry
    answer: str


@dataclass(frozen=True)
class CardGroup:
    """One card in the page's overview and the results that name it, of every kind."""

    name: str  # the card as people read it; "" for the results that name no card
    entries: tuple[OverviewEntry, ...]


def render_html_report(runs: Sequence[Any], references: Sequence[ReferenceDevice] = ()) -> str:
    """The page of benchmark runs alone (and published references): the results service's."""
    if not runs:
        raise ValueError("an HTML report needs at least one run")
    return render_report([KindResults(kind_named("benchmark"), tuple(runs))], references)


def render_report(
    sections: Sequence[KindResults], references: Sequence[ReferenceDevice] = ()
) -> str:
    """One page of every kind's results: each section as its kind draws it, grouped by card in
    an overview when there is more than one kind; `references` go to the kinds that show
    published figures (benchmark runs)."""
    if not any(section.results for section in sections):
        raise ValueError("an HTML report needs at least one result")
    drawn: list[tuple[KindResults, HtmlSection]] = []
    for section in sections:
        if not section.results:
            continue
        if section.kind.html is None:
            raise ValueError(f"{section.kind.name} results have no HTML section")
        drawn.append((section, section.kind.html(section.results, references)))
    parts = [part for _, html in drawn for part in html.parts]
    groups = _card_groups(drawn) if len(drawn) > 1 else ()
    anchors = [part.anchor for part in parts] + ([CARDS_ANCHOR] if groups else [])
    if len(anchors) != len(set(anchors)):
        raise ValueError(f"two parts of the page share an anchor: {anchors}")
    entries = [entry for _, html in drawn for entry in html.entries]
    script = _asset("report.js").strip()
    page = {
        "csp": _CSP.format(hash=_script_hash(script)),
        "version": __version__,
        # Legend-short names: full paths of three runs made a heading of ten lines on a phone.
        "title": "flashmark report: " + ", ".join(entry.short for entry in entries),
        "subtitle": "; ".join(html.subtitle for _, html in drawn if html.subtitle),
        "css": Markup(_asset("report.css")),
        "script": Markup(script),
        "chart_count": sum(html.charts for _, html in drawn),
        "cards_anchor": CARDS_ANCHOR,
        "groups": groups,
        "parts": parts,
        "not_shown": [sentence for _, html in drawn for sentence in html.not_shown],
        "made_from": ", ".join(
            f"{entry.name} ({section.kind.name})"
            for section, html in drawn
            for entry in html.entries
        ),
        "footnotes": [html.footnote for _, html in drawn if html.footnote],
    }
    return _template().render(page=page)


def _card_groups(drawn: Sequence[tuple[KindResults, HtmlSection]]) -> tuple[CardGroup, ...]:
    """The results by the card they name, cards in the order first named; the results that
    name none last, together."""
    named: dict[str, tuple[str, list[OverviewEntry]]] = {}
    unnamed: list[OverviewEntry] = []
    for section, html in drawn:
        kind = section.kind
        for result, entry in zip(section.results, html.entries, strict=True):
            listed = OverviewEntry(kind.name, entry, kind.summary(result))
            card = kind.card(result) if kind.card is not None else None
            if card is None:
                unnamed.append(listed)
                continue
            named.setdefault(card.key, (card.name, []))[1].append(listed)
    groups = [CardGroup(name, tuple(members)) for name, members in named.values()]
    if unnamed:
        groups.append(CardGroup("", tuple(unnamed)))
    return tuple(groups)


@cache
def _environment() -> jinja2.Environment:
    return page_templates("flashmark.report")  # the kinds' parts come marked safe


def _template() -> jinja2.Template:
    return _environment().get_template("page.html.j2")


@cache
def _asset(name: str) -> str:
    return resources.files("flashmark.report").joinpath("templates", name).read_text("utf-8")


def _script_hash(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
