"""`flashmark history`: the saved results, newest first.

`flashmark show ID` is in show.py: it reads whole result documents and needs their renderers,
which `history` must not import to start fast (issue 9, "instant start").
"""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.cli.output import print_json, stdout_console
from flashmark.cli.params import COUNT
from flashmark.report.history_table import render_history
from flashmark.store import History


@click.command("history")
@click.option("--json", "as_json", is_flag=True, help="As JSON: a list of saved results.")
@click.option(
    "--limit",
    type=COUNT,
    default=50,
    show_default=True,
    help="How many of the newest results.",
)
@db_option
@debug_option
def history_command(as_json: bool, limit: int, db_path: Path | None, debug: bool) -> None:
    """List saved results, newest first (`flashmark show ID` shows one)."""
    entries = History.locate(db_path).list(limit=limit)
    if as_json:
        print_json(
            [
                {
                    "id": entry.id,
                    "kind": entry.kind,
                    "created_at": entry.created_at,
                    "target": entry.target,
                    "label": entry.label,
                    "schema": entry.schema,
                }
                for entry in entries
            ]
        )
    elif not entries:
        click.echo("No saved results yet: `flashmark run` measures and saves one.")
    else:
        stdout_console().print(render_history(entries))
