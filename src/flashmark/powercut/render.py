"""A power-cut result for people: the terminal (rich), Markdown, CSV and an HTML section.

Plain functions of the result, each with one signature, so that a registry of result kinds can
take them as they are. The verdict line comes first everywhere: it is what the user came for.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from markupsafe import Markup
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flashmark.markdown import bullets, escape_inline, fenced, markdown_table
from flashmark.powercut.result import RAW, CycleResult, PowercutResult, powercut_summary
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, section_of
from flashmark.spreadsheet import text_cell
from flashmark.units import format_size

_COLUMNS = (
    "cycle",
    "cut at",
    "written",
    "flushed",
    "durable",
    "lost after flush",
    "lost unflushed",
    "torn",
    "corrupt",
    "device",
    "back after",
)


def describe_lines(result: PowercutResult) -> list[str]:
    """The lines under the verdict: what was tested, how, and what the kernel said."""
    target, settings = result.target, result.settings
    what = (
        f"a journal of {format_size(settings.record_bytes)} records on the device"
        if settings.mode == RAW
        else f"files of {format_size(settings.record_bytes)} on a fresh {settings.mode}"
    )
    flush = f"a flush every {settings.flush_every} records" + (
        " (the last one written with FUA)" if settings.fua else ""
    )
    cache = target.write_cache or "unknown"
    fua = {True: "yes", False: "no", None: "unknown"}[target.fua]
    lines = [
        f"device   {target.path}" + (f": {target.device}" if target.device else ""),
        f"identity {target.identity or 'none (recognised by path and capacity)'}",
        f"kernel   write cache: {cache}; FUA: {fua}; logical block {target.logical_block_bytes}",
        f"method   {what}, {flush}; power cut {settings.cut_min_s:g}-{settings.cut_max_s:g} s "
        f"after each cycle's first write",
        f"recorder {settings.recorder}",
        f"cycles   {len(result.cycles)} of {settings.cycles}, {result.duration_s:.1f} s; "
        f"flushed bytes lost: {result.flushed_bytes_lost:,}",
    ]
    if result.stopped:
        lines.append(f"stopped  {result.stopped}")
    return lines


def render_powercut(result: PowercutResult) -> RenderableType:
    parts: list[RenderableType] = [
        Text("\n".join(describe_lines(result))),
    ]
    if result.cycles:
        table = Table(header_style="bold")
        for name in _COLUMNS:
            table.add_column(name, justify="left" if name == "device" else "right")
        for cycle in result.cycles:
            row = _row(cycle)
            style = "red" if cycle.lost_acknowledged else None
            table.add_row(*row, style=style)
        parts.append(table)
    fsck = [cycle for cycle in result.cycles if cycle.fsck is not None]
    for cycle in fsck:
        assert cycle.fsck is not None
        problems = "; ".join(cycle.fsck.problems[:3])
        parts.append(
            Text(
                f"fsck after cut {cycle.number}: {cycle.fsck.state} "
                f"({cycle.fsck.tool} exit {cycle.fsck.exit_status})"
                + (f": {problems}" if problems else ""),
                style="" if cycle.fsck.state == "clean" else "red",
            )
        )
    for note in result.notes:
        parts.append(Text(f"note: {note}", style="dim"))
    return Group(*parts)


def _row(cycle: CycleResult) -> list[str]:
    return [
        str(cycle.number),
        _seconds(cycle.cut_at_s),
        f"{cycle.records_written:,}",
        f"{cycle.records_flushed:,}",
        f"{cycle.durable:,}",
        f"{cycle.lost_after_flush:,}" + (" (reordered)" if cycle.reordered else ""),
        f"{cycle.lost_unflushed:,}",
        f"{cycle.torn:,}",
        f"{cycle.corrupt:,}",
        cycle.device + ("" if cycle.fsck is None else f", fsck {cycle.fsck.state}"),
        _seconds(cycle.back_after_s),
    ]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def powercuts_to_markdown(results: Sequence[PowercutResult]) -> str:
    out: list[str] = []
    for result in results:
        title = f"Power-cut test {result.id}" if result.id else "Power-cut test"
        out.append(f"### {title}: {escape_inline(result.target.path)}")
        out.append("")
        out.append(f"**verdict: {escape_inline(powercut_summary(result))}**")
        out.append("")
        out.extend(fenced(describe_lines(result)))
        out.append("")
        if result.cycles:
            right = [column != "device" for column in _COLUMNS]
            out.extend(markdown_table(_COLUMNS, [_row(cycle) for cycle in result.cycles], right))
            out.append("")
        out.extend(bullets(result.notes))
        if result.notes:
            out.append("")
    return "\n".join(out)


_CSV_FIELDS = (
    "id",
    "device",
    "identity",
    "run",
    "mode",
    "verdict",
    "cycle",
    "cut_at_s",
    "off_command_s",
    "records_written",
    "records_in_flight",
    "records_flushed",
    "durable",
    "lost_after_flush",
    "lost_unflushed",
    "torn",
    "corrupt",
    "flushed_bytes_lost",
    "reordered",
    "device_state",
    "back_after_s",
    "fsck",
)


def powercuts_to_csv(results: Sequence[PowercutResult]) -> str:
    """One row per cycle of each result (counts of records, bytes, seconds)."""
    stream = io.StringIO()
    writer = csv.writer(stream)
    writer.writerow(_CSV_FIELDS)
    for result in results:
        for cycle in result.cycles:
            writer.writerow(
                [
                    result.id or "",
                    text_cell(result.target.path),
                    text_cell(result.target.identity or ""),
                    result.settings.run,
                    result.settings.mode,
                    result.verdict,
                    cycle.number,
                    "" if cycle.cut_at_s is None else cycle.cut_at_s,
                    "" if cycle.off_command_s is None else cycle.off_command_s,
                    cycle.records_written,
                    cycle.records_in_flight,
                    cycle.records_flushed,
                    cycle.durable,
                    cycle.lost_after_flush,
                    cycle.lost_unflushed,
                    cycle.torn,
                    cycle.corrupt,
                    cycle.flushed_bytes_lost,
                    str(cycle.reordered).lower(),
                    cycle.device,
                    "" if cycle.back_after_s is None else cycle.back_after_s,
                    "" if cycle.fsck is None else cycle.fsck.state,
                ]
            )
    return stream.getvalue()


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
    head = Markup("").join(_cell("th", name, name) for name in _COLUMNS)
    rows = Markup("").join(
        Markup('<tr class="{}"><th>{}</th>{}</tr>').format(
            "lost" if cycle.lost_acknowledged else "kept",
            cells[0],
            Markup("").join(
                _cell("td", name, cell) for name, cell in zip(_COLUMNS[1:], cells[1:], strict=True)
            ),
        )
        for cycle in result.cycles
        for cells in (_row(cycle),)
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
