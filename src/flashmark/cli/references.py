"""`flashmark references`: list the reference data set (figures published in the seeds).

Every table and document this prints says that these are published figures, not measured
here, and shows each figure with the unit its source printed; `--json` adds the values
normalised to flashmark's units (B/s, IOPS, ns, s) and every note.
"""

from __future__ import annotations

import re

import click
from rich import box
from rich.table import Table
from rich.text import Text

from flashmark.cli.output import print_json, stdout_console
from flashmark.references import (
    PUBLISHED_LABEL,
    Measurement,
    MediaKind,
    ReferenceDevice,
    references_document,
    select_references,
)

# Which column of the table a metric's figure goes in.
_COLUMN = {
    "read_iops": "read",
    "read_bw_bytes": "read",
    "write_iops": "write",
    "write_bw_bytes": "write",
    "lat_mean_ns": "latency / time",
    "seconds": "latency / time",
}


def _cell(measurement: Measurement) -> Text:
    """The figure as printed, with its printed unit: "42,53 MB/s", "19.1k IOPS", "DNF"."""
    figure = measurement.published
    if figure.value is None:
        return Text(figure.text, style="dim")
    text = figure.text.split("=", 1)[-1]  # fio fragments: "IOPS=422", "avg=2359.23"
    if text.endswith(figure.unit):  # "1690KiB/s": the unit is shown once, after a space
        text = text[: -len(figure.unit)]
    cell = Text(f"{text} {figure.unit}")
    if measurement.loose:
        cell.append("*", style="yellow")
    if measurement.suspect:
        cell.append("!", style="bold red")
    return cell


def _group_table(devices: list[ReferenceDevice]) -> Table:
    """One source and setup: a row per device and test, figures as published."""
    first = devices[0]
    setup = first.setup
    direct = {True: "direct I/O", False: "buffered I/O", None: "direct I/O not stated"}
    version = f" {setup.tool_version}" if setup.tool_version else ""
    table = Table(
        # The source as its text names it (never the seed's file name) and its tool: seed 003
        # has several setups, which the caption tells apart.
        title=f"{first.source.citation}, {setup.tool} ({PUBLISHED_LABEL})",
        caption=f"host: {setup.host_board}; tool: {setup.tool}{version}; "
        f"{direct[setup.direct_io]}; blocks: {setup.block_sizes}; depth: {setup.queue_depth}",
        title_justify="left",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("reference", overflow="fold")
    table.add_column("comparable test", overflow="fold")
    for name in ("read", "write", "latency / time"):
        table.add_column(name, justify="right")
    for device in devices:
        rows: dict[str, dict[str, Text]] = {}
        row_tests: dict[str, list[str]] = {}
        for measurement in device.measurements:
            test = measurement.tests[0] if measurement.tests else "-"
            # seq-read-16M and seq-write-16M share a row: read and write are columns.
            row_key = re.sub(r"-(?:read|write)(?=-|$)", "", test)
            if test not in row_tests.setdefault(row_key, []):
                row_tests[row_key].append(test)
            column = _COLUMN[measurement.metric]
            cells = rows.setdefault(row_key, {})
            # Two figures for one test and direction (seed 000's bandwidth and IOPS): one cell.
            cells[column] = (
                Text.assemble(cells[column], "  ", _cell(measurement))
                if column in cells
                else _cell(measurement)
            )
        details = ", ".join(
            part
            for part in (device.media_kind.value, device.rating, device.production_date)
            if part
        )
        label = Text(device.slug, style="bold")
        label.append(f"\n{device.name} ({details})", style="")
        for index, (row_key, cells) in enumerate(rows.items()):
            table.add_row(
                label if index == 0 else Text(""),
                " / ".join(row_tests[row_key]),
                *(cells.get(name, Text("")) for name in ("read", "write", "latency / time")),
                end_section=index == len(rows) - 1,
            )
    return table


@click.command("references")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print JSON on stdout.")
@click.option(
    "--kind",
    type=click.Choice([kind.value for kind in MediaKind]),
    default=None,
    help="Only this kind of media.",
)
@click.option(
    "--source",
    default=None,
    metavar="N",
    help="Only this source, by the number in its references' names (seed002-... is source 2): "
    "2 or 002.",
)
def references_command(as_json: bool, kind: str | None, source: str | None) -> None:
    """List published figures to compare with (write-ups and forum posts), not measured
    here, each with its source, host board, tool, method and the unit as published.

    \b
    All of them, as tables:
        flashmark references
    The eMMC figures of source 2, as JSON with values normalised to B/s, IOPS, ns and s:
        flashmark references --kind emmc --source 002 --json
    """
    devices = select_references(kind=kind, source=source)
    if as_json:
        print_json(references_document(devices))
        return
    console = stdout_console()
    if not devices:
        console.print(f"No reference matches ({PUBLISHED_LABEL}).")
        return
    groups: dict[tuple[str, str], list[ReferenceDevice]] = {}
    for device in devices:
        groups.setdefault((device.source.seed, device.setup.name), []).append(device)
    for group in groups.values():
        console.print(_group_table(group))
        console.print()
    console.print(
        f"{len(devices)} references: {PUBLISHED_LABEL}. Figures keep the text and unit their "
        "source printed (a decimal comma stays a comma; MB = 10^6 B, MiB = 2^20 B).\n"
        "* loose comparison with the flashmark test named in the row\n"
        "! suspect figure, kept as published\n"
        "`flashmark references --json` has every value normalised (B/s, IOPS, ns, s), the "
        "method and the notes; see docs/references.md."
    )
