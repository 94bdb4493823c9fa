"""`flashmark compare ID ID ... [--reference SLUG ...]`: runs side by side, with ratios."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.cli.output import print_json, stdout_console
from flashmark.cli.saved import RUN_ID, benchmark_runs, load_entries
from flashmark.errors import UsageError
from flashmark.references.loader import find_reference
from flashmark.report.compare import build_comparison, comparison_to_document
from flashmark.report.compare_views import (
    comparison_to_csv,
    comparison_to_markdown,
    render_comparison,
)


@click.command("compare")
@click.argument("result_ids", metavar="ID [ID ...]", type=RUN_ID, nargs=-1, required=True)
@click.option(
    "--reference",
    "slugs",
    multiple=True,
    metavar="SLUG",
    help="Add a published reference as a column (repeatable; `flashmark references` "
    "lists the slugs). Labelled as published figures, not measured here.",
)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(["table", "md", "csv", "json"]),
    default="table",
    show_default=True,
    help="table (terminal), md (Markdown), csv or json.",
)
@db_option
@debug_option
def compare_command(
    result_ids: tuple[int, ...],
    slugs: tuple[str, ...],
    format_name: str,
    db_path: Path | None,
) -> None:
    """Compare saved runs (IDs from `flashmark history`) and published references side by
    side: sequential MB/s, 4K random IOPS at depth 1 and 32, p99 latencies, grades and
    workload times, each with its ratio to the first run.

    \b
        flashmark compare 3 4
        flashmark compare 3 --reference seed002-sandisk-extreme-pro-a2-64gb
        flashmark compare 3 4 --format md
    """
    references = [find_reference(slug) for slug in slugs]
    if len(result_ids) + len(references) < 2:
        raise UsageError(
            "compare needs two columns or more: give a second ID or a --reference SLUG"
        )
    runs = benchmark_runs(
        load_entries(db_path, result_ids), "compare takes benchmark runs (`flashmark history`)"
    )
    comparison = build_comparison(runs, references)
    if format_name == "json":
        print_json(comparison_to_document(comparison))
    elif format_name == "md":
        click.echo(comparison_to_markdown(comparison), nl=False)
    elif format_name == "csv":
        click.echo(comparison_to_csv(comparison), nl=False)
    else:
        stdout_console().print(render_comparison(comparison))
