"""Every number or size typed on the command line: nan, infinities, negatives, overflows,
empty text and garbage are refused while parsing (exit 2, one line naming the option), before
anything runs. The numeric options and arguments are discovered from the click commands, so a
new one is tested without being listed here."""

import re
import tempfile
from typing import Any

import click
import pytest
from click.testing import CliRunner

from flashmark.cli import main
from flashmark.cli.saved import RUN_ID
from flashmark.errors import ExitStatus

BAD_NUMBERS = [
    *("nan", "NaN", "inf", "-inf", "1e400", "-1", "", " ", "1,5", "0x10", "1_0", "garbage"),
    "99999999999999999999999",  # past a 64-bit integer
    "9" * 400,  # overflows a float, and any sane maximum
    "9" * 5000,  # past the 4300 digits int() takes
]
VALUE_IDS = {"": "empty", " ": "space", "99999999999999999999999": "overflow"}

# Options that take a number written as text (sizes with units): found by name.
_NUMERIC_TEXT_OPTIONS = {"--size", "--workload-scale", "--scale"}
_NUMERIC_TYPE_NAME = re.compile(r"\b(integer|int|float|number|size|seconds|count|scale)\b", re.I)

# The rest of each command's line. Targets, databases and services that do not exist: should a
# value slip through, the command fails at once (with another message) instead of measuring,
# serving or writing; monitor's watched command would leave {tmp}/ran behind.
COMMAND_LINES = {
    "run": ["run", "{tmp}/missing"],
    "workload": ["workload", "pkg-install", "{tmp}/missing"],
    "surface": ["surface", "{tmp}/missing"],
    "monitor": ["monitor", "sda", "--no-save"],
    "serve": ["serve", "--database", "{tmp}/missing/server.sqlite3"],
    "upload": ["upload", "--server", "http://127.0.0.1:9"],
    "export": ["export", "-o", "{tmp}/out.md"],
    "report": ["report", "-o", "{tmp}/out.html"],
    "health": ["health", "--record", "{tmp}/missing"],
}
# What follows the value: monitor's watched command (its --count takes none).
AFTER = {("monitor", "--interval"): ["--", "touch", "{tmp}/ran"],
         ("monitor", "--timeout"): ["--", "touch", "{tmp}/ran"]}  # fmt: skip


def numeric_parameters() -> list[tuple[str, str, click.Parameter]]:
    """(command, option, parameter) for every numeric option and argument of every command: the
    long option, or "ARG:NAME" for a positional argument."""
    found = []
    context = click.Context(main, info_name="flashmark")
    for name in sorted(main.list_commands(context)):  # lazy groups load commands on request
        command = main.get_command(context, name)
        assert command is not None
        for param in filter(_is_numeric, command.params):
            argument = isinstance(param, click.Argument)
            option = f"ARG:{param.name}" if argument else max(param.opts, key=len)
            found.append((name, option, param))
    return found


def _is_numeric(param: click.Parameter) -> bool:
    if isinstance(param, click.Option) and param.is_flag:
        return False
    if isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
        return True
    # Custom number types (bounded ints and floats, sizes) say what they are in their name.
    if _NUMERIC_TYPE_NAME.search(getattr(param.type, "name", "") or ""):
        return True
    return any(opt in _NUMERIC_TEXT_OPTIONS for opt in param.opts)


_CLICK_NUMBERS = (click.types.IntParamType, click.types.FloatParamType)


def _cases() -> list[Any]:
    """Every value for every numeric parameter, but 1_0 for click's own number types: they read
    Python's int() and float() syntax, in which 1_0 is 10, a number inside their ranges."""
    cases = []
    for command, option, param in numeric_parameters():
        builtin = type(param.type) in (click.IntRange, click.FloatRange, *_CLICK_NUMBERS)
        for value in BAD_NUMBERS:
            if not (builtin and value == "1_0"):
                cases.append(pytest.param(command, option, value, id=f"{command}-{option}-"
                                          f"{VALUE_IDS.get(value, value[:12])}"))  # fmt: skip
    return cases


def _invoke(tmp_path, args):
    env = {"FLASHMARK_DB": str(tmp_path / "history.sqlite3"), "FLASHMARK_DEBUG": ""}
    return CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in args], env=env)


def _argv(command: str, option: str, value: str) -> list[str]:
    before = COMMAND_LINES.get(command, [command])
    if option.startswith("ARG:"):
        return [*before, "--", value]
    return [*before, option, value, *AFTER.get((command, option), [])]


def test_the_numeric_options_known_today_are_all_discovered():
    """Discovery reads the click commands; a renamed type must not silently drop cases."""
    known = {
        ("run", "--size"), ("run", "--runtime"), ("run", "--ramp"), ("run", "--workload-scale"),
        ("run", "--stall-timeout"), ("history", "--limit"), ("show", "ARG:result_id"),
        ("monitor", "--interval"), ("monitor", "--count"), ("monitor", "--timeout"),
        ("workload", "--scale"), ("workload", "--interval"), ("export", "ARG:result_ids"),
        ("compare", "ARG:result_ids"), ("report", "ARG:result_ids"), ("upload", "ARG:ids"),
        ("serve", "--port"), ("serve", "--workers"), ("serve", "--max-upload-bytes"),
        ("serve", "--uploads-per-minute"), ("surface", "--block-size"), ("surface", "--slices"),
        ("surface", "--size"), ("surface", "--stall-timeout"),
    }  # fmt: skip
    found = {(command, option) for command, option, _ in numeric_parameters()}
    assert known <= found, f"not discovered: {sorted(known - found)}"


@pytest.mark.parametrize(("command", "option", "value"), _cases())
def test_a_bad_number_is_refused_in_one_line_before_anything_runs(
    tmp_path, monkeypatch, command, option, value
):
    # Temporary files and the data home inside tmp_path too: nothing may appear anywhere.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    done = _invoke(tmp_path, _argv(command, option, value))
    assert done.exit_code == ExitStatus.USAGE, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    # An option is named; an argument's error says what the value is not (a run id).
    named = "is not a run id" if option.startswith("ARG:") else option
    assert lines[0].startswith("flashmark: error: ") and named in lines[0], lines[0]
    assert "Traceback" not in done.stderr
    # No test file, history, run, temporary file or data: only the empty temporary folder.
    assert [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")] == ["tmp"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["history", "--limit", "0"], "at least 1"),
        (["monitor", "--interval", "0.01"], "at least 0.05"),
        (["monitor", "--interval", "1e9"], "at most 3,600"),
        (["monitor", "--timeout", "0", "--", "true"], "above 0"),
        (["workload", "cold-read", "--scale", "0"], "above 0"),
        (["run", "--workload-scale", "11"], "at most 10"),
        (["run", "--runtime", "1.5"], "not a whole number"),
        (["run", "--runtime", "1_0"], "not a whole number"),
        (["history", "--limit", "\u0663"], "not a whole number"),  # an Arabic-Indic 3
        (["run", "--runtime", "86401"], "at most 86,400"),
        (["run", "--ramp", "3601"], "at most 3,600"),
        (["run", "--ramp", "1.5"], "not a whole number"),
        (["run", "--ramp", "-1"], "out of range: use a whole number of seconds at least 0"),
        (["run", "--runtime", "-5"], "out of range: use a whole number of seconds at least 1"),
        (["run", "--runtime", "0"], "out of range: use a whole number of seconds at least 1"),
        (["run", "--runtime", "1.5"], "use a whole number of seconds at least 1"),
        (["history", "--limit", "-3"], "out of range: use a whole number at least 1"),
        (["monitor", "--interval", "-1"], "out of range: use a number of seconds at least 0.05"),
        (["monitor", "--timeout", "-2", "--", "true"], "use a number of seconds above 0"),
        (["run", "--stall-timeout", "0"], "use a number of seconds above 0"),
        (["run", "--workload-scale", "-1"], "out of range: use a number at least 0"),
        (["run", "--size", "-1M"], "cannot read size"),
        (["run", "--size", "0"], "larger than zero"),
        (["run", "--size", "16E"], "cannot read size"),
    ],
)
def test_out_of_range_values_say_the_range(tmp_path, args, message):
    done = _invoke(tmp_path, args)
    assert done.exit_code == ExitStatus.USAGE
    assert message in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_usage_mistake_is_one_line_that_names_the_help():
    done = CliRunner().invoke(main, ["run", "--no-such-option"])
    assert done.exit_code == ExitStatus.USAGE
    assert done.stderr == (
        "flashmark: error: No such option '--no-such-option' (see `main run --help`)\n"
    )


def test_flashmark_alone_still_shows_its_help():
    done = CliRunner().invoke(main, [])
    assert "Commands:" in done.output


@pytest.mark.parametrize("given", ["0" * 30 + "7", "007", "7"])
def test_a_run_id_with_leading_zeros_is_the_number_it_writes(given: str) -> None:
    assert RUN_ID.convert(given, None, None) == 7
