"""The flashmark command line: one module per command, registered on one group here.

Only this package prints and exits. Library code raises flashmark.errors exceptions; the group
below turns them into one line on stderr and the exit status the exception names. --debug (or
FLASHMARK_DEBUG=1) shows the traceback as well.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from flashmark import __version__
from flashmark.errors import ExitStatus, FlashmarkError
from flashmark.store import DB_ENV


def _debug_enabled(ctx: click.Context | None) -> bool:
    if os.environ.get("FLASHMARK_DEBUG", "") not in ("", "0"):
        return True
    while ctx is not None:
        if ctx.params.get("debug"):
            return True
        ctx = ctx.parent
    return False


class FlashmarkGroup(click.Group):
    """A click group that maps flashmark's exceptions to messages and exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FlashmarkError as error:
            _report(ctx, error, f"flashmark: error: {error}", error.exit_status)
        except KeyboardInterrupt as error:
            _report(ctx, error, "flashmark: interrupted", ExitStatus.INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as error:  # a bug: say so plainly, and how to report it
            _report(
                ctx,
                error,
                f"flashmark: internal error: {type(error).__name__}: {error} "
                "(run again with --debug for the traceback and report it)",
                ExitStatus.FAILURE,
            )


def _report(ctx: click.Context, error: BaseException, message: str, status: int) -> None:
    if _debug_enabled(click.get_current_context(silent=True) or ctx):
        traceback.print_exception(error, file=sys.stderr)
    click.echo(message, err=True)
    ctx.exit(int(status))


debug_option = click.option(
    "--debug", is_flag=True, default=False, help="Show the full traceback when something fails."
)

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
def main(debug: bool) -> None:
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


def _register_commands() -> None:
    # Imported here so that each command module can import `main`-independent helpers freely.
    from flashmark.cli import (
        clean,
        compare,
        export,
        history,
        importing,
        monitor,
        probe,
        references,
        report,
        run,
        serve,
        token,
        upload,
        workload,
    )

    main.add_command(run.run_command)
    main.add_command(run.profiles_command)
    main.add_command(history.history_command)
    main.add_command(history.show_command)
    main.add_command(probe.probe_command)
    main.add_command(references.references_command)
    main.add_command(monitor.monitor_command)
    main.add_command(workload.workload_command)
    main.add_command(export.export_command)
    main.add_command(compare.compare_command)
    main.add_command(report.report_command)
    main.add_command(clean.clean_command)
    main.add_command(importing.import_command)
    main.add_command(serve.serve_command)
    main.add_command(upload.upload_command)
    main.add_command(token.token_command)


_register_commands()
