"""`flashmark probe` end to end through click, on recorded trees and on this machine."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from flashmark.bench.probe_kind import PROBE, ProbeResult
from flashmark.cli import main
from flashmark.errors import ResultFormatError
from flashmark.kinds.registry import PRINTED_KINDS, kind_of
from tests.probe.recorded import recorded_machine


def probe(machine: str, *args: str, **env: str) -> Result:
    """`flashmark probe ARGS` on the recorded machine `machine`, with `env` added."""
    return CliRunner().invoke(main, ["probe", *args], env={**recorded_machine(machine), **env})


def test_probe_json_of_the_pi_5_a2_card() -> None:
    result = probe("rpi5_a2", "/", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["schema"] == "flashmark.probe/1"
    assert document["devices"][0]["card"]["claimed"]["app_class"] == "A2"


def test_probe_json_reads_back_as_the_judged_report_with_its_passports(tmp_path: Path) -> None:
    result = probe("rpi5_a2", "/", "--json", FLASHMARK_DB=str(tmp_path / "history.sqlite3"))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    probed = PROBE.from_document(document)
    assert isinstance(probed, ProbeResult)
    assert PROBE.to_document(probed) == document  # the whole document, nothing lost
    assert [passport.device for passport in probed.passports] == [
        device.name for device in probed.report.devices if device.card
    ]


def test_a_probe_document_is_printed_never_kept_in_the_history() -> None:
    assert PROBE in PRINTED_KINDS and not PROBE.saved
    with pytest.raises(ResultFormatError, match="not a flashmark result document"):
        kind_of({"schema": PROBE.schema})


def test_probe_terminal_view_of_the_nvme_link_and_warning_on_stderr() -> None:
    result = probe("nvme_pcie", "/")
    assert result.exit_code == 0, result.output
    assert "5.0 GT/s PCIe x1 (max 8.0 GT/s PCIe x4)" in result.stdout
    assert "warning: nvme0n1 (nvme): PCIe at 5 GT/s x1 (Gen 2)" in result.stderr


def test_missing_path_is_a_one_line_error_with_the_target_exit_status() -> None:
    result = probe("virtio_vda", "/no/such/place")
    assert result.exit_code == 4
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith("flashmark: error: /no/such/place: no such file")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads this machine's /sys")
def test_probe_of_this_machines_root_folder() -> None:
    clean = {"FLASHMARK_SYSFS_ROOT": "", "FLASHMARK_PROCFS_ROOT": "", "FLASHMARK_DEBUGFS_ROOT": ""}
    result = CliRunner().invoke(main, ["probe", "/", "--json"], env=clean)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["target_type"] == "folder"
    assert document["layers"][0]["kind"] == "filesystem"
