"""SMART of USB, SATA and SCSI drives through smartctl's JSON (flashmark.probe.smart): the
device type a bridge needs, the recorded answers decoded (tests/data/probe/usb_ssd_sat_smart,
usb_nvme_asmedia, usb_nvme_jms581_sat), and what is said when nothing could be read."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from flashmark.health.nvme_wear import nvme_wear
from flashmark.health.red_flags import red_flags, worn_out
from flashmark.probe.model import DATA_UNIT_BYTES, Device, Health
from flashmark.probe.nvme import parse_smartctl_json
from flashmark.probe.smart import decode_smartctl, read_smart, smartctl_type
from flashmark.probe.target import probe_target
from flashmark.probe.tools import RecordedToolRunner
from flashmark.system.sysroot import SystemRoots
from tests.probe.recorded import DATA

SAT_ANSWER = DATA / "usb_ssd_sat_smart/tools/smartctl_--json=c_-a_-d_sat_dev_sda.txt"
NVME_ANSWER = DATA / "usb_nvme_asmedia/tools/smartctl_--json=c_-a_-d_sntasmedia_dev_sda.txt"
# The published attribute rows of the SAT recording (its SOURCES.md): Wear_Leveling_Count
# normalised 99, Total_LBAs_Written 24021862977 blocks of 512 bytes, Power_On_Hours 1376.
WEAR_LEFT, LBAS_WRITTEN, POWER_ON_HOURS = 99, 24_021_862_977, 1376


def roots_of(tree: Path, tools: str = "tools") -> SystemRoots:
    return SystemRoots(tree / "sys", tree / "proc", tree / "debug", tools=tree / tools)


def device_of(tree: Path) -> Device:
    device = probe_target("/", roots_of(tree)).device
    assert device is not None
    return device


def test_an_ata_ssd_gives_its_wear_attribute_writes_hours_and_verdict() -> None:
    text = SAT_ANSWER.read_text(encoding="utf-8")
    health = decode_smartctl(json.loads(text), "smartctl -d sat")
    assert health is not None
    assert health.percentage_used == 100 - WEAR_LEFT
    assert health.data_units_written == LBAS_WRITTEN * 512 // DATA_UNIT_BYTES
    assert health.power_on_hours == POWER_ON_HOURS
    assert health.smart_passed is True
    assert health.temperature_c == 24
    assert health.critical_warning is None and health.available_spare is None
    assert health.sources == (
        "smartctl -d sat",
        "attribute 177 Wear_Leveling_Count",
        "attribute 241 Total_LBAs_Written",
    )
    reading = nvme_wear(health)  # counted from the drive's first write, as NVMe's
    assert reading is not None
    assert reading.cumulative_bytes == health.data_units_written * DATA_UNIT_BYTES
    assert (reading.low, reading.high) == (0.01, 0.02)
    assert red_flags(health) == ()


def test_an_nvme_drive_behind_a_bridge_fills_the_fields_the_nvme_path_does() -> None:
    text = NVME_ANSWER.read_text(encoding="utf-8")
    health = decode_smartctl(json.loads(text), "smartctl -d sntasmedia")
    assert health is not None
    log = parse_smartctl_json(text)  # the NVMe path's own reading of the same log
    assert health.percentage_used == log["percentage_used"] == 0
    assert health.data_units_written == log["data_units_written"] == 621_718
    assert health.available_spare == log["available_spare"]
    assert health.available_spare_threshold == log["available_spare_threshold"]
    assert health.critical_warning == log["critical_warning"] == 0
    assert health.temperature_c == log["temperature_c"]
    assert health.smart_passed is True and health.power_on_hours is None
    assert nvme_wear(health) is not None
    assert red_flags(health) == ()


def test_a_scsi_drive_gives_its_endurance_indicator() -> None:
    """smartctl's key for a SCSI drive's "Percentage used endurance indicator" (scsiprint.cpp)."""
    document = {"smart_status": {"passed": True}, "endurance_used": {"current_percent": 7}}
    health = decode_smartctl(document, "smartctl")
    assert health is not None and health.percentage_used == 7


def test_a_failed_self_assessment_is_a_wear_alarm_unless_nvme_says_why() -> None:
    failed = Health(smart_passed=False)
    assert red_flags(failed) == (
        "SMART self-assessment failed: an attribute is at its failure threshold",
    )
    assert worn_out(failed)
    # smartctl derives an NVMe drive's verdict from critical_warning, whose bits name it.
    hot = Health(smart_passed=False, critical_warning=2)
    assert red_flags(hot) == ("critical warning: temperature beyond its threshold",)
    assert not worn_out(hot)


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        ("usb_ssd_sat_smart", "sat"),  # ASMedia 174c:55aa: a SATA bridge
        ("usb_nvme_asmedia", "sntasmedia"),  # Crucial X9 Pro 0634:5603
        ("usb_nvme_jms581_sat", "sat"),  # JMS581: SATA or NVMe, SAT first
    ],
)
def test_the_device_type_follows_the_bridge(tree: str, expected: str) -> None:
    assert smartctl_type(device_of(DATA / tree), roots_of(DATA / tree)) == expected


@pytest.mark.parametrize(
    ("bcd_device", "expected"),
    [(None, "sat"), ("0414", "sat"), ("9128", "sat"), ("0214", "sntjmicron")],
)
def test_a_jms583_id_is_nvme_only_by_a_bcd_device_drivedb_gives_no_sata_adapter(
    tmp_path: Path, bcd_device: str | None, expected: str
) -> None:
    """152d:0583 is also JMicron's USB-SATA adapters' default id (drivedb.h), and
    `-d sntjmicron` resets an ATA drive behind one of those."""
    tree = tmp_path / "tree"
    shutil.copytree(DATA / "usb_nvme_jms581_sat", tree, symlinks=True)
    usb = next((tree / "sys").rglob("2-3"))
    (usb / "idProduct").write_text("0583\n")
    if bcd_device is not None:
        (usb / "bcdDevice").write_text(f"{bcd_device}\n")
    assert smartctl_type(device_of(tree), roots_of(tree)) == expected


def test_a_drive_not_on_usb_is_left_to_smartctls_guess() -> None:
    device = dataclasses.replace(device_of(DATA / "usb_ssd_sat_smart"), kind="sata", usb=None)
    assert smartctl_type(device, roots_of(DATA / "usb_ssd_sat_smart")) is None


def test_smartctl_is_run_with_the_bridges_type_and_its_answer_read() -> None:
    tree = DATA / "usb_nvme_asmedia"
    runner = RecordedToolRunner(tree / "tools")
    reading = read_smart(device_of(tree), roots_of(tree), runner)
    assert runner.calls == [("smartctl", "--json=c", "-a", "-d", "sntasmedia", "/dev/sda")]
    assert reading is not None and reading.health is not None
    assert reading.skipped == () and not reading.needs_root


def test_what_smartctl_could_not_read_is_said() -> None:
    tree = DATA / "usb_ssd_sat_smart"
    device = device_of(tree)
    missing = read_smart(device, roots_of(tree), RecordedToolRunner(tree / "no-tools"))
    assert missing is not None and missing.health is None
    assert missing.skipped[0].endswith(
        "it comes with smartmontools: sudo apt install smartmontools"
    )
    as_user = read_smart(device, roots_of(tree), RecordedToolRunner(tree / "tools_user"))
    assert as_user is not None and as_user.health is None and as_user.needs_root
    bridge = DATA / "usb_nvme_jms581_sat"
    nothing = read_smart(device_of(bridge), roots_of(bridge), RecordedToolRunner(bridge / "tools"))
    assert nothing is not None and nothing.health is None
    assert nothing.skipped == (
        "SMART not read: the USB bridge 152d:a581 passes none to `smartctl -d sat` (the device "
        "did not open or returned no IDENTIFY data); an NVMe drive behind it answers "
        "`sudo smartctl -a -d sntjmicron /dev/sdc`",
    )


def test_a_drive_of_another_kind_is_not_asked() -> None:
    tree = DATA / "nvme_pcie"
    runner = RecordedToolRunner(tree / "tools")
    assert read_smart(device_of(tree), roots_of(tree), runner) is None
    assert runner.calls == []


def test_a_drive_without_a_known_wear_attribute_says_so_and_keeps_the_rest(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(DATA / "usb_ssd_sat_smart", tree, symlinks=True)
    answer = tree / SAT_ANSWER.relative_to(DATA / "usb_ssd_sat_smart")
    document = json.loads(answer.read_text(encoding="utf-8"))
    table = document["ata_smart_attributes"]["table"]
    table[:] = [row for row in table if row["name"] != "Wear_Leveling_Count"]
    answer.write_text(json.dumps(document), encoding="utf-8")
    reading = read_smart(device_of(tree), roots_of(tree), RecordedToolRunner(tree / "tools"))
    assert reading is not None and reading.health is not None
    assert reading.health.percentage_used is None
    assert reading.health.data_units_written == LBAS_WRITTEN * 512 // DATA_UNIT_BYTES
    assert reading.skipped == (
        "SMART read, but no wear attribute flashmark knows "
        "(`sudo smartctl -a -d sat /dev/sda` lists them)",
    )


def test_a_smartctl_without_json_output_is_said(tmp_path: Path) -> None:
    """smartmontools before 7.0 knows no --json: it answers with a usage error."""
    tree = tmp_path / "tree"
    shutil.copytree(DATA / "usb_ssd_sat_smart", tree, symlinks=True)
    answer = tree / SAT_ANSWER.relative_to(DATA / "usb_ssd_sat_smart")
    answer.write_text("=======> UNRECOGNIZED OPTION: json=c\n", encoding="utf-8")
    reading = read_smart(device_of(tree), roots_of(tree), RecordedToolRunner(tree / "tools"))
    assert reading is not None and reading.health is None
    assert reading.skipped == (
        "SMART not read: smartctl printed no JSON (it needs smartmontools 7.0 on)",
    )
