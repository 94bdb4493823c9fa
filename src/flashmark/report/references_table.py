"""The reference data set as tables: one per source and setup, a row per device and test, every
figure with the text and unit its source printed (`flashmark references`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich import box
from rich.table import Table
from rich.text import Text

from flashmark.references.loader import PUBLISHED_LABEL
from flashmark.references.records import Measurement, ReferenceDevice

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


def reference_tables(devices: Sequence[ReferenceDevice]) -> list[Table]:
    """A table per source and setup, in the order the devices come."""
    groups: dict[tuple[str, str], list[ReferenceDevice]] = {}
    for device in devices:
        groups.setdefault((device.source.seed, device.setup.name), []).append(device)
    return [_group_table(group) for group in groups.values()]
