"""Console helpers shared by the command modules: where text goes and how JSON is printed.

Results go to stdout; progress, warnings and prompts go to stderr, so `--json` output can be
piped. Nothing outside flashmark.cli prints.

A stdout that refuses what is written (a full disk behind `> file`, /dev/full, an I/O error)
raises OutputFailed, one line with exit 3, which a command that measured adds where its result
is to (cli/saving.py). A reader that went away (EPIPE: `| head`) is not an error of ours: that
BrokenPipeError is left as it is.
"""

from __future__ import annotations

import errno
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from flashmark.errors import EnvironmentProblem
from flashmark.kinds import to_text


class OutputFailed(EnvironmentProblem):
    """stdout refused what flashmark printed."""


class _Guarded:
    """A text stream whose write errors (but a broken pipe) become OutputFailed."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as error:
            raise _failed(error) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            raise _failed(error) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _failed(error: OSError) -> OSError | OutputFailed:
    if error.errno == errno.EPIPE:
        return error
    return OutputFailed(f"cannot write to stdout: {error.strerror or error}")


# Without a terminal (a pipe, a log file, CI) rich would assume 80 columns and squeeze the
# tables; a wider page keeps each test on one line.
_PIPE_WIDTH = 132


def _console(stream: TextIO) -> Console:
    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        console = Console(file=stream, highlight=False, width=_PIPE_WIDTH)
    return console


def stdout_console() -> Console:
    return _console(_Guarded(sys.stdout))  # type: ignore[arg-type]


def stderr_console() -> Console:
    return _console(sys.stderr)


def styled(text: str, style: str) -> Text:
    """`text` as it is (no markup read in it) in `style`, for a console to print."""
    return Text(text, style=style)


def print_text(text: str) -> None:
    """Plain text on stdout as it is, and a newline: no markup, wrapping or cropping."""
    stream = _Guarded(sys.stdout)
    stream.write(text + "\n")
    stream.flush()


def print_json(document: Any) -> None:
    stream = _Guarded(sys.stdout)
    stream.write(to_text(document))
    stream.flush()
