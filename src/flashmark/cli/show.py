"""`flashmark show ID`: one saved result, as a table or in a file format."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.bench.document import document_to_run
from flashmark.bench.render.terminal import render_run, render_workloads
from flashmark.cli import db_option, debug_option
from flashmark.cli.monitor import render_summary
from flashmark.cli.output import print_json, stdout_console
from flashmark.cli.saved import FILE_FORMATS, RUN_ID, load_entries, render_entries
from flashmark.documents.kinds import workload_results
from flashmark.errors import UsageError
from flashmark.monitor import MonitorSummary


@click.command("show")
@click.argument("result_id", metavar="ID", type=RUN_ID)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(["table", *FILE_FORMATS]),
    default=None,
    help="table (the terminal view, default), json (the saved document), md (Markdown for a "
    "forum post), csv (one row per test) or html (a self-contained page).",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@db_option
@debug_option
def show_command(
    result_id: int, format_name: str | None, as_json: bool, db_path: Path | None, debug: bool
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
    elif entry.kind == "benchmark":
        stdout_console().print(render_run(document_to_run(dict(entry.document))))
    elif entry.kind == "monitor":
        document = dict(entry.document)
        render_summary(
            MonitorSummary.from_dict(document["summary"]),
            str(document["device"]),
            tuple(document.get("command") or ()),
            document.get("exit_status"),
        )
    elif entry.kind == "workload":
        stdout_console().print(render_workloads(workload_results(entry.document)))
    elif entry.kind == "surface":
        from flashmark.surface.render import render_surface
        from flashmark.surface.result import from_document

        stdout_console().print(render_surface(from_document(dict(entry.document))))
    elif entry.kind == "capacity":
        from flashmark.capacity.result import CapacityResult
        from flashmark.cli.capacity import render_capacity

        capacity = CapacityResult.from_dict(entry.document).with_id(entry.id)
        stdout_console().print(render_capacity(capacity))
    else:
        print_json(dict(entry.document))
