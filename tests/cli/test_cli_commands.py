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


def test_help_lists_every_command_without_importing_any():
    probe = (
        "import sys\n"
        "from flashmark.cli import main\n"
        "try:\n"
        "    main(['--help'], prog_name='flashmark')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('flashmark.cli.')))\n"
        "print('rich' in sys.modules, 'importlib.metadata' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    listing, loaded, heavy = done.stdout.rsplit("\n", 3)[:3]
    commands = listing.split("Commands:", 1)[1]
    for name, lazy in COMMANDS.items():
        assert f"  {name} " in commands
        assert lazy.summary[:20] in commands
    assert loaded == "[]"
    assert heavy == "False False"


def test_history_lists_results_without_loading_any_measuring_code(tmp_path):
    probe = (
        "import sys\n"
        "from flashmark.cli import main\n"
        "try:\n"
        "    main(['history'], prog_name='flashmark')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('flashmark.')}))\n"
    )
    env = {**os.environ, DB_ENV: str(tmp_path / "history.sqlite3")}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    loaded = set(ast.literal_eval(done.stdout.splitlines()[-1]))
    # The history, its table and what they stand on (the foundation: docs/design.md); no kind
    # of result, no measuring code.
    foundation = {"codec", "errors", "units", "upload_rules"}
    assert loaded <= {"cli", "history", "report", "system", *foundation}


def test_an_unknown_command_is_still_refused_with_exit_2():
    done = CliRunner().invoke(main, ["nosuchcommand"])
    assert done.exit_code == 2


def test_the_light_copy_of_the_database_variable_matches_the_store():
    assert DB_ENV == STORE_DB_ENV
