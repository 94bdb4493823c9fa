"""The monitor recordings' part of the HTML report, from the rows of their view."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from flashmark.monitor.document import MonitorRecording
from flashmark.monitor.view import summary_rows, summary_sentences, title_line
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, section_of


def recordings_section(results: Sequence[MonitorRecording]) -> HtmlSection:
    """The recordings' part of the HTML report: a card per recording with its summary."""
    cards = []
    for index, result in enumerate(results):
        rows = Markup("").join(
            Markup('<tr><th>{}</th><td class="num">{}</td><td class="num">{}</td></tr>').format(
                *row
            )
            for row in summary_rows(result)
        )
        sentences = Markup("").join(
            Markup("<p>{}</p>").format(sentence) for sentence in summary_sentences(result)
        )
        warnings = Markup("").join(
            Markup('<li class="warning">warning: {}</li>').format(warning)
            for warning in result.warnings
        )
        cards.append(
            Markup(
                '<article class="card" id="{}"><h3>{}</h3><div class="table-wrap"><table>'
                '<thead><tr><th></th><th class="num">read</th><th class="num">write</th></tr>'
                "</thead><tbody>{}</tbody></table></div>{}{}</article>"
            ).format(
                _anchor(result, index),
                f"{_name(result, index)}: {title_line(result)}",
                rows,
                sentences,
                Markup("<ul>{}</ul>").format(warnings) if warnings else Markup(""),
            )
        )
    body = Markup(
        '<p class="note">What a device did while a command ran (/proc/diskstats, like '
        "<code>iostat -x</code>; MB = 10^6 bytes, KiB = 1024 bytes).</p>"
        '<div class="cards">{}</div>'
    ).format(Markup("").join(cards))
    entries = [
        HtmlEntry(
            _name(result, index), f"{_name(result, index)} {result.device}", _anchor(result, index)
        )
        for index, result in enumerate(results)
    ]
    return section_of(
        HtmlPart("monitor", "Device activity recordings", body),
        entries,
        "device activity recording",
    )


def _name(result: MonitorRecording, index: int) -> str:
    return f"#{result.id}" if result.id is not None else f"recording {index + 1}"


def _anchor(result: MonitorRecording, index: int) -> str:
    return f"monitor-{result.id}" if result.id is not None else f"monitor-n{index + 1}"
