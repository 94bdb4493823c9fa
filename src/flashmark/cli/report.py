"""`flashmark report ID [ID ...] [--reference SLUG ...] -o FILE`: the HTML report.

One self-contained page (flashmark.bench.render.html) comparing saved benchmark runs side by side,
with charts, and with the headline figures of published reference devices next to them. The
file is written like `export` writes (a temporary file renamed over FILE) and an existing FILE
is kept unless --force is given.
"""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.cli.export import STDOUT, check_output, write_atomically
from flashmark.cli.saved import RUN_ID, load_entries, render_entries
from flashmark.errors import UsageError
from flashmark.references import find_reference


@click.command("report")
@click.argument("result_ids", metavar="ID [ID ...]", type=RUN_ID, nargs=-1, required=True)
@click.option(
    "--reference",
    "reference_slugs",
    multiple=True,
    metavar="SLUG",
    help="Also show this reference device's published figures (not measured here); "
    "repeat for several. `flashmark references` lists the slugs.",
)
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="The HTML file to write; - writes to stdout.",
)
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@db_option
@debug_option
def report_command(
    result_ids: tuple[int, ...],
    reference_slugs: tuple[str, ...],
    output: str,
    force: bool,
    db_path: Path | None,
    debug: bool,
) -> None:
    """Write an HTML report of saved runs (IDs from `flashmark history`): verdicts, device
    and environment, headline bars, latency percentiles, bandwidth each second, the
    block-size sweep and the device's I/O, one series per run. One file, no external
    requests: it opens offline, on a phone, and prints.

    \b
    One run, and two cards as published elsewhere:
        flashmark report 3 -o card.html --reference seed002-sandisk-extreme-pro-a2-64gb \\
            --reference seed001-microsd
    Three runs side by side:
        flashmark report 3 4 5 -o cards.html
    """
    duplicates = sorted({i for i in result_ids if result_ids.count(i) > 1})
    if duplicates:
        raise UsageError(f"run {duplicates[0]} is given twice: give each ID once")
    path = None if output == STDOUT else Path(output)
    if path is not None:
        check_output(path, force)
    references = [find_reference(slug) for slug in dict.fromkeys(reference_slugs)]
    entries = load_entries(db_path, result_ids)
    page = render_entries(
        entries,
        "html",
        "`flashmark show ID` shows it; a report is made of `flashmark run` results",
        references,
    )
    if path is None:
        click.echo(page, nl=False)
        return
    write_atomically(path, page)
    what = f"{len(entries)} run{'s' * (len(entries) > 1)}"
    if references:
        what += f", {len(references)} published reference{'s' * (len(references) > 1)}"
    click.echo(f"wrote {path}: {what}", err=True)
