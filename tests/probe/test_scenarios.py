"""probe_target() on recorded trees: one test (or a few) per emulated machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flashmark.bench.grading.conditions import judge_probe
from flashmark.codec import decode, encode
from flashmark.errors import TargetNotFound
from flashmark.probe.model import ProbeReport
from flashmark.probe.summary import measured_summary
from flashmark.probe.target import probe_target
from flashmark.probe.tools import RecordedToolRunner
from flashmark.system.sysroot import SystemRoots
from tests.probe.recorded import Scenario, load_scenario


def probed(target: str, roots: SystemRoots, tools: RecordedToolRunner) -> ProbeReport:
    """A probe as `flashmark probe` shows it: observed, then judged (its warnings)."""
    return judge_probe(probe_target(target, roots, tools))


def probed_scenario(name: str, target: str = "/") -> ProbeReport:
    """The probe of `target` on the recorded scenario `name`."""
    return probed(target, *load_scenario(name))


def test_sd_card_on_raspberry_pi_4() -> None:
    report = probed_scenario("rpi4_sd")
    assert [(layer.kind, layer.name) for layer in report.layers] == [
        ("filesystem", "/"),
        ("partition", "mmcblk0p2"),
        ("device", "mmcblk0"),
    ]
    (card_device,) = report.devices
    assert (card_device.name, card_device.kind) == ("mmcblk0", "sd")
    assert card_device.vendor == "SanDisk (Western Digital)"
    assert (card_device.model, card_device.serial, card_device.firmware) == (
        "SN512",
        "0xfff7b17b",
        "8.0",
    )
    assert card_device.capacity_bytes == 999743488 * 512
    card = card_device.card
    assert card is not None and card.cid is not None and card.scr is not None
    assert card.cid.manufactured == "2021-07"  # the listing's date:07/2021
    assert card.scr.spec_version == "6.xx"
    assert card.ssr is None and card.claimed.names() == ()  # no ssr in the source listing
    bus = card_device.mmc_bus
    assert bus is not None
    assert (bus.timing, bus.actual_clock_hz, bus.bus_width_bits, bus.timing_source) == (
        "sd uhs DDR50",
        50_000_000,
        4,
        "debugfs ios",
    )
    assert bus.controller == "sdhci-iproc"
    env = report.environment
    assert env.board == "Raspberry Pi 4 Model B Rev 1.4"
    assert env.cpu_governors == ("powersave",)
    assert env.cpu_mhz == (600, 600, 600, 600)
    assert env.cpu_count == 4
    assert env.filesystem == "ext4" and env.mount_options == "rw,noatime"
    assert env.throttling is not None
    assert env.throttling.since_boot == ("under-voltage", "throttled")
    assert any("powersave" in w for w in report.warnings)
    assert any("under-voltage since boot" in w for w in report.warnings)


def test_a2_card_on_raspberry_pi_5_without_command_queueing(scenario: Scenario) -> None:
    roots, tools = scenario("rpi5_a2")
    report = probed("/", roots, tools)
    device = report.device
    assert device is not None and device.card is not None
    assert device.vendor == "Kingston"
    claimed = device.card.claimed
    assert (claimed.speed_class, claimed.uhs_grade, claimed.video_class, claimed.app_class) == (
        "C10",
        "U3",
        "V30",
        "A2",
    )
    bus = device.mmc_bus
    assert bus is not None
    assert bus.controller == "sdhci-brcmstb"
    assert (bus.timing, bus.timing_source) == ("ultra high speed SDR104 SDXC", "kernel log")
    assert bus.command_queue is False
    assert report.environment.board == "Raspberry Pi 5 Model B Rev 1.0"
    assert report.environment.throttling is not None and report.environment.throttling.now == ()
    assert ("dmesg",) in tools.calls
    document = encode(report)
    assert document["devices"][0]["card"]["claimed"] == {
        "speed_class": "C10",
        "uhs_grade": "U3",
        "video_class": "V30",
        "app_class": "A2",
    }


def test_a2_card_partition_given_as_device_node() -> None:
    report = probed_scenario("rpi5_a2", "/dev/mmcblk0p2")
    assert report.target_type == "block device"
    assert [layer.kind for layer in report.layers] == ["partition", "device"]
    assert report.devices[0].name == "mmcblk0"


def test_emmc_module_with_wear_data() -> None:
    report = probed_scenario("emmc_wear")
    device = report.device
    assert device is not None and device.kind == "emmc"
    assert (device.vendor, device.model) == ("Samsung", "M8G1GC")
    assert device.card is not None and device.card.cid is not None
    assert device.card.cid.manufactured == "2013-05"
    assert device.health is not None
    assert (device.health.life_time_a, device.health.life_time_b, device.health.pre_eol) == (
        "0-10%",
        "0-10%",
        "normal",
    )


def test_nvme_on_a_pcie_link_below_its_maximum() -> None:
    report = probed_scenario("nvme_pcie")
    device = report.device
    assert device is not None and device.kind == "nvme"
    assert (device.model, device.firmware) == ("SanDisk Ultra 3D NVMe", "211210WD")
    assert device.capacity_bytes == 976773168 * 512
    assert device.pcie is not None
    assert (device.pcie.current_speed, device.pcie.current_width) == ("5.0 GT/s PCIe", 1)
    assert (device.pcie.max_speed, device.pcie.max_width) == ("8.0 GT/s PCIe", 4)
    assert device.pcie.below_max is True
    assert device.health is not None
    assert (device.health.percentage_used, device.health.temperature_c) == (0, 35.0)
    assert device.health.critical_warning == 0
    assert device.health.sources == ("nvme smart-log",)
    assert any("PCIe at 5 GT/s x1 (Gen 2), the drive can do 8 GT/s" in w for w in report.warnings)


def test_usb_stick_on_usb_storage_at_high_speed() -> None:
    report = probed_scenario("usb_stick_usb_storage", "/dev/sde")
    device = report.device
    assert device is not None and device.kind == "usb" and device.usb is not None
    usb = device.usb
    assert (usb.vendor_id, usb.product_id, usb.driver) == ("0781", "5590", "usb-storage")
    assert (usb.speed_mbps, usb.best_speed_mbps) == (480, 5000)
    assert any("USB link at 480 Mb/s" in w for w in report.warnings)
    assert any("usb-storage" in w for w in report.warnings)


def test_usb_ssd_on_uas_at_superspeed() -> None:
    report = probed_scenario("usb_ssd_uas", "/dev/sda")
    device = report.device
    assert device is not None and device.usb is not None
    assert (device.usb.driver, device.usb.speed_mbps, device.usb.port) == ("uas", 5000, "6-1.4")
    assert device.capacity_bytes == 234441648 * 512  # 111.8 GiB as sbc-bench printed
    assert not [w for w in report.warnings if "USB" in w or "uas" in w]


def test_ufs_health_descriptor() -> None:
    report = probed_scenario("ufs")
    assert [layer.kind for layer in report.layers] == ["filesystem", "partition", "device"]
    device = report.device
    assert device is not None and device.kind == "ufs"
    assert device.vendor == "Samsung"  # manufacturer_id 0x01CE, UFS_VENDOR_SAMSUNG
    assert device.logical_sector_bytes == 4096
    assert device.health is not None
    assert (device.health.life_time_a, device.health.life_time_b, device.health.pre_eol) == (
        "10-20%",
        "0-10%",
        "normal",
    )


def test_this_machines_virtio_disk() -> None:
    report = probed_scenario("virtio_vda")
    device = report.device
    assert device is not None
    assert (device.name, device.kind, device.vendor) == ("vda", "virtio", "0x1af4")
    assert device.capacity_bytes == 536870912 * 512
    assert (device.logical_sector_bytes, device.physical_sector_bytes) == (512, 4096)
    assert (device.scheduler, device.read_ahead_kb) == ("mq-deadline", 8192)
    assert report.environment.filesystem == "ext4"
    assert report.environment.distribution == "Debian GNU/Linux 12 (bookworm)"


def test_this_machines_loop_device_backed_by_a_file() -> None:
    report = probed_scenario("loop_file", "/dev/loop1")
    kinds = [(layer.kind, layer.name) for layer in report.layers]
    assert kinds[0] == ("loop", "loop1")
    assert "backed by /tmp/flashmark-loop." in report.layers[0].detail
    assert kinds[1:] == [("filesystem", "/"), ("device", "vda")]
    # A run on it measured the loop device and its file, not the disk that holds the file:
    # the loop is the device (results are filed under it), the disk a layer beneath.
    assert [(d.name, d.kind) for d in report.devices] == [("loop1", "loop")]
    assert report.layers[-1].detail == "holds the backing file, not the device measured"
    measured = measured_summary(report)
    assert measured is not None
    assert measured.startswith("loop1 (loop device, backed by /tmp/flashmark-loop.")
    capacity = report.devices[0].capacity_bytes
    assert capacity and measured.endswith(f" on vda: {capacity / 1e9:.1f} GB")


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("rpi4_sd", "/"),
        ("rpi5_a2", "/"),
        ("emmc_wear", "/"),
        ("nvme_pcie", "/"),
        ("usb_ssd_uas", "/dev/sda"),
        ("ufs", "/"),
        ("virtio_vda", "/"),
    ],
)
def test_report_round_trips_through_json(name: str, target: str) -> None:
    report = probed_scenario(name, target)
    document = encode(report)
    assert next(iter(document)) == "schema" and document["schema"] == "flashmark.probe/1"
    assert decode(ProbeReport, document) == report


def test_missing_target_raises_target_not_found(scenario: Scenario) -> None:
    roots, tools = scenario("virtio_vda")
    with pytest.raises(TargetNotFound, match="no-such-folder"):
        probe_target("/no-such-folder/at/all", roots, tools)


def test_malformed_register_is_reported_as_unreadable_not_raised(
    scenario: Scenario, probe_data: Path, tmp_path: Path
) -> None:
    shutil.copytree(probe_data / "rpi5_a2", tmp_path / "tree", symlinks=True)
    ssr = next((tmp_path / "tree" / "sys").rglob("ssr"))
    ssr.write_text("not a register\n")
    roots = SystemRoots(tmp_path / "tree/sys", tmp_path / "tree/proc", tmp_path / "tree/debug")
    _, tools = scenario("rpi5_a2")
    report = probed("/", roots, tools)
    device = report.device
    assert device is not None and device.card is not None
    assert device.card.ssr is None
    (item,) = [u for u in device.unreadable if u.field == "ssr"]
    assert item.raw == "not a register"
    assert device.card.cid is not None  # the other registers still decode
    assert any("ssr unreadable" in note for note in report.notes)
