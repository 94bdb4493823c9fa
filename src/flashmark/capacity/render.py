"""A capacity probe in words: its verdict sentence and its facts, in the terminal (rich),
Markdown, CSV and the HTML report, from the same rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from markupsafe import Markup
from rich.console import Group
from rich.table import Table
from rich.text import Text

from flashmark.capacity.result import CapacityResult
from flashmark.markdown import escape_inline, facts
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, section_of
from flashmark.spreadsheet import text_cell


def _size(value: int | None) -> str:
    if value is None:
        return "unknown"
    return f"{value:,} bytes ({value / 1e9:.2f} GB, {value / 2**30:.2f} GiB)"


_BEHAVIOUR_TEXT = {
    "wraps": "addresses beyond it wrap onto the start (data written there overwrites data "
    "already stored)",
    "zeros": "writes beyond it are dropped and read back as zeros",
    "erased": "writes beyond it are dropped and read back as 0xFF",
    "drops": "writes beyond it are dropped (the old content reads back)",
    "corrupts": "blocks beyond it read back as something else than was written",
}


def verdict_sentence(result: CapacityResult) -> str:
    if result.verdict == "genuine":
        return (
            f"genuine: every probed block up to the claimed {result.claimed_bytes / 1e9:.2f} GB "
            "held its data"
        )
    behaviours = "; ".join(_BEHAVIOUR_TEXT.get(b, b) for b in result.behaviour)
    if result.real_bytes is None:
        return f"{result.verdict}: real size not pinned down; {behaviours}"
    share = result.real_bytes / result.claimed_bytes * 100
    return (
        f"{result.verdict}: stores {result.real_bytes / 1e9:.2f} GB of the "
        f"{result.claimed_bytes / 1e9:.2f} GB it claims ({share:.1f}%); {behaviours}"
    )


def capacity_rows(result: CapacityResult) -> list[tuple[str, str]]:
    """The probe's facts as (label, text): every view (terminal, Markdown, HTML) shows these."""
    evidence = result.evidence
    layout = evidence.layout
    rows = [
        ("device", result.device),
        ("claims", _size(result.claimed_bytes)),
        ("real", f"{_size(result.real_bytes)}, exact to {result.granularity_bytes} bytes"),
        ("verdict", verdict_sentence(result)),
        (
            "method",
            f"{layout.get('ruler_marks', 0)} signature blocks every "
            f"{layout.get('ruler_step', 0) // 2**20} MiB and a "
            f"{layout.get('window_bytes', 0) // 2**20} MiB window at the end, read back one "
            f"block at a time after a {layout.get('flush_bytes', 0) // 2**20} MiB cache flush; "
            f"{len(evidence.steps)} follow-up test(s); {evidence.blocks_written} blocks written, "
            f"{evidence.blocks_read} read, {result.duration_s:.1f} s",
        ),
        ("evidence", _evidence(result)),
    ]
    if result.backup is not None:
        rows.append(
            (
                "restored",
                f"{result.backup.ranges} range(s), {result.backup.bytes:,} bytes, read back "
                "and checked",
            )
        )
    else:
        rows.append(("restored", "nothing (--destructive: the probed blocks were overwritten)"))
    rows += [("note", note) for note in result.notes]
    return rows


def render_capacity(result: CapacityResult) -> Group:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold")
    style = {"genuine": "green", "fake": "bold red"}.get(result.verdict, "yellow")
    for label, text in capacity_rows(result):
        table.add_row(label, Text(text, style=style) if label == "verdict" else text)
    return Group(Text(f"capacity of {result.device}", style="bold"), table)


def capacities_to_markdown(results: Sequence[CapacityResult]) -> str:
    """A section per probe: the verdict in bold, then every fact of the terminal's table."""
    sections = []
    for result in results:
        number = f" #{result.id}" if result.id is not None else ""
        lines = [
            f"### flashmark capacity{number}: {escape_inline(result.device)}, "
            f"{escape_inline(result.started_at)}",
            "",
            f"**{escape_inline(verdict_sentence(result))}**",
            "",
            *facts([row for row in capacity_rows(result) if row[0] != "verdict"]),
        ]
        sections.append("\n".join(lines) + "\n")
    return "\n".join(sections)


_CSV_COLUMNS = (
    "id", "started_at", "device", "card_cid", "verdict", "claimed_bytes", "real_bytes",
    "granularity_bytes", "behaviour", "destructive", "blocks_written", "blocks_read",
    "anomalies_total", "duration_s",
)  # fmt: skip


def capacities_to_csv(results: Sequence[CapacityResult]) -> str:
    """One row per probe, in the stored units (bytes, seconds)."""
    stream = io.StringIO()
    writer = csv.writer(stream)
    writer.writerow(_CSV_COLUMNS)
    for r in results:
        writer.writerow(
            [
                "" if r.id is None else r.id, r.started_at, text_cell(r.device),
                r.card_cid or "", r.verdict, r.claimed_bytes,
                "" if r.real_bytes is None else r.real_bytes, r.granularity_bytes,
                " ".join(r.behaviour), "yes" if r.destructive else "no", r.evidence.blocks_written,
                r.evidence.blocks_read, r.evidence.anomalies_total, round(r.duration_s, 3),
            ]
        )  # fmt: skip
    return stream.getvalue()


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


def _evidence(result: CapacityResult) -> str:
    evidence = result.evidence
    if not evidence.anomalies_total:
        return "every block came back as written"
    first = evidence.anomalies[0]
    what = (
        f"the data written at byte {first.origin}"
        if first.origin is not None
        else f"{first.found.value}"
    )
    return (
        f"{evidence.anomalies_total} block(s) did not come back as written; the first, at byte "
        f"{first.offset}, read back {what}"
    )
