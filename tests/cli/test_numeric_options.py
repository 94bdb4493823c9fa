"""Every number or size typed on the command line: nan, infinities, negatives, overflows and
empty text are refused while parsing (exit 2, one line), before anything runs."""

import pytest
from click.testing import CliRunner

from flashmark.cli import main
from flashmark.errors import ExitStatus

BAD_NUMBERS = [
    *("nan", "NaN", "inf", "-inf", "1e400", "-1", "", " ", "1,5", "0x10", "1_0"),
    "9" * 400,  # overflows a float, and any sane maximum
    "9" * 5000,  # past the 4300 digits int() takes
]

# (command line up to the option, the option, what follows the value). Targets that do not
# exist: should a value slip through, the command fails at once instead of measuring.
NUMERIC_OPTIONS = [
    (["run", "{tmp}/missing"], "--size", []),
    (["run", "{tmp}/missing"], "--runtime", []),
    (["run", "{tmp}/missing"], "--ramp", []),
    (["run", "{tmp}/missing"], "--workload-scale", []),
    (["workload", "pkg-install", "{tmp}/missing"], "--scale", []),
    (["workload", "pkg-install", "{tmp}/missing"], "--interval", []),
    (["monitor", "sda"], "--interval", ["--", "touch", "{tmp}/ran"]),
    (["monitor", "sda"], "--timeout", ["--", "touch", "{tmp}/ran"]),
    (["monitor", "sda"], "--count", []),
    (["history"], "--limit", []),
]


def _invoke(tmp_path, args):
    env = {"FLASHMARK_DB": str(tmp_path / "history.sqlite3"), "FLASHMARK_DEBUG": ""}
    return CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in args], env=env)


@pytest.mark.parametrize("value", BAD_NUMBERS)
@pytest.mark.parametrize(
    ("before", "option", "after"), NUMERIC_OPTIONS, ids=lambda x: x if isinstance(x, str) else ""
)
def test_a_bad_number_is_refused_in_one_line_before_anything_runs(
    tmp_path, before, option, after, value
):
    done = _invoke(tmp_path, [*before, option, value, *after])
    assert done.exit_code == ExitStatus.USAGE, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("flashmark: error: ") and option in lines[0]
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no test file, no history, no run


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
