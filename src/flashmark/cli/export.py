"""`flashmark export ID [ID ...] -o FILE`: saved results as Markdown, CSV, JSON or HTML."""

from __future__ import annotations

import errno
from pathlib import Path

import click

from flashmark.cli import db_option, debug_option
from flashmark.cli.saved import FILE_FORMATS, RUN_ID, SUFFIX_FORMATS, load_entries, render_entries
from flashmark.errors import UsageError
from flashmark.system.durable_files import NotCreated, replace_file
from flashmark.system.signals import signals_held, signals_raise

STDOUT = "-"


def format_for(output: str, format_name: str | None) -> str:
    """--format if given, else the one FILE's suffix names."""
    if format_name is not None:
        return format_name
    if output == STDOUT:
        raise UsageError(
            f"-o - writes to stdout: say which format with --format {'|'.join(FILE_FORMATS)}"
        )
    suffix = Path(output).suffix.lower()
    if suffix not in SUFFIX_FORMATS:
        known = ", ".join(SUFFIX_FORMATS)
        raise UsageError(
            f"cannot tell the format of {output!r} from its suffix (known: {known}): add --format"
        )
    return SUFFIX_FORMATS[suffix]


def output_path(output: str, force: bool) -> Path | None:
    """-o FILE as a path, refused now if it is a folder or exists without --force, before any
    work is done; None for - (stdout).

    The check and the final rename are not one step: a file created in between by someone
    else would be replaced.
    """
    if output == STDOUT:
        return None
    path = Path(output)
    if path.is_dir():
        raise UsageError(f"{path} is a folder: give a file name with -o")
    if path.exists() and not force:
        raise UsageError(f"{path} exists: add --force to overwrite it, or choose another -o")
    return path


def write_output(path: Path | None, text: str, what: str) -> None:
    """`text` on stdout as it is, or into FILE (write_atomically), then "wrote FILE`what`"
    on stderr."""
    if path is None:
        click.echo(text, nl=False)
        return
    write_atomically(path, text)
    click.echo(f"wrote {path}{what}", err=True)


def write_atomically(path: Path, text: str) -> None:
    """Write a temporary file in the same folder, then rename it over `path`: a reader (or a
    crash) never sees a half-written file (durable_files.replace_file). A signal waits until
    that is done (and the temporary file is gone), then stops flashmark with its exit status."""
    with signals_raise(), signals_held():
        try:
            replace_file(path, text.encode())
        except NotCreated as error:
            why = _why_not_created(path.parent, error)
            raise UsageError(f"cannot create {path}: {why}") from None
        except OSError as error:
            raise UsageError(f"cannot write {path}: {error.strerror} (choose another -o)") from None


def _why_not_created(folder: Path, error: OSError) -> str:
    """Why no file can be created in `folder`, in the user's terms: open(2)'s ENOENT in a folder
    that exists (/proc, /sys) would read as if the folder were missing."""
    if error.errno == errno.ENOENT:
        if folder.is_dir():
            return (
                f"{folder} is on a filesystem where no file can be created (a kernel view "
                "such as /proc or /sys): choose another -o"
            )
        return f"the folder {folder} does not exist: create it, or choose another -o"
    return f"{error.strerror} in {folder} (choose another -o)"


@click.command("export")
@click.argument("result_ids", metavar="ID [ID ...]", type=RUN_ID, nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="The file to write (its suffix picks the format: .md, .csv, .json, .html); "
    "- writes to stdout.",
)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(FILE_FORMATS),
    default=None,
    help="md, csv, json or html (default: from FILE's suffix).",
)
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@db_option
@debug_option
def export_command(
    result_ids: tuple[int, ...],
    output: str,
    format_name: str | None,
    force: bool,
    db_path: Path | None,
) -> None:
    """Write saved results (IDs from `flashmark history`) to a file.

    \b
    Markdown (a section per result) for a forum post, CSV for a spreadsheet (one table per
    kind of result, each under a row naming its kind when there are several), JSON (the saved
    documents: one, or a list of several, which `flashmark import` reads back), or a
    self-contained HTML page.
        flashmark export 3 -o card.md
        flashmark export 3 4 5 -o cards.csv
        flashmark export 3 -o - --format md
    """
    chosen = format_for(output, format_name)
    path = output_path(output, force)
    entries = load_entries(db_path, result_ids)
    text = render_entries(entries, chosen, "use --format json")
    write_output(path, text, f" ({chosen}, {len(entries)} result{'s' * (len(entries) > 1)})")
