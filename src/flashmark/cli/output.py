"""Console helpers shared by the command modules: where text goes and how JSON is printed.

Results go to stdout; progress, warnings and prompts go to stderr, so `--json` output can be
piped. Nothing outside flashmark.cli prints.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from rich.console import Console

from flashmark.codec import to_text

# Without a terminal (a pipe, a log file, CI) rich would assume 80 columns and squeeze the
# tables; a wider page keeps each test on one line.
_PIPE_WIDTH = 132


def _console(stream: TextIO) -> Console:
    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        console = Console(file=stream, highlight=False, width=_PIPE_WIDTH)
    return console


def stdout_console() -> Console:
    return _console(sys.stdout)


def stderr_console() -> Console:
    return _console(sys.stderr)


def print_json(document: Any) -> None:
    sys.stdout.write(to_text(document))
    sys.stdout.flush()
