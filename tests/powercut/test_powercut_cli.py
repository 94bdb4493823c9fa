"""`flashmark powercut` refuses what it cannot do safely before it touches anything, in one
line with the exit status the README promises."""

from __future__ import annotations

import pytest

from tests.cli_runner import flashmark

OFF, ON = "--off-command=true", "--on-command=true"


def test_the_command_is_listed_with_its_two_helpers():
    done = flashmark("--help")
    assert "powercut" in done.stdout
    done = flashmark("powercut", "--help")
    assert done.returncode == 0
    assert "record" in done.stdout and "verify" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("/dev/null", OFF, ON), "overwrites /dev/null: add --destructive"),
        (("/dev/null", "--destructive", ON), "--off-command CMD"),
        (("/dev/null", "--destructive", OFF), "--on-command CMD"),
        (("/dev/null", "--destructive", OFF, "--host-down"), "--record-to"),
        (("/dev/null", "--destructive", OFF, ON, "--new-run"), "--new-run is for --host-down"),
        (("/dev/null", "--destructive", OFF, ON, "--cut-after", "3-1"), "MIN must not be above"),
        (("/dev/null", "--destructive", OFF, ON, "--cycles", "0"), "--cycles"),
        (("/dev/null", "--destructive", OFF, ON, "--record-to", "-oProxyCommand=x"), "not a host"),
        (("verify", "/dev/null"), "--record-to HOST or --record-file"),
        (("record",), "--run RUN (keep entries) or --fetch IDENTITY"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    done = flashmark("powercut", *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_file_is_not_a_device(tmp_path):
    image = tmp_path / "card.img"
    image.write_bytes(bytes(4096))
    done = flashmark("powercut", image, "--destructive", "--yes", OFF, ON)
    assert done.returncode == 4
    assert "is not a block device" in done.stderr
    assert image.read_bytes() == bytes(4096)
