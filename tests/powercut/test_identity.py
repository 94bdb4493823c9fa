"""Finding the device again after its power came back: by what it says about itself, under
whatever name it returns, and never another device that took its old name (recorded sysfs
trees built here, the layout of Documentation/ABI/stable/sysfs-block)."""

from __future__ import annotations

from pathlib import Path

from flashmark.system.device_identity import (
    device_identity,
    find_by_identity,
    wait_for_device,
)
from flashmark.system.sysroot import SystemRoots

USB = "devices/pci0000:00/0000:00:14.0/usb1/{port}"


def usb_disk(
    sys: Path, name: str, *, port: str, serial: str, partitions: int = 1, lun: int = 0
) -> None:
    device = sys / USB.format(port=port)
    device.mkdir(parents=True, exist_ok=True)
    for attribute, value in (("idVendor", "0781"), ("idProduct", "5581"), ("serial", serial)):
        (device / attribute).write_text(value + "\n")
    scsi = device / f"{port}:1.0" / "host0" / "target0:0:0" / f"0:0:0:{lun}"
    disk = scsi / "block" / name
    disk.mkdir(parents=True)
    (disk / "device").symlink_to(Path("../.."))
    (disk / "size").write_text("125042688\n")
    (disk / "dev").write_text("8:0\n")
    _link(sys, name, disk)
    for number in range(1, partitions + 1):
        part = disk / f"{name}{number}"
        part.mkdir()
        (part / "partition").write_text(f"{number}\n")
        (part / "start").write_text(f"{2048 * number}\n")
        (part / "size").write_text("1000000\n")
        (part / "dev").write_text(f"8:{number}\n")
        _link(sys, f"{name}{number}", part)


def _link(sys: Path, name: str, target: Path) -> None:
    folder = sys / "class" / "block"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).symlink_to(target)


def roots_at(tmp_path: Path) -> SystemRoots:
    return SystemRoots(sysfs=tmp_path / "sys", procfs=tmp_path / "proc", debugfs=tmp_path / "d")


def test_a_usb_stick_is_known_by_its_serial_and_lun_and_its_partition_by_start(tmp_path):
    usb_disk(tmp_path / "sys", "sdb", port="1-1", serial="4C530001")
    usb_disk(tmp_path / "sys", "sdc", port="1-1", serial="4C530001", lun=1, partitions=0)
    roots = roots_at(tmp_path)
    assert device_identity("sdb", roots) == "usb:0781:5581:4C530001"
    assert device_identity("sdb1", roots) == "usb:0781:5581:4C530001/part@2048"
    # A card reader's second slot: the same USB serial, told apart by its LUN.
    assert device_identity("sdc", roots) == "usb:0781:5581:4C530001:lun1"


def test_it_is_found_under_its_new_name_and_not_at_its_old_one(tmp_path):
    usb_disk(tmp_path / "old" / "sys", "sdb", port="1-1", serial="4C530001")
    identity = device_identity("sdb1", roots_at(tmp_path / "old"))
    assert identity is not None
    # After the cut: another stick took sdb, ours came back as sdc.
    usb_disk(tmp_path / "new" / "sys", "sdb", port="1-2", serial="99990002")
    usb_disk(tmp_path / "new" / "sys", "sdc", port="1-1", serial="4C530001")
    assert find_by_identity(identity, roots_at(tmp_path / "new")) == "sdc1"
    waited = wait_for_device(identity, roots_at(tmp_path / "new"), timeout_s=0)
    assert waited is not None
    assert (waited[0].name, waited[0].node, waited[0].size_bytes) == (
        "sdc1",
        "/dev/sdc1",
        1000000 * 512,
    )


def test_an_sd_card_is_known_by_its_cid(tmp_path):
    sys = tmp_path / "sys"
    card = sys / "devices/platform/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa"
    disk = card / "block" / "mmcblk0"
    disk.mkdir(parents=True)
    (card / "cid").write_text("035344534333324780dd2a2e8c013700\n")
    (disk / "device").symlink_to(Path("../.."))
    (disk / "size").write_text("62333952\n")
    _link(sys, "mmcblk0", disk)
    assert device_identity("mmcblk0", roots_at(tmp_path)) == "cid:035344534333324780dd2a2e8c013700"


def test_a_loop_device_is_known_by_its_backing_file_and_offset(tmp_path):
    sys = tmp_path / "sys"
    image = tmp_path / "flash"
    image.write_bytes(b"")
    loop = sys / "devices/virtual/block/loop3"
    (loop / "loop").mkdir(parents=True)
    (loop / "loop" / "backing_file").write_text(f"{image}\n")
    (loop / "loop" / "offset").write_text("4096\n")
    (loop / "size").write_text("524288\n")
    _link(sys, "loop3", loop)
    status = image.stat()
    expected = f"loop:{status.st_dev}:{status.st_ino}@4096"
    assert device_identity("loop3", roots_at(tmp_path)) == expected


def test_a_device_that_does_not_come_back_is_waited_for_only_as_long_as_asked(tmp_path):
    (tmp_path / "sys" / "class" / "block").mkdir(parents=True)
    now = [0.0]
    found = wait_for_device(
        "cid:0353",
        roots_at(tmp_path),
        timeout_s=5.0,
        clock=lambda: now[0],
        sleep=lambda seconds: now.__setitem__(0, now[0] + seconds),
    )
    assert found is None and 5.0 <= now[0] < 5.2
