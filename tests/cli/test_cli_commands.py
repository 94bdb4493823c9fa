"""The lazily loaded commands: each one in the table loads, and --help lists them all with the
summary the command itself gives (no timing here: benchmarks/startup.py prints that)."""

import ast
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from flashmark.cli import COMMANDS, DB_ENV, main
from flashmark.history.store import DB_ENV as STORE_DB_ENV


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_registered_command_loads_with_the_summary_its_help_starts_with(name):
    command = main.get_command(click.Context(main), name)
    assert isinstance(command, click.Command)
    assert command.name == name
    # The listing's summary is a copy of the command's first paragraph: they must not drift.
    assert command.get_short_help_str(limit=1000) == COMMANDS[name].summary


def modules_after(*args: str, env: dict[str, str] | None = None) -> tuple[str, set[str]]:
    """What `flashmark ARGS` printed in a Python of its own, and every module it imported."""
    probe = (
        "import sys\n"
        "from flashmark.cli import main\n"
        "try:\n"
        f"    main({list(args)!r}, prog_name='flashmark')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(sys.modules))\n"
    )
    argv = [sys.executable, "-c", probe]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60, env=env)
    *printed, modules = done.stdout.splitlines()
    return "\n".join(printed), set(ast.literal_eval(modules))


def test_help_lists_every_command_without_importing_any():
    listing, loaded = modules_after("--help")
    commands = listing.split("Commands:", 1)[1]
    for name, lazy in COMMANDS.items():
        assert f"  {name} " in commands
        assert lazy.summary[:20] in commands
    assert sorted(m for m in loaded if m.startswith("flashmark.cli.")) == []
    assert "rich" not in loaded and "importlib.metadata" not in loaded


def test_history_lists_results_without_loading_any_measuring_code(tmp_path):
    env = {**os.environ, DB_ENV: str(tmp_path / "history.sqlite3")}
    _, modules = modules_after("history", env=env)
    loaded = {m.split(".")[1] for m in modules if m.startswith("flashmark.")}
    # The history, its table and what they stand on (the foundation: docs/design.md); no kind
    # of result, no measuring code.
    foundation = {"codec", "errors", "units", "upload_rules"}
    assert loaded <= {"cli", "history", "report", "system", *foundation}


def test_an_unknown_command_is_still_refused_with_exit_2():
    done = CliRunner().invoke(main, ["nosuchcommand"])
    assert done.exit_code == 2


def test_the_light_copy_of_the_database_variable_matches_the_store():
    assert DB_ENV == STORE_DB_ENV
