"""`flashmark doctor` on recorded trees (tests/data/probe, each with its SOURCES.md), and on
copies of them with one condition changed, each change said where it is made."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from flashmark.bench.kind import RUN
from flashmark.doctor.check import DoctorRequest, diagnose
from flashmark.history.store import History
from flashmark.probe.target import probe_target
from flashmark.system.sysroot import SystemRoots
from tests.cli_runner import flashmark
from tests.probe.recorded import DATA

REPORT_DATA = Path(__file__).resolve().parents[1] / "data" / "report"
CPUS = ("cpu0", "cpu1", "cpu2", "cpu3")


def roots_of(tree: Path) -> SystemRoots:
    return SystemRoots(tree / "sys", tree / "proc", tree / "debug", tools=tree / "tools")


def copied(name: str, tmp_path: Path) -> Path:
    tree = tmp_path / name
    shutil.copytree(DATA / name, tree, symlinks=True)
    return tree


def healthy_pi4(tmp_path: Path) -> Path:
    """The Pi 4 tree with a steady supply (get_throttled 0x0) and the ondemand governor."""
    tree = copied("rpi4_sd", tmp_path)
    (tree / "tools/vcgencmd_get_throttled.txt").write_text("throttled=0x0\n")
    for cpu in CPUS:
        governor = tree / f"sys/devices/system/cpu/{cpu}/cpufreq/scaling_governor"
        if governor.exists():
            governor.write_text("ondemand\n")
    return tree


def whats(tree: Path, target: str = "/") -> list[str]:
    result = diagnose(DoctorRequest(target), roots_of(tree))
    return [f"{finding.category}: {finding.what}" for finding in result.findings]


def test_healthy_pi_4_pi_5_and_x86_trees_have_no_finding(tmp_path):
    assert whats(healthy_pi4(tmp_path)) == []  # DDR50 is the Pi 4 host's fastest: no finding
    assert whats(DATA / "rpi5_a2") == []  # SDR104, no throttling
    result = diagnose(DoctorRequest("/"), roots_of(DATA / "virtio_vda"))  # this x86 VM
    assert result.findings == ()
    assert result.not_checked == (
        "under-voltage and throttling: not available here (a Raspberry Pi's `vcgencmd "
        "get_throttled` tells them)",
    )


def test_a_pi_4_under_voltage_throttled_and_on_powersave_is_told_each_fix():
    result = diagnose(DoctorRequest("/"), roots_of(DATA / "rpi4_sd"))
    assert [f.what for f in result.findings] == [
        "under-voltage since boot (get_throttled=0x50000)",  # its throttling is the supply's
        "CPU governor powersave",
    ]
    assert "15 W (5.1 V, 3 A)" in result.findings[0].fix
    assert "scaling_governor" in result.findings[1].fix


def test_a_pi_5_sd_card_fallen_back_to_high_speed_is_capped_at_25_mb_s(tmp_path):
    tree = copied("rpi5_a2", tmp_path)
    log = tree / "tools/dmesg.txt"
    log.write_text(log.read_text().replace("ultra high speed SDR104 SDXC", "high speed SDXC"))
    result = diagnose(DoctorRequest("/"), roots_of(tree))
    (finding,) = result.findings
    assert finding.category == "sd" and finding.what.startswith("SD bus in high speed mode")
    assert finding.cap_bytes_per_second == 25e6


def test_a_pi_5_nvme_at_gen_2_gets_the_gen_3_line_and_its_risk():
    (finding,) = diagnose(DoctorRequest("/"), roots_of(DATA / "nvme_pcie")).findings
    assert finding.what == "PCIe at 5 GT/s x1 (Gen 2), the drive can do 8 GT/s"
    assert finding.fix.startswith("dtparam=pciex1_gen=3 in /boot/firmware/config.txt")
    assert "may be unstable" in finding.fix
    assert finding.cap_bytes_per_second == pytest.approx(500e6)


def test_a_usb_3_stick_at_480_on_usb_storage_is_two_findings():
    assert whats(DATA / "usb_stick_usb_storage", "/dev/sde") == [
        "usb: USB link at 480 Mb/s, the device (USB 3.00) can do 5000 Mb/s",
        "usb: driver usb-storage (Bulk-Only Transport) on a USB 3 device",
    ]


def test_uas_resets_give_the_quirk_only_once_power_is_ruled_out(tmp_path):
    """The JMS578 tree's published kernel log (its SOURCES.md) has no get_throttled beside it:
    power first. The same tree with a steady supply read: the quirk line."""
    result = diagnose(DoctorRequest("/"), roots_of(DATA / "usb_ssd_jms578"))
    (finding,) = result.findings
    assert finding.what == "4 UAS command aborts or resets in the kernel log (bridge 152d:0578)"
    assert finding.fix.startswith("power first: use the official 15 W (5.1 V, 3 A) supply")
    tree = copied("usb_ssd_jms578", tmp_path)
    (tree / "tools/vcgencmd_get_throttled.txt").write_text("throttled=0x0\n")
    (quirk,) = diagnose(DoctorRequest("/"), roots_of(tree)).findings
    assert quirk.fix.startswith("add usb-storage.quirks=152d:0578:u to /boot/firmware/cmdline.txt")
    (tree / "tools/vcgencmd_get_throttled.txt").write_text("throttled=0x50000\n")
    under_voltage = diagnose(DoctorRequest("/"), roots_of(tree)).findings
    assert [f.what.split(" (")[0] for f in under_voltage] == [
        "4 UAS command aborts or resets in the kernel log",
        "under-voltage since boot",
    ]
    assert under_voltage[0].why.startswith("under-voltage was seen")
    # A tree without a kernel log says nothing of UAS.
    assert diagnose(DoctorRequest("/dev/sda"), roots_of(DATA / "usb_ssd_uas")).findings == ()


def test_swap_on_the_card_and_a_sync_mount_are_findings(tmp_path):
    tree = healthy_pi4(tmp_path)
    (tree / "proc/swaps").write_text(
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        "/var/swap                               file\t\t102396\t\t0\t\t-2\n"
    )
    mountinfo = tree / "proc/self/mountinfo"
    mountinfo.write_text(mountinfo.read_text().replace("/ / rw,noatime", "/ / rw,sync,noatime"))
    assert whats(tree) == [
        "host: / mounted with sync",
        "host: swap file /var/swap, on the device",
    ]


def test_the_command_keeps_its_diagnosis_and_prints_its_verdict(tmp_path):
    base = DATA / "nvme_pcie"
    env = {
        "FLASHMARK_SYSFS_ROOT": str(base / "sys"),
        "FLASHMARK_PROCFS_ROOT": str(base / "proc"),
        "FLASHMARK_DEBUGFS_ROOT": str(base / "debug"),
        "FLASHMARK_TOOLS_ROOT": str(base / "tools"),
        "FLASHMARK_DB": str(tmp_path / "history.db"),
    }
    done = flashmark("doctor", "--json", env=env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "flashmark.doctor/1"
    assert document["summary"] == ("1 finding: PCIe at 5 GT/s x1 (Gen 2), the drive can do 8 GT/s")
    shown = flashmark("show", str(document["id"]), env=env)
    assert "dtparam=pciex1_gen=3" in shown.stdout


def run_on(tree: Path, target: str, seq_read_mb_s: float) -> dict[str, Any]:
    """The recorded quick run with its device read from `tree` and `seq_read_mb_s` as its
    fastest sequential figure: a run the history holds for that device."""
    run = RUN.from_document(json.loads((REPORT_DATA / "quick-a1-card.json").read_text()))
    tests = tuple(
        replace(test, read=replace(test.read, bw_bytes=seq_read_mb_s * 1e6))
        if test.spec.name == "seq-read" and test.read is not None
        else test
        for test in run.tests
    )
    probe = probe_target(target, roots_of(tree))
    return RUN.to_document(replace(run, id=None, tests=tests, probe=probe))


@pytest.mark.parametrize(
    ("seq_read_mb_s", "cost"),
    [
        (452.0, "seq-read 452.0 MB/s in run #1 (2026-11-22T01:35:25+00:00): within 20% of "
                "this cap, it is the limit"),
        (210.0, "seq-read 210.0 MB/s in run #1 (2026-11-22T01:35:25+00:00): 58% below this "
                "cap, so something else limits it first"),
    ],
)
def test_a_cap_is_held_against_the_latest_run_on_the_same_device(tmp_path, seq_read_mb_s, cost):
    base = DATA / "nvme_pcie"
    history = History(tmp_path / "history.db")
    other = run_on(DATA / "rpi5_a2", "/", 80.0)  # another device: never the one compared
    mine = run_on(base, "/", seq_read_mb_s)
    for document in (mine, other):
        history.save(kind=RUN.name, target="/", label="", document=document)
    history.save(kind=RUN.name, target="/", label="", document=other)  # newer, not this device
    env = {
        "FLASHMARK_SYSFS_ROOT": str(base / "sys"),
        "FLASHMARK_PROCFS_ROOT": str(base / "proc"),
        "FLASHMARK_DEBUGFS_ROOT": str(base / "debug"),
        "FLASHMARK_TOOLS_ROOT": str(base / "tools"),
        "FLASHMARK_DB": str(tmp_path / "history.db"),
    }
    done = flashmark("doctor", env=env)
    assert done.returncode == 0, done.stderr
    assert "measured" in done.stdout
    assert " ".join(cost.split()) in " ".join(done.stdout.split())
    document = json.loads(flashmark("doctor", "--json", "--no-save", env=env).stdout)
    assert document["measured"]["run_id"] == 1 and document["measured"]["test"] == "seq-read"
