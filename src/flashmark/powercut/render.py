"""The power-cut tests' part of the HTML report, from the rows of their view."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from flashmark.powercut.result import PowercutResult, powercut_summary
from flashmark.powercut.view import COLUMNS, describe_lines, row_of
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, section_of


def powercuts_section(results: Sequence[PowercutResult]) -> HtmlSection:
    """The power-cut tests' part of the HTML report: a card per test, its verdict first, what
    was tested, and a row per cycle (a cycle that lost acknowledged writes marked)."""
    body = Markup(
        '<p class="note">Each cycle writes, flushes and cuts the power; a flushed record that '
        "is not found intact afterwards was lost by the card after it said it was stored.</p>"
        '<div class="cards">{}</div>'
    ).format(Markup("").join(_card(result, index) for index, result in enumerate(results)))
    entries = [_entry(result, index) for index, result in enumerate(results)]
    return section_of(HtmlPart("powercut", "Power-cut tests", body), entries, "power-cut test")


def _entry(result: PowercutResult, index: int) -> HtmlEntry:
    name = _name(result, index)
    return HtmlEntry(name, f"{name} {result.target.path}", _anchor(result, index))


def _name(result: PowercutResult, index: int) -> str:
    return f"#{result.id}" if result.id is not None else f"power-cut test {index + 1}"


def _anchor(result: PowercutResult, index: int) -> str:
    return f"powercut-{result.id}" if result.id is not None else f"powercut-n{index + 1}"


_VERDICT_CLASS = {"pass": "pass", "fail": "fail", "uncertain": "uncertain"}


def _cell(tag: str, column: str, text: str) -> Markup:
    """A cell of the cycles' table: figures right-aligned, the device's state as text."""
    css = "" if column == "device" else ' class="num"'
    return Markup("<{}{}>{}</{}>").format(Markup(tag), Markup(css), text, Markup(tag))


def _card(result: PowercutResult, index: int) -> Markup:
    head = Markup("").join(_cell("th", name, name) for name in COLUMNS)
    rows = Markup("").join(
        Markup('<tr class="{}"><th>{}</th>{}</tr>').format(
            "lost" if cycle.lost_acknowledged else "kept",
            cells[0],
            Markup("").join(
                _cell("td", name, cell) for name, cell in zip(COLUMNS[1:], cells[1:], strict=True)
            ),
        )
        for cycle in result.cycles
        for cells in (row_of(cycle),)
    )
    facts = Markup("").join(
        Markup("<tr><th>{}</th><td>{}</td></tr>").format(*line.split(None, 1))
        for line in describe_lines(result)
    )
    table = (
        Markup(
            '<div class="table-wrap"><table><caption>Cycles</caption><thead><tr>{}</tr></thead>'
            "<tbody>{}</tbody></table></div>"
        ).format(head, rows)
        if result.cycles
        else Markup("")
    )
    notes = Markup("").join(Markup("<li>{}</li>").format(note) for note in result.notes)
    return Markup(
        '<article class="card powercut" id="{}"><h3>Power-cut test {}</h3>'
        '<div class="badges"><span class="badge {}">{}</span></div><p>{}</p>'
        '<div class="table-wrap"><table class="stack"><tbody>{}</tbody></table></div>{}{}'
        "</article>"
    ).format(
        _anchor(result, index),
        f"{_name(result, index)}: {result.target.path}",
        _VERDICT_CLASS.get(result.verdict, "na"),
        result.verdict,
        powercut_summary(result),
        facts,
        table,
        Markup('<ul class="note">{}</ul>').format(notes) if result.notes else Markup(""),
    )
