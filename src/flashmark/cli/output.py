"""Console helpers shared by the command modules: where text goes and how JSON is printed.

Results go to stdout; progress, warnings and prompts to stderr, so `--json` can be piped. A
stdout that refuses what is written raises OutputFailed (exit 3); a reader that went away
(EPIPE, `| head`) is no error: stdout goes to /dev/null and the command ends as it would, its
result saved, as coreutils do. `--quiet` leaves only the verdict line on stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import click
from rich.console import Console
from rich.text import Text

from flashmark.cli import Decorated, db_option
from flashmark.codec import to_text
from flashmark.errors import EnvironmentProblem

if TYPE_CHECKING:
    from flashmark.result_kind import ResultKind

R = TypeVar("R")


class OutputFailed(EnvironmentProblem):
    """stdout refused what flashmark printed."""


class _Guarded:
    """A text stream whose write errors (but a broken pipe) become OutputFailed."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            reader_gone()
            return len(text)
        except OSError as error:
            raise _failed(error) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            reader_gone()
        except OSError as error:
            raise _failed(error) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _failed(error: OSError) -> OutputFailed:
    # A broken pipe (EPIPE) is always BrokenPipeError, handled before this: the reader left.
    return OutputFailed(f"cannot write to stdout: {error.strerror or error}")


def reader_gone() -> None:
    """stdout's reader went away (EPIPE): point stdout at /dev/null, so that what is still
    printed (and the final flush) goes nowhere instead of failing again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's captured stdout)
        pass
    finally:
        os.close(null)


class _Console(Console):
    """rich's Console, but a reader that went away is not an error (rich exits with 1)."""

    def on_broken_pipe(self) -> None:
        reader_gone()


# Without a terminal (a pipe, a log file, CI) rich would assume 80 columns and squeeze the
# tables; a wider page keeps each test on one line.
_PIPE_WIDTH = 132


def _console(stream: TextIO, *, quiet: bool = False) -> Console:
    console = _Console(file=stream, highlight=False, quiet=quiet)
    if not console.is_terminal:
        console = _Console(file=stream, highlight=False, width=_PIPE_WIDTH, quiet=quiet)
    return console


def stdout_console() -> Console:
    return _console(_Guarded(sys.stdout))  # type: ignore[arg-type]


_quiet = False  # set by --quiet for the command that runs (quiet_option)


def is_quiet() -> bool:
    """Whether the running command was given --quiet: only its verdict line is printed."""
    return _quiet


def stderr_console() -> Console:
    """The console for plans, progress and warnings: silent with --quiet."""
    return _console(sys.stderr, quiet=_quiet)


def set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """A flag's callback that makes the command quiet when given (--quiet, `health --record`)."""
    global _quiet
    if value:
        _quiet = True
        ctx.call_on_close(_not_quiet)  # the next command (in one process: tests) talks again
    return value


def _not_quiet() -> None:
    global _quiet
    _quiet = False


# Shared by the measuring commands: print only the verdict line.
quiet_option = click.option(
    "--quiet",
    "-q",
    is_flag=True,
    expose_value=False,  # read through is_quiet()
    callback=set_quiet,
    help="Print only the verdict line (the answer, on stdout; with --json the document); "
    "errors still go to stderr.",
)


def styled(text: str, style: str) -> Text:
    """`text` as it is (no markup read in it) in `style`, for a console to print."""
    return Text(text, style=style)


def print_text(text: str) -> None:
    """Plain text on stdout as it is, and a newline: no markup, wrapping or cropping."""
    stream = _Guarded(sys.stdout)
    stream.write(text + "\n")
    stream.flush()


def print_verdict(console: Console, line: str) -> None:
    """The verdict line as one line of output whatever the width (a terminal wraps it for the
    eye; `tail -1` still gets it whole), no markup read in it."""
    console.print(Text(line), soft_wrap=True, highlight=False)


def say_line(line: str) -> None:
    """A line of what a command is about to do (the `space` line), on stderr as it is: no
    markup read in it, not wrapped; silent with --quiet."""
    stderr_console().print(Text(line), soft_wrap=True, highlight=False)


def print_json(document: Any) -> None:
    stream = _Guarded(sys.stdout)
    stream.write(to_text(document))
    stream.flush()


def verdict_line(kind: ResultKind[R], result: R, saved_id: int | None = None) -> str:
    """'verdict: A1 pass, A2 fail (...); saved as #3': the kind's summary of the result (the
    same text as its document's "summary"), and the id it was saved as."""
    saved = "" if saved_id is None else f"; saved as #{saved_id}"
    return f"verdict: {kind.summary(result)}{saved}"


def saving_options(no_save_help: str) -> Callable[[Decorated], Decorated]:
    """--quiet, --db and --no-save, in that order: the options of each command that saves its
    result to the history; `no_save_help` says what is not saved."""
    no_save = click.option("--no-save", is_flag=True, help=no_save_help)

    def apply(command: Decorated) -> Decorated:
        return quiet_option(db_option(no_save(command)))

    return apply
