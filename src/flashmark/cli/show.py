"""`flashmark show ID`: one saved result, as a table or in a file format."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import db_option, debug_option, json_option
from flashmark.cli.output import print_json, print_verdict, stdout_console, verdict_line
from flashmark.cli.saved import FILE_FORMATS, RUN_ID, load_entries, render_entries
from flashmark.errors import UsageError
from flashmark.kinds.by_name import kind_named


@click.command("show")
@click.argument("result_id", metavar="ID", type=RUN_ID)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(["table", *FILE_FORMATS]),
    default=None,
    help="table (the terminal view, default), json (the saved document), md (Markdown for a "
    "forum post), csv (a table: one row per test, slice, cycle or interval) or html (a "
    "self-contained page).",
)
@json_option("Same as --format json.")
@db_option
@debug_option
def show_command(
    result_id: int, format_name: str | None, as_json: bool, db_path: Path | None
) -> None:
    """Show one saved result by its ID (from `flashmark history`).

    \b
    As a Markdown table to paste in a forum post:
        flashmark show 3 --format md
    Several results into one file: `flashmark export`.
    """
    if as_json and format_name not in (None, "json"):
        raise UsageError(f"--json is --format json; it cannot go with --format {format_name}")
    format_name = "json" if as_json else (format_name or "table")
    (entry,) = load_entries(db_path, [result_id])
    if format_name == "json":
        print_json(dict(entry.document))
    elif format_name != "table":
        click.echo(render_entries([entry], format_name, "use --format json or table"), nl=False)
    else:
        kind = kind_named(entry.kind)
        result = kind.from_document(entry.document)
        console = stdout_console()
        console.print(kind.terminal(result))
        print_verdict(console, verdict_line(kind, result))
