"""A monitor recording for people: what the device did, in iostat's terms, and a verdict; in the
terminal (rich), Markdown, CSV (one row per interval) and the HTML report, from the same rows."""

from __future__ import annotations

import csv
import io
import signal
from collections.abc import Sequence

from markupsafe import Markup
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from flashmark.markdown import bullets, code, escape_inline, facts, markdown_table
from flashmark.monitor.document import MonitorRecording
from flashmark.monitor.series import MonitorSample, MonitorSummary
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, section_of
from flashmark.spreadsheet import text_cell
from flashmark.units import format_rate, format_size


def describe_activity(device: str, summary: MonitorSummary) -> str:
    """What a device saw during a test or workload (/proc/diskstats), in one line."""
    return (
        f"{device}: {summary.iops:.0f} IOPS ({summary.write_iops:.0f} writes), "
        f"{format_rate(summary.write_bps)} written, {format_rate(summary.read_bps)} read; "
        f"{summary.verdict}"
    )


# The live view's header, over the columns of format_sample_line.
SAMPLE_HEADER = (
    f"{'Device':<12}{'tps':>9}{'r/s':>9}{'w/s':>9}{'kB_read/s':>12}{'kB_wrtn/s':>12}"
    f"{'kB_read':>10}{'kB_wrtn':>10}{'areq-sz':>9}{'aqu-sz':>8}{'%util':>7}"
)


def format_sample_line(device: str, s: MonitorSample) -> str:
    """One interval as `iostat -x` shows it (kB = 1024 bytes, areq-sz in kB)."""
    request = "" if s.avg_request_bytes is None else f"{s.avg_request_bytes / 1024:.1f}"
    queue = "" if s.avg_queue is None else f"{s.avg_queue:.2f}"
    util = "" if s.util_pct is None else f"{s.util_pct:.1f}"
    return (
        f"{device:<12}{s.iops:>9.2f}{s.read_iops:>9.2f}{s.write_iops:>9.2f}"
        f"{s.read_bps / 1024:>12.2f}{s.write_bps / 1024:>12.2f}"
        f"{s.read_bytes // 1024:>10}{s.write_bytes // 1024:>10}"
        f"{request:>9}{queue:>8}{util:>7}"
    )


def title_line(result: MonitorRecording) -> str:
    """'mmcblk0 while `dd ...` ran (3.0 s)'."""
    what = f"while `{' '.join(result.command)}` ran" if result.command else "while monitored"
    return f"{result.device} {what} ({result.summary.seconds:.1f} s)"


def summary_rows(result: MonitorRecording) -> list[tuple[str, str, str]]:
    """(figure, read, write) rows of the recording's summary: every view shows these."""
    summary = result.summary
    return [
        ("data", format_size(summary.read_bytes), format_size(summary.write_bytes)),
        ("requests", f"{summary.read_ios}", f"{summary.write_ios}"),
        ("IOPS (mean)", f"{summary.read_iops:.1f}", f"{summary.write_iops:.1f}"),
        (
            "IOPS (busiest interval)",
            _maybe(summary.peak_read_iops, "{:.1f}"),
            _maybe(summary.peak_write_iops, "{:.1f}"),
        ),
        ("rate (mean)", format_rate(summary.read_bps), format_rate(summary.write_bps)),
        (
            "mean request",
            _maybe(summary.avg_read_request_bytes, "{:.1f} KiB", 1024),
            _maybe(summary.avg_write_request_bytes, "{:.1f} KiB", 1024),
        ),
    ]


def summary_sentences(result: MonitorRecording) -> list[str]:
    """The mix, its pattern (bound by random writes or not) and how the command ended, a
    sentence each; the answer line (the verdict) ends the command."""
    summary = result.summary
    sentences = []
    if summary.write_share_ops is not None:
        busy = _maybe(summary.util_pct, "{:.0f}%")
        queue = _maybe(summary.avg_queue, "{:.2f}")
        sentences.append(
            f"Mix: {summary.write_share_ops:.0%} of requests and "
            f"{summary.write_share_bytes or 0:.0%} of bytes were writes; device busy "
            f"{busy}, mean queue {queue}."
        )
    sentences.append(f"Pattern: {summary.verdict}.")
    if result.exit_status is not None:
        sentences.append(_status_sentence(result.exit_status))
    return sentences


def render_recording(result: MonitorRecording) -> RenderableType:
    # The title is a line of its own, never wrapped: as the table's title rich wraps it to the
    # table's width, which the figures set, so a long command was cut at a different place on
    # every run.
    parts: list[RenderableType] = [Text(title_line(result), no_wrap=True, overflow="ignore")]
    table = Table()
    table.add_column("", justify="left")
    table.add_column("read", justify="right")
    table.add_column("write", justify="right")
    for row in summary_rows(result):
        table.add_row(*row)
    parts.append(table)
    parts += [Text(sentence) for sentence in summary_sentences(result)]
    return Group(*parts)


def recordings_to_markdown(results: Sequence[MonitorRecording]) -> str:
    """A section per recording: what was watched, the summary table, the verdict."""
    sections = []
    for result in results:
        number = f" #{result.id}" if result.id is not None else ""
        what = f"while {code(' '.join(result.command))} ran" if result.command else "monitored"
        title = f"{escape_inline(result.device)} {what} ({result.summary.seconds:.1f} s)"
        lines = [f"### flashmark monitor{number}: {title}", ""]
        lines += facts(
            [
                ("device", result.device),
                ("started", result.started_at),
                ("interval", f"{result.interval_s:g} s, {len(result.samples)} samples"),
            ]
        )
        lines += ["", *markdown_table(("", "read", "write"), summary_rows(result),
                                      (False, True, True))]  # fmt: skip
        for sentence in summary_sentences(result):  # a paragraph each
            lines += ["", escape_inline(sentence)]
        if result.warnings:
            lines += ["", *bullets([f"warning: {warning}" for warning in result.warnings])]
        sections.append("\n".join(lines) + "\n")
    return "\n".join(sections)


_CSV_COLUMNS = (
    "id", "device", "t_s", "interval_s", "read_ios", "write_ios", "read_bytes", "write_bytes",
    "read_iops", "write_iops", "read_bps", "write_bps", "avg_request_bytes", "read_await_ms",
    "write_await_ms", "avg_queue", "util_pct",
)  # fmt: skip


def recordings_to_csv(results: Sequence[MonitorRecording]) -> str:
    """One row per interval of each recording, in the stored units (bytes, bytes/s, ms, %)."""
    stream = io.StringIO()
    writer = csv.writer(stream)
    writer.writerow(_CSV_COLUMNS)
    for result in results:
        for sample in result.samples:
            writer.writerow(
                [
                    "" if result.id is None else result.id,
                    text_cell(result.device),
                    *("" if value is None else value
                      for value in (getattr(sample, name) for name in _CSV_COLUMNS[2:])),
                ]
            )  # fmt: skip
    return stream.getvalue()


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


def _maybe(value: float | None, pattern: str, divisor: float = 1.0) -> str:
    return "-" if value is None else pattern.format(value / divisor)


def _status_sentence(status: int) -> str:
    """How the command ended; a signal as a shell reports it (128 + its number)."""
    if status >= 0:
        return f"The command exited with status {status}."
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = f"signal {-status}"
    return f"The command was killed by {name} (flashmark exits {128 - status}, as a shell does)."
