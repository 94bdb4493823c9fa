"""`flashmark report ID [ID ...] [--reference SLUG ...] -o FILE`: the HTML report; and
`flashmark report --campaign NAME --server URL -o FILE`: a campaign of a results service.
One self-contained page of saved results of any kinds (flashmark.report.html), or a campaign's
page or CSV (flashmark.server.campaign_page), written as `export` writes (a temporary file
renamed over FILE, which is kept unless --force).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.cli.export import output_path, write_output
from flashmark.cli.saved import RUN_ID, load_entries, render_entries
from flashmark.errors import UsageError
from flashmark.references.loader import find_reference
from flashmark.server.campaign_export import campaign_file


@click.command("report")
@click.argument("result_ids", metavar="ID [ID ...]", type=RUN_ID, nargs=-1)
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
@click.option(
    "--campaign",
    metavar="NAME",
    help="Instead of saved runs: this campaign of the service --server names (a fleet's "
    "boards, `flashmark fleet run`), as HTML, or as CSV when FILE ends in .csv.",
)
@click.option("--server", metavar="URL", help="The results service of --campaign.")
@db_option
@debug_option
def report_command(
    result_ids: tuple[int, ...],
    reference_slugs: tuple[str, ...],
    output: str,
    force: bool,
    campaign: str | None,
    server: str | None,
    db_path: Path | None,
) -> None:
    """Write an HTML report of saved results of any kinds (IDs from `flashmark history`), the
    results of one card together.

    Benchmark runs: verdicts, device and environment, headline bars, latency percentiles,
    bandwidth each second, the block-size sweep and the device's I/O, one series per run.
    Surface scans, capacity probes, power-cut tests, workload runs and monitor recordings get
    their own sections; results that name the same card (its CID, else its serial number) are
    listed together first. One file, no external requests: it opens offline, on a phone, and
    prints.

    \b
    One run, and two cards as published elsewhere:
        flashmark report 3 -o card.html --reference seed002-sandisk-extreme-pro-a2-64gb \\
            --reference seed001-microsd
    Three runs side by side:
        flashmark report 3 4 5 -o cards.html
    A card's runs and its surface scan:
        flashmark report 3 4 7 -o card.html
    A fleet's campaign, every board beside the fleet's median (and as CSV):
        flashmark report --campaign lab-2026-11 --server https://results.example -o lab.html
    """
    if campaign is not None or server is not None:
        _campaign_report(campaign, server, result_ids, reference_slugs, output, force)
        return
    if not result_ids:
        raise UsageError("name the runs to report (IDs from `flashmark history`), or --campaign")
    duplicates = sorted({i for i in result_ids if result_ids.count(i) > 1})
    if duplicates:
        raise UsageError(f"run {duplicates[0]} is given twice: give each ID once")
    path = output_path(output, force)
    references = [find_reference(slug) for slug in dict.fromkeys(reference_slugs)]
    entries = load_entries(db_path, result_ids)
    page = render_entries(entries, "html", "`flashmark show ID` shows it", references)
    kinds = Counter(entry.kind for entry in entries)
    what = ", ".join(f"{count} {kind} result{'s' * (count > 1)}" for kind, count in kinds.items())
    if references:
        what += f", {len(references)} published reference{'s' * (len(references) > 1)}"
    write_output(path, page, f": {what}")


def _campaign_report(
    campaign: str | None,
    server: str | None,
    result_ids: tuple[int, ...],
    reference_slugs: tuple[str, ...],
    output: str,
    force: bool,
) -> None:
    """The campaign's page (or CSV) as the service has it now."""
    if campaign is None or server is None:
        raise UsageError("--campaign NAME and --server URL go together")
    if result_ids or reference_slugs:
        raise UsageError("a campaign's report is made of the campaign alone: no IDs or --reference")
    path = output_path(output, force)
    found = campaign_file(
        server, campaign, as_csv=path is not None and path.suffix.lower() == ".csv"
    )
    write_output(path, found.text, f": campaign {campaign}, {found.boards} boards")
