"""The capacity probes' part of the HTML report, from the rows of their view."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from flashmark.capacity.result import CapacityResult
from flashmark.capacity.view import capacity_rows, verdict_sentence
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, section_of

_VERDICT_CLASS = {"genuine": "pass", "fake": "fail"}


def capacities_section(results: Sequence[CapacityResult]) -> HtmlSection:
    """The probes' part of the HTML report: a card per probe, its verdict first."""
    cards = []
    for index, result in enumerate(results):
        rows = Markup("").join(
            Markup("<tr><th>{}</th><td>{}</td></tr>").format(label, text)
            for label, text in capacity_rows(result)
            if label != "verdict"
        )
        cards.append(
            Markup(
                '<article class="card" id="{}"><h3>{}</h3><div class="badges"><span '
                'class="badge {}">{}</span></div><p>{}</p><div class="table-wrap"><table '
                'class="stack"><tbody>{}</tbody></table></div></article>'
            ).format(
                _anchor(result, index),
                f"Capacity {_name(result, index)}: {result.device}",
                _VERDICT_CLASS.get(result.verdict, "uncertain"),
                result.verdict,
                verdict_sentence(result),
                rows,
            )
        )
    body = Markup(
        '<p class="note">Whether the device stores as much as it claims: signature blocks '
        "written across it and read back (GB = 10^9 bytes, GiB = 2^30 bytes).</p>"
        '<div class="cards">{}</div>'
    ).format(Markup("").join(cards))
    entries = [
        HtmlEntry(
            _name(result, index), f"{_name(result, index)} {result.device}", _anchor(result, index)
        )
        for index, result in enumerate(results)
    ]
    return section_of(HtmlPart("capacity", "Capacity probes", body), entries, "capacity probe")


def _name(result: CapacityResult, index: int) -> str:
    return f"#{result.id}" if result.id is not None else f"probe {index + 1}"


def _anchor(result: CapacityResult, index: int) -> str:
    return f"capacity-{result.id}" if result.id is not None else f"capacity-n{index + 1}"
