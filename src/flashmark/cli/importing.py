"""`flashmark import FILE ...`: add result documents to the history.

For the recovery files of results that could not be saved (flashmark.history.recovery), and for any
`run --json` or `monitor --json` output, e.g. from another board. Every file is read and
checked before anything is added; the same document is never added twice.
"""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.history.store import History
from flashmark.kinds.files import read_document_files


@click.command("import")
@click.argument(
    "files", metavar="FILE ...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@db_option
@debug_option
def import_command(files: tuple[Path, ...], db_path: Path | None) -> None:
    """Add result files to the history: recovery files, `--json` outputs.

    \b
    FILE is the recovery file of a result that could not be saved, or the output of
    `run --json` or `monitor --json` (from this machine or another).

    \b
    Each file holds one document of a schema this flashmark reads (flashmark.result/1,
    flashmark.monitor/1, ...), or a list of them (`export --format json` of several
    results); all are checked before any is added. A document the history already holds
    (the same result, whatever its id) is not added again: one line says so for each.
        flashmark import ~/.local/state/flashmark/unsaved/benchmark-20261123T081500Z-x1y2.json
        flashmark import results.json        # from `flashmark export 3 4 5 -o results.json`
    Exit codes: 2 a file cannot be read or is not a result document; 6 the history cannot
    be written.
    """
    entries = [
        (_where(path, number, len(read)), entry)
        for path in files
        for read in (read_document_files(path),)
        for number, entry in enumerate(read, 1)
    ]
    history = History.locate(db_path)
    for where, entry in entries:
        outcome = history.add_unless_present(
            kind=entry.kind, target=entry.target, label=entry.label, document=entry.document
        )
        if outcome.added:
            click.echo(f"{where}: added as {outcome.id} (`flashmark show {outcome.id}`)")
        else:
            click.echo(
                f"{where}: already in the history as {outcome.id}; not added again "
                f"(`flashmark show {outcome.id}`)"
            )


def _where(path: Path, number: int, count: int) -> str:
    """The file, and which of its documents when it holds several."""
    return str(path) if count == 1 else f"{path} (item {number} of {count})"
