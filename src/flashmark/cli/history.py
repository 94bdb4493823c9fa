"""`flashmark history`: the saved results, newest first; `--card CID` lists every result of one
SD/eMMC card (recognised by its CID register, through the history's CID index) over time.

`flashmark show ID` is in show.py: it reads whole result documents and needs their renderers,
which `history` must not import to start fast.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

import click

from flashmark.cli import db_option, debug_option, json_option
from flashmark.cli.output import print_json, stdout_console
from flashmark.cli.params import CARD_CID, COUNT
from flashmark.errors import HistoryError, ResultFormatError
from flashmark.history.entries import StoredResult
from flashmark.history.store import History
from flashmark.report.history_table import render_history

# What --json gives of each saved result, in this order.
_LISTED = ("id", "kind", "created_at", "target", "label", "schema")


@click.command("history")
@json_option("As JSON: a list of saved results.")
@click.option(
    "--limit",
    type=COUNT,
    default=50,
    show_default=True,
    help="How many of the newest results (not with --card, which lists them all).",
)
@click.option(
    "--card",
    "card_cid",
    type=CARD_CID,
    default=None,
    metavar="CID",
    help="Every result of the card with this CID (32 hex digits, as `flashmark probe` shows).",
)
@db_option
@debug_option
def history_command(as_json: bool, limit: int, card_cid: str | None, db_path: Path | None) -> None:
    """List saved results, newest first (`flashmark show ID` shows one).

    \b
    With --card CID: every result of that SD/eMMC card over time, whatever the target or
    reader it was measured through (benchmarks, capacity probes, ...).
    """
    history = History.locate(db_path)
    if card_cid is not None:
        entries = sorted(history.of_card(card_cid), key=lambda entry: entry.id, reverse=True)
    else:
        entries = history.list(limit=limit)
    unreadable = _unreadable(history, entries)
    if as_json:
        print_json([{key: getattr(entry, key) for key in _LISTED} for entry in entries])
    elif not entries and card_cid is not None:
        click.echo(
            f"No saved results of the card {card_cid} (`flashmark probe` shows a card's CID)."
        )
    elif not entries:
        click.echo("No saved results yet: `flashmark run` measures and saves one.")
    else:
        stdout_console().print(render_history(entries))
    for line in unreadable:  # after the JSON, on stderr: the list stays one JSON document
        click.echo(line, err=as_json)


def _unreadable(history: History, entries: Sequence[StoredResult]) -> list[str]:
    """A line for each listed document saved before every key and type of its schema was
    required (history migrations 0004, 0005) that this version cannot read. Those that read
    lose their mark: each is read once, as reading imports every kind, which `history`
    otherwise never does."""
    unchecked = [entry for entry in entries if entry.unchecked]
    if not unchecked:
        return []
    from flashmark.kinds.registry import kind_of
    from flashmark.kinds.strict import pointer

    lines, readable = [], []
    for entry in unchecked:
        try:
            kind_of(entry.document).from_document(entry.document)
            readable.append(entry.id)
        except ResultFormatError as error:
            where = pointer(getattr(error, "where", ()))
            lines.append(
                f"{entry.id}: saved by an earlier flashmark, this one cannot read it"
                f"{f' (at {where})' if where else ''}: {error}"
            )
    with contextlib.suppress(HistoryError):  # a read-only history: read again next time
        history.mark_checked(readable)
    return lines
