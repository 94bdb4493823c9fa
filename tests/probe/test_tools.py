"""The subprocess tool runner: argv lists, LC_ALL=C, timeouts, errors as typed exceptions."""

from __future__ import annotations

import pytest

from flashmark.probe.environment import decode_throttled
from flashmark.probe.nvme import parse_nvme_cli_smart_log, parse_smartctl_json
from flashmark.probe.tools import NoToolRunner, SubprocessToolRunner, ToolFailed, ToolNotAvailable


def test_runs_with_lc_all_c() -> None:
    result = SubprocessToolRunner().run(["sh", "-c", 'printf "%s" "$LC_ALL"'])
    assert (result.returncode, result.stdout) == (0, "C")


def test_missing_tool_is_not_available() -> None:
    with pytest.raises(ToolNotAvailable, match="flashmark-no-such-tool"):
        SubprocessToolRunner().run(["flashmark-no-such-tool", "--version"])


def test_failure_quotes_stderr() -> None:
    with pytest.raises(ToolFailed, match="exited with 3: boom"):
        SubprocessToolRunner().run(["sh", "-c", "echo boom >&2; exit 3"])


def test_timeout_kills_the_tool() -> None:
    with pytest.raises(ToolFailed, match=r"did not finish within 0\.2 s"):
        SubprocessToolRunner().run(["sleep", "5"], timeout_s=0.2)


def test_no_tool_runner_says_why() -> None:
    with pytest.raises(ToolNotAvailable, match="recorded tree"):
        NoToolRunner().run(["vcgencmd", "get_throttled"])


def test_vcgencmd_get_throttled_bits_from_the_raspberry_pi_documentation() -> None:
    decoded = decode_throttled("throttled=0x50005\n")
    assert decoded.now == ("under-voltage", "throttled")
    assert decoded.since_boot == ("under-voltage", "throttled")
    with pytest.raises(ValueError, match="not vcgencmd"):
        decode_throttled('error=1 error_msg="Command not registered"')


def test_nvme_cli_smart_log_of_a_wd_sn530_on_a_pi_5() -> None:
    # raspberrypi/linux issue #6228 (sudo nvme --smart-log /dev/nvme0n1 -H), excerpt.
    text = (
        "critical_warning\t\t\t: 0\n"
        "temperature\t\t\t\t: 26°C (299 Kelvin)\n"
        "available_spare\t\t\t\t: 100%\n"
        "percentage_used\t\t\t\t: 0%\n"
        "Data Units Read\t\t\t\t: 58,670 (30.04 GB)\n"
        "media_errors\t\t\t\t: 0\n"
        "num_err_log_entries\t\t\t: 1\n"
    )
    assert parse_nvme_cli_smart_log(text) == {
        "critical_warning": 0.0,
        "temperature_c": 26.0,
        "percentage_used": 0.0,
        "available_spare": 100.0,
        "media_errors": 0.0,
    }


def test_smartctl_json_health_log() -> None:
    text = (
        '{"nvme_smart_health_information_log": {"critical_warning": 0, "temperature": 44,'
        ' "percentage_used": 3, "media_errors": 0}}'
    )
    assert parse_smartctl_json(text) == {
        "percentage_used": 3.0,
        "media_errors": 0.0,
        "critical_warning": 0.0,
        "temperature_c": 44.0,
    }
