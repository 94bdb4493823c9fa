"""`flashmark references`: list the reference data set (figures published in the seeds).

Every table and document this prints says that these are published figures, not measured
here, and shows each figure with the unit its source printed; `--json` adds the values
normalised to flashmark's units (B/s, IOPS, ns, s) and every note.
"""

from __future__ import annotations

import click

from flashmark.cli import json_option
from flashmark.cli.output import print_json, stdout_console
from flashmark.references.loader import PUBLISHED_LABEL, references_document, select_references
from flashmark.references.records import MediaKind
from flashmark.report.references_table import reference_tables


@click.command("references")
@json_option("Print JSON on stdout.")
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
    for table in reference_tables(devices):
        console.print(table)
        console.print()
    console.print(
        f"{len(devices)} references: {PUBLISHED_LABEL}. Figures keep the text and unit their "
        "source printed (a decimal comma stays a comma; MB = 10^6 B, MiB = 2^20 B).\n"
        "* loose comparison with the flashmark test named in the row\n"
        "! suspect figure, kept as published\n"
        "`flashmark references --json` has every value normalised (B/s, IOPS, ns, s), the "
        "method and the notes; see docs/references.md."
    )
