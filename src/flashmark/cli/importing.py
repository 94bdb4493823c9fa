"""`flashmark import FILE ...`: add result documents to the history.

For the recovery files of results that could not be saved (flashmark.history.recovery), and for any
`run --json` or `monitor --json` output, e.g. from another board. Every file is read and
checked before anything is added; the same document is never added twice.
"""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.history import History
from flashmark.kinds import read_document_file


@click.command("import")
@click.argument(
    "files", metavar="FILE ...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@db_option
@debug_option
def import_command(files: tuple[Path, ...], db_path: Path | None, debug: bool) -> None:
    """Add result files to the history: recovery files, `--json` outputs.

    \b
    FILE is the recovery file of a result that could not be saved, or the output of
    `run --json` or `monitor --json` (from this machine or another).

    \b
    Each file must hold one document of a schema this flashmark reads (flashmark.result/1,
    flashmark.monitor/1); all are checked before any is added. A document the history
    already holds (the same result, whatever its id) is not added again.
        flashmark import ~/.local/state/flashmark/unsaved/benchmark-20261123T081500Z-x1y2.json
    Exit codes: 2 a file cannot be read or is not a result document; 6 the history cannot
    be written.
    """
    entries = [(path, read_document_file(path)) for path in files]
    history = History.locate(db_path)
    for path, entry in entries:
        outcome = history.add_unless_present(
            kind=entry.kind, target=entry.target, label=entry.label, document=entry.document
        )
        if outcome.added:
            click.echo(f"{path}: added as {outcome.id} (`flashmark show {outcome.id}`)")
        else:
            click.echo(
                f"{path}: already in the history as {outcome.id}; not added again "
                f"(`flashmark show {outcome.id}`)"
            )
