"""SMART of USB, SATA and SCSI drives through smartctl's JSON (flashmark.probe.smart): the
device type a bridge needs, the recorded answers decoded (tests/data/probe/usb_ssd_sat_smart,
usb_nvme_asmedia, usb_nvme_jms581_sat), and what is said when nothing could be read."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flashmark.health.nvme_wear import nvme_wear
from flashmark.health.red_flags import red_flags, worn_out
from flashmark.probe.model import DATA_UNIT_BYTES, Device, Health
from flashmark.probe.nvme import parse_smartctl_json
from flashmark.probe.smart import (
    SmartReading,
    decode_smartctl,
    read_smart,
    smartctl_type,
)
from flashmark.probe.target import probe_target
from flashmark.probe.tools import RecordedToolRunner, SubprocessToolRunner
from flashmark.system.sysroot import SystemRoots
from tests.probe.recorded import DATA, copied_tree, tree_roots

SAT_ANSWER = DATA / "usb_ssd_sat_smart/tools/smartctl_--json=c_-a_-n_standby_dev_sda.txt"
NVME_ANSWER = (
    DATA / "usb_nvme_asmedia/tools/smartctl_--json=c_-a_-n_standby_-d_sntasmedia_dev_sda.txt"
)
# The published attribute rows of the SAT recording (its SOURCES.md): Wear_Leveling_Count
# normalised 99, Total_LBAs_Written 24021862977 blocks of 512 bytes, Power_On_Hours 1376.
WEAR_LEFT, LBAS_WRITTEN, POWER_ON_HOURS = 99, 24_021_862_977, 1376


def device_of(tree: Path, target: str = "/") -> Device:
    device = probe_target(target, tree_roots(tree)).device
    assert device is not None
    return device


def smart_of(tree: Path, target: str = "/") -> SmartReading | None:
    """What read_smart reads of `tree`'s device, smartctl answering from its recorded tools."""
    return read_smart(device_of(tree, target), tree_roots(tree), RecordedToolRunner(tree / "tools"))


def sat_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the USB-SATA tree, and the path of its smartctl answer, to change."""
    tree = copied_tree("usb_ssd_sat_smart", tmp_path / "tree")
    return tree, tree / SAT_ANSWER.relative_to(DATA / "usb_ssd_sat_smart")


def answer_in(
    tree: Path, argv: str, message: dict[str, str], exit_status: int, **more: object
) -> None:
    """smartctl 7.4's JSON answer to `argv`, its `message` and `exit_status` (and `more`), in
    the copied `tree`'s recorded tools."""
    smartctl = {"version": [7, 4], "argv": argv.split(), "messages": [message]}
    document = {"json_format_version": [1, 0], "smartctl": {**smartctl, "exit_status": exit_status}}
    name = argv.replace(" ", "_").replace("/", "_").replace("__", "_")
    (tree / "tools").mkdir(exist_ok=True)
    (tree / "tools" / f"{name}.txt").write_text(json.dumps({**document, **more}), encoding="utf-8")


def with_usb_id(tree: Path, usb_id: str) -> Path:
    """A copy of the one-bridge `tree`, its bridge given `usb_id` (vendor:product)."""
    copy = Path(f"{tree}-{usb_id.replace(':', '')}")
    shutil.copytree(tree, copy, symlinks=True)
    vendor, product = usb_id.split(":")
    (folder,) = {path.parent for path in (copy / "sys").rglob("idProduct")}
    (folder / "idVendor").write_text(f"{vendor}\n")
    (folder / "idProduct").write_text(f"{product}\n")
    return copy


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
    ("tree", "usb_id", "expected"),
    [
        ("usb_ssd_sat_smart", None, None),  # ASMedia 174c:55aa: smartctl's drivedb reads it as SAT
        ("usb_nvme_asmedia", None, "sntasmedia"),  # Crucial X9 Pro 0634:5603
        ("usb_nvme_jms581_sat", None, "sat"),  # JMS581: SATA or NVMe, SAT first
        # The JMS581 tree's bridge given other ids. JMS583's, also JMicron's USB-SATA adapters'
        # default: drivedb knows no bcdDevice that takes `-d sntjmicron`, which resets an ATA
        # drive behind such an adapter.
        ("usb_nvme_jms581_sat", "152d:0583", "sat"),
        ("usb_nvme_jms581_sat", "152d:a583", "sntjmicron"),  # drivedb's other JMS583 id: NVMe
        ("usb_nvme_jms581_sat", "0bda:9220", "sat"),  # RTL9220: "USB->PCIe (NVMe) or SATA"
        ("usb_nvme_jms581_sat", "0bda:9210", "sntrealtek"),
        # a stick drivedb does not list: smartctl refuses it, not flashmark
        ("usb_nvme_jms581_sat", "0781:5590", None),
    ],
)
def test_a_bridge_is_told_only_the_type_drivedb_gives_it(
    tmp_path: Path, tree: str, usb_id: str | None, expected: str | None
) -> None:
    copied = copied_tree(tree, tmp_path / "tree")
    assert smartctl_type(device_of(with_usb_id(copied, usb_id) if usb_id else copied)) == expected


@pytest.mark.parametrize(
    ("usb_id", "nvme"), [("152d:0583", "sntjmicron"), ("0bda:9220", "sntrealtek")]
)
def test_a_dual_bridge_passing_nothing_to_sat_names_the_nvme_pass_through(
    tmp_path: Path, usb_id: str, nvme: str
) -> None:
    tree = with_usb_id(copied_tree("usb_nvme_jms581_sat", tmp_path / "tree"), usb_id)
    reading = smart_of(tree)
    assert reading is not None and reading.health is None
    assert reading.skipped[0].startswith(
        f"SMART not read: the USB bridge {usb_id} passes none to `smartctl -d sat`"
    )
    assert reading.skipped[0].endswith(
        f"; an NVMe drive behind it answers `sudo smartctl -a -d {nvme} /dev/sdc`"
    )


def test_a_bridge_smartctl_does_not_know_is_left_to_it_and_sat_named(tmp_path: Path) -> None:
    """smartctl without -d on a USB id its drivedb.h lacks (lib/os_linux.cpp, lib/scsiata.cpp):
    "Unknown USB bridge [0xVVVV:0xPPPP (0xBCD)]", an error message, exit status 1."""
    tree = copied_tree("usb_stick_usb_storage", tmp_path / "tree")
    argv = "smartctl --json=c -a -n standby /dev/sde"
    refusal = "/dev/sde: Unknown USB bridge [0x0781:0x5590 (0x100)]"
    answer_in(tree, argv, {"string": refusal, "severity": "error"}, exit_status=1)
    runner = RecordedToolRunner(tree / "tools")
    reading = read_smart(device_of(tree, "/dev/sde"), tree_roots(tree), runner)
    assert runner.calls == [tuple(argv.split())]
    assert reading is not None and reading.health is None
    assert reading.skipped == (
        f"SMART not read: smartctl knows no device type for the USB bridge 0781:5590 ({refusal}); "
        "a SATA drive behind a USB-SATA bridge may answer `sudo smartctl -a -d sat /dev/sde`",
    )


def test_a_drive_in_standby_is_left_asleep_and_said_so(tmp_path: Path) -> None:
    """`-n standby` on a spun-down drive: "Device is in STANDBY mode, exit(2)", an information
    message (src/ataprint.cpp), exit status 2."""
    tree = copied_tree("usb_ssd_sat_smart", tmp_path / "tree")
    argv = "smartctl --json=c -a -n standby /dev/sda"
    asleep = {"string": "Device is in STANDBY mode, exit(2)", "severity": "information"}
    device = {"name": "/dev/sda", "info_name": "/dev/sda [SAT]", "type": "sat"}
    answer_in(tree, argv, asleep, exit_status=2, device=device)
    reading = smart_of(tree)
    assert reading == SmartReading(None, ("SMART not read: the drive is in standby (left asleep)",))


def test_a_drive_not_on_usb_is_left_to_smartctls_guess() -> None:
    device = dataclasses.replace(device_of(DATA / "usb_ssd_sat_smart"), kind="sata", usb=None)
    assert smartctl_type(device) is None


def test_smartctl_is_run_with_the_bridges_type_and_its_answer_read() -> None:
    tree = DATA / "usb_nvme_asmedia"
    runner = RecordedToolRunner(tree / "tools")
    reading = read_smart(device_of(tree), tree_roots(tree), runner)
    assert runner.calls == [
        ("smartctl", "--json=c", "-a", "-n", "standby", "-d", "sntasmedia", "/dev/sda")
    ]
    assert reading is not None and reading.health is not None
    assert reading.skipped == () and not reading.needs_root


def test_what_smartctl_could_not_read_is_said() -> None:
    tree = DATA / "usb_ssd_sat_smart"
    device = device_of(tree)
    # A recorded tree without smartctl's answer: nothing to install, no root to ask for.
    missing = read_smart(device, tree_roots(tree), RecordedToolRunner(tree / "no-tools"))
    assert missing == SmartReading(
        None, ("SMART not read: smartctl is not among the recorded tree's tool outputs",)
    )
    as_user = read_smart(device, tree_roots(tree), RecordedToolRunner(tree / "tools_user"))
    assert as_user is not None and as_user.health is None and as_user.needs_root
    bridge = DATA / "usb_nvme_jms581_sat"
    nothing = smart_of(bridge)
    assert nothing is not None and nothing.health is None
    assert nothing.skipped == (
        "SMART not read: the USB bridge 152d:a581 passes none to `smartctl -d sat` (the device "
        "did not open or returned no IDENTIFY data); an NVMe drive behind it answers "
        "`sudo smartctl -a -d sntjmicron /dev/sdc`",
    )


def test_smartctl_missing_on_this_machine_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no smartctl on it
    device = device_of(DATA / "usb_ssd_sat_smart")
    reading = read_smart(device, SystemRoots(), SubprocessToolRunner())
    assert reading is not None and reading.health is None
    assert reading.skipped == (
        "SMART not read: smartctl is not installed (not found on PATH); it comes with "
        "smartmontools: sudo apt install smartmontools",
    )
    assert reading.needs_root == (os.geteuid() != 0)  # Debian's /usr/sbin is off a user's PATH


def test_a_drive_of_another_kind_is_not_asked() -> None:
    tree = DATA / "nvme_pcie"
    runner = RecordedToolRunner(tree / "tools")
    assert read_smart(device_of(tree), tree_roots(tree), runner) is None
    assert runner.calls == []


def test_a_drive_without_a_known_wear_attribute_says_so_and_keeps_the_rest(tmp_path: Path) -> None:
    tree, answer = sat_copy(tmp_path)
    document = json.loads(answer.read_text(encoding="utf-8"))
    table = document["ata_smart_attributes"]["table"]
    table[:] = [row for row in table if row["name"] != "Wear_Leveling_Count"]
    answer.write_text(json.dumps(document), encoding="utf-8")
    reading = smart_of(tree)
    assert reading is not None and reading.health is not None
    assert reading.health.percentage_used is None
    assert reading.health.data_units_written == LBAS_WRITTEN * 512 // DATA_UNIT_BYTES
    assert reading.skipped == (
        "SMART read, but no wear attribute flashmark knows "
        "(`sudo smartctl -a /dev/sda` lists them)",
    )


def test_a_smartctl_without_json_output_is_said(tmp_path: Path) -> None:
    """smartmontools before 7.0 knows no --json: it answers with a usage error."""
    tree, answer = sat_copy(tmp_path)
    answer.write_text("=======> UNRECOGNIZED OPTION: json=c\n", encoding="utf-8")
    reading = smart_of(tree)
    assert reading is not None and reading.health is None
    assert reading.skipped == (
        "SMART not read: smartctl printed no JSON (it needs smartmontools 7.0 on)",
    )


@pytest.mark.parametrize("listed", [False, None])  # said not listed; or a smartctl before the key
def test_wear_and_writes_of_a_drive_smartctl_does_not_list_are_not_read(
    tmp_path: Path, listed: bool | None
) -> None:
    """Such a drive's 177 Wear_Leveling_Count, 233 Media_Wearout_Indicator and 241
    Total_LBAs_Written are drivedb.h's default names, their units the maker's."""
    tree, answer = sat_copy(tmp_path)
    document = json.loads(answer.read_text(encoding="utf-8"))
    if listed is None:
        del document["in_smartctl_database"]
    else:
        document["in_smartctl_database"] = listed
    answer.write_text(json.dumps(document), encoding="utf-8")
    reading = smart_of(tree)
    assert reading is not None and reading.health is not None
    health = reading.health
    assert health.percentage_used is None and health.data_units_written is None
    assert health.sources == ("smartctl -d sat",)
    assert (health.power_on_hours, health.smart_passed) == (POWER_ON_HOURS, True)
    assert reading.skipped == (
        "SMART read, but the drive is not in smartctl's database: the units of its wear and "
        "write attributes are unknown, neither is read (`sudo smartctl -a /dev/sda` lists them)",
    )


@pytest.mark.parametrize(
    "document",
    [
        {"smart_status": "PASSED"},
        {"smart_status": {"passed": True}, "endurance_used": 7},
        {"smart_status": {"passed": True}, "power_on_time": 1376},
        {"smart_status": {"passed": True}, "temperature": 24},
        {"smart_status": {"passed": True}, "temperature": {"current": "24"}},
        {"in_smartctl_database": True, "ata_smart_attributes": {"table": "none"}},
        {"in_smartctl_database": True, "ata_smart_attributes": [1]},
        {
            "in_smartctl_database": True,
            "ata_smart_attributes": {
                "table": [{"id": 241, "name": "Total_LBAs_Written", "raw": 5}]
            },
        },
        {
            "in_smartctl_database": True,
            "ata_smart_attributes": {"table": [{"id": 241, "name": ["Total_LBAs_Written"]}]},
        },
        {
            "in_smartctl_database": True,
            "ata_smart_attributes": {
                "table": [{"id": 177, "name": "Wear_Leveling_Count", "value": True}]
            },
        },
        {"nvme_smart_health_information_log": [0], "smart_status": {"passed": True}},
        {"nvme_smart_health_information_log": {"percentage_used": True}},
        {"smartctl": {"messages": "Permission denied", "exit_status": "2"}},
    ],
)
def test_a_value_of_an_unexpected_type_is_unknown_never_a_crash(document: dict[str, Any]) -> None:
    health = decode_smartctl(document, "smartctl")
    known = (health.percentage_used, health.data_units_written) if health else (None, None)
    assert known == (None, None)
    if health is not None:
        assert health.power_on_hours is None and health.temperature_c is None
        assert health.sources == ("smartctl",)


@pytest.mark.parametrize("answer", ["[]", '"PASSED"', '{"smartctl": 7}', "{}"])
def test_json_that_is_not_smartctls_is_said(tmp_path: Path, answer: str) -> None:
    tree, recorded = sat_copy(tmp_path)
    recorded.write_text(answer)
    reading = smart_of(tree)
    assert reading == SmartReading(None, ("SMART not read: unexpected JSON from smartctl",))


# The keys and attribute names smartctl writes, so that random shapes reach the decoder's paths.
SMARTCTL_KEYS = [
    "smart_status", "passed", "endurance_used", "current_percent", "power_on_time", "hours",
    "temperature", "current", "ata_smart_attributes", "table", "id", "name", "value", "raw",
    "logical_block_size", "in_smartctl_database", "nvme_smart_health_information_log",
    "percentage_used", "data_units_written", "critical_warning", "smartctl", "messages", "string",
    "exit_status",
]  # fmt: skip
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from(
        ["Wear_Leveling_Count", "SSD_Life_Left", "Total_LBAs_Written", "Host_Writes_GiB"]
    ),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(SMARTCTL_KEYS), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(SMARTCTL_KEYS), JSON_VALUES, max_size=8))
def test_any_json_shape_decodes_to_known_types_or_nothing(document: dict[str, Any]) -> None:
    health = decode_smartctl(document, "smartctl")
    if health is None:
        return
    for count in (health.percentage_used, health.data_units_written, health.power_on_hours):
        assert count is None or (type(count) is int and count >= 0)
    assert health.smart_passed in (None, True, False)
    if health.percentage_used is not None and "nvme_smart_health_information_log" not in document:
        assert document.get("in_smartctl_database") is True or "endurance_used" in document


@pytest.mark.parametrize(
    "document",
    [
        {"smart_status": {"passed": True}, "temperature": {"current": 10**400}},
        {
            "smart_status": {"passed": True},
            "nvme_smart_health_information_log": {"temperature": 10**400},
        },
    ],
)
def test_a_number_beyond_a_floats_range_is_unknown(document: dict[str, Any]) -> None:
    health = decode_smartctl(document, "smartctl")
    assert health is not None and health.temperature_c is None
