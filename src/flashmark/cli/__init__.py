"""The flashmark command line: one module per command, registered on one group here.

Only this package prints and exits: the group turns flashmark.errors exceptions into one line
on stderr and their exit status (--debug or FLASHMARK_DEBUG=1 adds the traceback). Commands
load lazily (click's "Lazily Loading Subcommands"): `flashmark --help` lists them from the
table below without importing any, so keep this module's imports light.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from flashmark import __version__
from flashmark.errors import ExitStatus, FlashmarkError, outcomes, printable

# The history database's environment variable; flashmark.history.store.DB_ENV says the same (a test
# checks), named here so that the shared --db option does not import the store (sqlite3).
DB_ENV = "FLASHMARK_DB"


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives, and the summary `flashmark --help` shows without importing it."""

    module: str
    attribute: str
    summary: str  # the first paragraph of the command's help (tests/cli/test_cli_commands.py)


# Each command's summary; its module is flashmark.cli.NAME (but for those in _MODULES), and the
# command in it is NAME_command.
_SUMMARIES: dict[str, str] = {
    "capacity": (
        "Find the real capacity of DEVICE (a block device such as /dev/sdb): tells a genuine "
        "card or stick from a fake that wraps addresses, returns zeros or drops writes beyond "
        "its real size."
    ),
    "clean": (
        "Remove what killed flashmark runs left in TARGET (default: here) and the temp folder."
    ),
    "compare": (
        "Compare saved runs (IDs from `flashmark history`) and published references side by "
        "side: sequential MB/s, 4K random IOPS at depth 1 and 32, p99 latencies, grades and "
        "workload times, each with its ratio to the first run."
    ),
    "doctor": (
        "What in this board holds the device under TARGET back (a folder, partition or device; "
        "default: the system's, /), each finding with why it matters and the line that fixes it."
    ),
    "export": "Write saved results (IDs from `flashmark history`) to a file.",
    "fleet": (
        "Run one benchmark on every board of an Ansible inventory, into one campaign of a "
        "results service, and compare the boards."
    ),
    "health": (
        "How worn the device under TARGET is (a folder, partition or device; default: the "
        "system's, /) and how many years it has left at the rate it is written, as an interval."
    ),
    "history": "List saved results, newest first (`flashmark show ID` shows one).",
    "import": "Add result files to the history: recovery files, `--json` outputs.",
    "monitor": "Watch a device's I/O, or record it while COMMAND runs.",
    "powercut": (
        "Does DEVICE keep what it acknowledged when the power goes? Cuts its power again and "
        "again while it writes, and checks every record it said was flushed."
    ),
    "probe": (
        "Identify the device under TARGET (a folder, file, partition or device; default: the "
        "current folder): kind, registers and claimed classes of SD/eMMC cards, bus speed, "
        "health, and the conditions on this machine that would distort a benchmark."
    ),
    "profiles": "List the test profiles, their tests and defaults.",
    "references": (
        "List published figures to compare with (write-ups and forum posts), not measured "
        "here, each with its source, host board, tool, method and the unit as published."
    ),
    "report": (
        "Write an HTML report of saved results of any kinds (IDs from `flashmark history`), "
        "the results of one card together."
    ),
    "run": (
        "Benchmark TARGET: a folder (default: the current one), a file's folder, or a block device."
    ),
    "serve": "Serve results to browse, search and compare, and take uploads.",
    "show": "Show one saved result by its ID (from `flashmark history`).",
    "token": "Tokens that allow uploading results to `flashmark serve` (reading needs none).",
    "upload": "Send saved results to a results service (`flashmark serve`).",
    "surface": "Scan the whole surface of TARGET: a block device, or a folder's free space.",
    "workload": "Run a real-world workload in a temporary folder under TARGET (default: here).",
}
_MODULES = {"import": "importing", "profiles": "run"}
COMMANDS: dict[str, LazyCommand] = {
    name: LazyCommand(f"flashmark.cli.{_MODULES.get(name, name)}", f"{name}_command", summary)
    for name, summary in _SUMMARIES.items()
}


def _short_help(summary: str, limit: int) -> str:
    """The first sentence of `summary`, cut to `limit` characters with "..." as click does
    (click 8.5 deprecates its own make_default_short_help)."""
    sentence = summary.split(". ", 1)[0].rstrip(".")
    if len(sentence) <= limit:
        return sentence
    return sentence[: max(limit - 3, 0)].rsplit(" ", 1)[0] + "..."


def _debug_enabled(ctx: click.Context | None) -> bool:
    if os.environ.get("FLASHMARK_DEBUG", "") not in ("", "0"):
        return True
    return ctx is not None and bool(ctx.meta.get(_DEBUG))


class FlashmarkGroup(click.Group):
    """A click group that loads its commands when they are used (COMMANDS) and maps
    flashmark's exceptions to messages and exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = COMMANDS.get(cmd_name)
        if lazy is None:
            return super().get_command(ctx, cmd_name)
        command = getattr(importlib.import_module(lazy.module), lazy.attribute)
        if not isinstance(command, click.Command):  # a wrong table entry: a bug
            raise TypeError(f"{lazy.module}.{lazy.attribute} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of --help, from the summaries in COMMANDS: importing every
        command to ask for its help would undo the lazy loading."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            lazy = COMMANDS.get(name)
            if lazy is not None:
                rows.append((name, _short_help(lazy.summary, limit)))
            elif (command := super().get_command(ctx, name)) is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:  # the group's own options, e.g. `flashmark --bad`
            _usage_error(error)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:  # a command's options and arguments
            _usage_error(error)
        except FlashmarkError as error:
            _report(ctx, error, f"flashmark: error: {error}", error.exit_status)
        except KeyboardInterrupt as error:
            _report(ctx, error, "flashmark: interrupted", ExitStatus.INTERRUPTED)
        except BrokenPipeError:
            # stdout's reader went away (`flashmark references | head`): not an error of
            # ours; quietly, with success, as coreutils do (cli/output.py: the consoles' own
            # output goes on into /dev/null instead).
            from flashmark.cli.output import reader_gone

            reader_gone()
            ctx.exit(0)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as error:  # a bug: say so plainly, and how to report it
            if isinstance(error, OSError) and error.errno == errno.ENAMETOOLONG:
                _report(ctx, error, _too_long(error), ExitStatus.USAGE)
            if _stdout_refused(error):  # not a bug: where the output goes cannot take it
                _report(
                    ctx,
                    error,
                    f"flashmark: error: cannot write to stdout: {getattr(error, 'strerror', '')}",
                    ExitStatus.ENVIRONMENT,
                )
            _report(
                ctx,
                error,
                f"flashmark: internal error: {type(error).__name__}: {error} "
                "(run again with --debug for the traceback and report it)",
                ExitStatus.FAILURE,
            )


def _too_long(error: OSError) -> str:
    """A path beyond the system's limits (given, or made from one given), in one line with
    the limits, the path cut to its ends."""
    name = os.fsdecode(error.filename) if error.filename is not None else ""
    shown = name if len(name) <= 80 else f"{name[:40]}...{name[-40:]} ({len(name)} characters)"
    try:
        path_max, name_max = os.pathconf("/", "PC_PATH_MAX"), os.pathconf("/", "PC_NAME_MAX")
    except (OSError, ValueError):
        path_max, name_max = 4096, 255  # Linux's PATH_MAX and NAME_MAX (linux/limits.h)
    return (
        f"flashmark: error: a path is too long for this system: {shown}: a path may hold "
        f"{path_max} bytes and each name in it {name_max}; give a shorter one"
    )


def _stdout_refused(error: Exception) -> bool:
    """Whether `error` came from writing stdout (a full disk, /dev/full, an I/O error): stdout
    still refuses to flush what it holds. A broken pipe is the reader's choice, not this."""
    if not isinstance(error, OSError) or isinstance(error, BrokenPipeError):
        return False
    try:
        sys.stdout.flush()
    except OSError:
        return True
    except (AttributeError, ValueError):  # no stdout at all, or it was closed
        return True
    return False


def _usage_error(error: click.UsageError) -> NoReturn:
    """Bad input as one line, like every other error, with the command whose --help explains
    it; click would print the usage block and a hint first. Exit status 2 either way."""
    if isinstance(error, click.exceptions.NoArgsIsHelpError):
        raise error  # `flashmark` alone: its help, not an error line
    path = error.ctx.command_path if error.ctx is not None else "flashmark"
    click.echo(
        f"flashmark: error: {error.format_message().rstrip('.')} (see `{path} --help`)", err=True
    )
    raise click.exceptions.Exit(error.exit_code)


def _report(ctx: click.Context, error: BaseException, message: str, status: int) -> None:
    if _debug_enabled(click.get_current_context(silent=True) or ctx):
        traceback.print_exception(error, file=sys.stderr)
    # What the cleanup did on the way out (the test file removed, or not) belongs on the line.
    line = "; ".join((message, *outcomes(error)))
    click.echo(printable(line), err=True)  # a newline in a user's folder name stays one line
    ctx.exit(int(status))


_DEBUG = "flashmark.debug"
DEBUG_HELP = "Show the full traceback when something fails."


def remember_debug(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """--debug, of the group or of a command: kept in ctx.meta, which every context of one
    command line shares, where the error handler looks."""
    if value:
        ctx.meta[_DEBUG] = True
    return value


debug_option = click.option(
    "--debug", is_flag=True, expose_value=False, callback=remember_debug, help=DEBUG_HELP
)

# What a click decorator takes and gives back: a command function, or the command.
Decorated = TypeVar("Decorated", bound=Callable[..., Any])


def json_option(help: str) -> Callable[[Decorated], Decorated]:
    """--json, given to the command as `as_json`, with the command's `help` (what it prints)."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def destructive_option(help: str) -> Callable[[Decorated], Decorated]:
    """--destructive, with the command's `help` (what it overwrites and how it confirms), and
    --yes, which every destructive command takes to confirm it without the typed prompt."""

    def add(command: Decorated) -> Decorated:
        command = click.option(
            "--yes", is_flag=True, help="Confirm --destructive without the typed prompt."
        )(command)
        return click.option("--destructive", is_flag=True, help=help)(command)

    return add


db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar=DB_ENV,
    help=f"History database, in a folder that exists [env {DB_ENV}; default "
    "~/.local/share/flashmark/history.sqlite3, folder created on the first save].",
)


@click.group(cls=FlashmarkGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="flashmark")
@debug_option
def main() -> None:
    """Measure SD cards, eMMC, UFS, NVMe and USB storage with fio, grade them against the
    SD Association classes (A1/A2, C10/U1/U3/V30), and keep a history of every run.

    \b
    Quick start (a temporary file in the current folder, about a minute):
        flashmark run
    A card mounted at /media/card, the fuller profile, as JSON:
        flashmark run /media/card --profile standard --json
    Past runs:
        flashmark history
        flashmark show 3
    """
