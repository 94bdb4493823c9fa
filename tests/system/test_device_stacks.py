"""Whole device stacks on synthetic sysfs trees: LUKS, LVM, md RAID, partitions, loop chains.

This kernel has no device-mapper or md, so these stacks are laid out as the kernel shows them
(tests/system/synthetic_sysfs.py); real loop devices are in tests/cli/test_device_stacks.py.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path

import pytest

from flashmark.errors import TargetPermissionDenied, UnsafeDevice
from flashmark.probe.resolve import resolve_target
from flashmark.system.device_safety import claim_for_writing, refusal_reasons
from flashmark.system.device_stack import (
    Role,
    StackMember,
    device_stack,
    kernel_name_of_node,
    source_device_name,
)
from tests.system.synthetic_sysfs import SyntheticSystem

LUKS_UUID = "CRYPT-LUKS2-0b6a7d3c9e4f4a7e8d1c2b3a4f5e6d7c-data"
LVM_UUID = "LVM-Xw3kq9R2mT7yP0aZ"


class FakeClaimer:
    """Stands in for the O_EXCL opener: records claims and releases; can answer EBUSY."""

    def __init__(
        self,
        busy: set[str] | None = None,
        on_claim: Callable[[], None] | None = None,
        forbidden: set[str] | None = None,
    ) -> None:
        self.busy = busy or set()
        self.forbidden = forbidden or set()  # EACCES: this user may not open them
        self.on_claim = on_claim
        self.claimed: list[str] = []
        self.released: list[str] = []

    def __call__(self, member: StackMember) -> Callable[[], None]:
        if member.name in self.busy:
            raise OSError(errno.EBUSY, "Device or resource busy")
        if member.name in self.forbidden:
            raise PermissionError(errno.EACCES, "Permission denied")
        self.claimed.append(member.name)
        if self.on_claim is not None:
            self.on_claim()
        return lambda: self.released.append(member.name)


def reasons_for(system: SyntheticSystem, name: str) -> tuple[str, ...]:
    return refusal_reasons(device_stack(name, system.roots), system.roots)


def refused(
    system: SyntheticSystem,
    name: str,
    claimer: FakeClaimer | None = None,
    error: type[Exception] = UnsafeDevice,
) -> Exception:
    """The refusal of a claim on /dev/`name`, through `claimer` (by default one that grants)."""
    with (
        pytest.raises(error) as caught,
        claim_for_writing(f"/dev/{name}", system.roots, claimer=claimer or FakeClaimer()),
    ):
        pytest.fail(f"claimed /dev/{name}")
    return caught.value


@pytest.fixture
def laptop(tmp_path: Path) -> SyntheticSystem:
    """sda: sda1 /boot; sda2 an LVM physical volume with vg-root on /, vg-data under a LUKS
    mapping mounted on /data, and vg-scratch that nothing uses."""
    system = SyntheticSystem(tmp_path)
    system.disk("sda", "8:0")
    system.partition("sda", "sda1", "8:1", start=2048, sectors=1 << 20)
    system.partition("sda", "sda2", "8:2", start=(1 << 20) + 2048, sectors=1 << 20)
    system.dm("dm-0", "253:0", "vg-root", LVM_UUID + "root", on=["sda2"])
    system.dm("dm-1", "253:1", "vg-data", LVM_UUID + "data", on=["sda2"])
    system.dm("dm-2", "253:2", "data", LUKS_UUID, on=["dm-1"])
    system.dm("dm-3", "253:3", "vg-scratch", LVM_UUID + "scratch", on=["sda2"])
    system.mount("sda1", "/boot")
    system.mount("dm-0", "/", source="/dev/mapper/vg-root")
    system.mount("dm-2", "/data", source="/dev/mapper/data")
    return system


def test_the_system_disk_names_every_member_in_use(laptop: SyntheticSystem) -> None:
    reasons = reasons_for(laptop, "sda")
    assert "it has partition /dev/sda1, which is mounted on /boot" in reasons
    assert (
        "it has partition /dev/sda2, which is held by /dev/dm-0 (LVM 'vg-root'), which holds "
        "the root filesystem (/dev/mapper/vg-root on /)"
    ) in reasons
    assert (
        "it has partition /dev/sda2, which is held by /dev/dm-1 (LVM 'vg-data'), which is held "
        "by /dev/dm-2 (LUKS 'data'), which is mounted on /data"
    ) in reasons
    # vg-scratch is active, so it holds sda2 although nothing is mounted on it
    assert "it has partition /dev/sda2, which is held by /dev/dm-3 (LVM 'vg-scratch')" in reasons


def test_a_logical_volume_under_a_mounted_luks_mapping_is_refused(
    laptop: SyntheticSystem,
) -> None:
    message = str(refused(laptop, "dm-1"))
    assert message.startswith("refusing to write to /dev/dm-1: ")
    assert "it is held by /dev/dm-2 (LUKS 'data'), which is mounted on /data" in message


def test_an_unused_logical_volume_beside_the_root_volume_is_refused(
    laptop: SyntheticSystem,
) -> None:
    # flashmark does not read dm tables to prove two volumes' extents apart: one PV, one stack
    assert (
        "it is built on /dev/sda2, which is held by /dev/dm-0 (LVM 'vg-root'), which holds the "
        "root filesystem (/dev/mapper/vg-root on /)"
    ) in reasons_for(laptop, "dm-3")


def test_an_open_luks_mapping_holds_its_partition_with_nothing_mounted(tmp_path: Path) -> None:
    system = SyntheticSystem(tmp_path)
    system.disk("sdb", "8:16")
    system.partition("sdb", "sdb1", "8:17", start=2048, sectors=1 << 20)
    system.dm("dm-4", "253:4", "backup", LUKS_UUID, on=["sdb1"])
    assert reasons_for(system, "sdb") == (
        "it has partition /dev/sdb1, which is held by /dev/dm-4 (LUKS 'backup')",
    )
    assert reasons_for(system, "sdb1") == ("it is held by /dev/dm-4 (LUKS 'backup')",)


@pytest.fixture
def raid(tmp_path: Path) -> SyntheticSystem:
    """md0 (raid1 on sdc1 + sdd1) mounted on /srv; md1 (raid1 on sde1 + sdf1) unused, while
    sdf2 beside it is mounted on /home."""
    system = SyntheticSystem(tmp_path)
    for disk, major_minor in (("sdc", 32), ("sdd", 48), ("sde", 64), ("sdf", 80)):
        system.disk(disk, f"8:{major_minor}")
        system.partition(disk, f"{disk}1", f"8:{major_minor + 1}", start=2048, sectors=1 << 19)
        system.partition(
            disk, f"{disk}2", f"8:{major_minor + 2}", start=(1 << 19) + 2048, sectors=1 << 19
        )
    system.md("md0", "9:0", "raid1", on=["sdc1", "sdd1"])
    system.md("md1", "9:1", "raid1", on=["sde1", "sdf1"])
    system.mount("md0", "/srv")
    system.mount("sdf2", "/home")
    return system


def test_a_disk_with_a_mounted_raid_member_is_refused(raid: SyntheticSystem) -> None:
    assert reasons_for(raid, "sdd") == (
        "it has partition /dev/sdd1, which is held by /dev/md0 (md raid1), which is mounted on "
        "/srv",
    )


def test_an_unused_array_is_accepted_and_only_it_is_claimed(raid: SyntheticSystem) -> None:
    claimer = FakeClaimer()
    with claim_for_writing("/dev/md1", raid.roots, claimer=claimer) as claim:
        roles = {m.name: m.role for m in claim.stack.members}
        assert claimer.released == []
    # md claims sde1 and sdf1 itself; their disks are partly claimed through them; sdf2 is a
    # sibling partition, outside the sectors md1 writes
    assert roles == {
        "md1": Role.TARGET,
        "sde1": Role.BELOW,
        "sdf1": Role.BELOW,
        "sde": Role.PARENT,
        "sdf": Role.PARENT,
    }
    assert claimer.claimed == ["md1"] and claimer.released == ["md1"]
    assert claim.claimed == ("/dev/md1 (md raid1)",)


@pytest.fixture
def card(tmp_path: Path) -> SyntheticSystem:
    """sdg: sdg1 and sdg2 side by side; sdg2 mounted."""
    system = SyntheticSystem(tmp_path)
    system.disk("sdg", "8:96")
    system.partition("sdg", "sdg1", "8:97", start=2048, sectors=4096)
    system.partition("sdg", "sdg2", "8:98", start=6144, sectors=4096)
    system.mount("sdg2", "/media/pi/rootfs")
    return system


def test_a_partition_beside_a_mounted_one_is_accepted(card: SyntheticSystem) -> None:
    claimer = FakeClaimer()
    with claim_for_writing("/dev/sdg1", card.roots, claimer=claimer) as claim:
        assert claim.claimed == ("/dev/sdg1",)
    assert claimer.claimed == ["sdg1"]


def test_an_overlapping_sibling_partition_counts(card: SyntheticSystem) -> None:
    card.partition("sdg", "sdg3", "8:99", start=4096, sectors=4096)  # overlaps sdg1's end
    card.mount("sdg3", "/mnt/overlap")
    assert reasons_for(card, "sdg1") == (
        "it overlaps partition /dev/sdg3, which is mounted on /mnt/overlap",
    )


def test_the_whole_disk_mounted_refuses_its_partitions(tmp_path: Path) -> None:
    # a hybrid ISO image on a USB stick: iso9660 on the whole disk, partitions inside it
    system = SyntheticSystem(tmp_path)
    system.disk("sdh", "8:112")
    system.partition("sdh", "sdh1", "8:113", start=64, sectors=8192)
    system.partition("sdh", "sdh2", "8:114", start=8256, sectors=8192)
    system.mount("sdh", "/media/cdrom")
    assert reasons_for(system, "sdh2") == (
        "it is a partition of /dev/sdh, which is mounted on /media/cdrom",
    )


def test_the_target_holding_the_root_filesystem_says_so(tmp_path: Path) -> None:
    system = SyntheticSystem(tmp_path)
    system.disk("mmcblk0", "179:0")
    system.partition("mmcblk0", "mmcblk0p2", "179:2", start=8192, sectors=1 << 20)
    system.mount("mmcblk0p2", "/")
    assert reasons_for(system, "mmcblk0") == (
        "it has partition /dev/mmcblk0p2, which holds the root filesystem (/dev/mmcblk0p2 on /)",
    )


def test_swap_on_a_device_mapper_member_is_found_by_its_mapper_name(tmp_path: Path) -> None:
    system = SyntheticSystem(tmp_path)
    system.disk("sdi", "8:128")
    system.dm("dm-5", "253:5", "cryptswap", "CRYPT-PLAIN-cryptswap", on=["sdi"])
    system.swap("/dev/mapper/cryptswap")
    assert reasons_for(system, "sdi") == (
        "it is held by /dev/dm-5 (dm-crypt 'cryptswap'), which is used as swap",
    )


@pytest.fixture
def loops(tmp_path: Path) -> SyntheticSystem:
    """loop1 on a file, with partition loop1p1 mounted; loop2 backed by loop1; loop4 and loop5
    on one file, loop5 mounted; loop6 on a swap file; loop7 on a free file, loop8 on loop7."""
    system = SyntheticSystem(tmp_path)
    system.loop("loop1", "7:1", "/srv/images/disk.img")
    system.partition("loop1", "loop1p1", "259:0", start=2048, sectors=1 << 16)
    system.loop("loop2", "7:2", "/dev/loop1")
    system.mount("loop1p1", "/mnt/x")
    system.loop("loop4", "7:4", "/srv/images/shared.img")
    system.loop("loop5", "7:5", "/srv/images/shared.img")
    system.mount("loop5", "/mnt/shared")
    system.loop("loop6", "7:6", "/swapfile")
    system.swap("/swapfile")
    system.loop("loop7", "7:7", "/srv/images/free.img (deleted)")
    system.partition("loop7", "loop7p1", "259:1", start=2048, sectors=1 << 16)
    system.loop("loop8", "7:8", "/dev/loop7")
    return system


def test_a_loop_backed_by_a_loop_whose_partition_is_mounted_is_refused(
    loops: SyntheticSystem,
) -> None:
    assert str(refused(loops, "loop2")) == (
        "refusing to write to /dev/loop2: it is backed by /dev/loop1, which has partition "
        "/dev/loop1p1, which is mounted on /mnt/x"
    )


def test_the_backing_device_of_a_loop_names_what_sits_on_it(loops: SyntheticSystem) -> None:
    loops.mount("loop2", "/mnt/upper")
    assert "it is the backing device of /dev/loop2, which is mounted on /mnt/upper" in (
        reasons_for(loops, "loop1")
    )


def test_a_loop_sharing_its_backing_file_with_a_mounted_loop_is_refused(
    loops: SyntheticSystem,
) -> None:
    assert reasons_for(loops, "loop4") == (
        "it is backed by /srv/images/shared.img, which is also the backing file of /dev/loop5, "
        "which is mounted on /mnt/shared",
    )


def test_a_loop_on_a_swap_file_is_refused(loops: SyntheticSystem) -> None:
    assert reasons_for(loops, "loop6") == ("it is backed by /swapfile, which is used as swap",)


def test_a_free_loop_chain_claims_every_device_that_can_be_held(loops: SyntheticSystem) -> None:
    claimer = FakeClaimer()
    with claim_for_writing("/dev/loop8", loops.roots, claimer=claimer) as claim:
        names = [m.name for m in claim.stack.members]
    # loop7p1 is covered by the claim on loop7 (a claimed disk's partitions cannot be claimed);
    # the backing file cannot be opened exclusively
    assert names == ["loop8", "loop7", "loop7p1", "/srv/images/free.img"]
    assert claimer.claimed == ["loop8", "loop7"]
    assert claimer.released == ["loop7", "loop8"]
    assert claim.claimed == ("/dev/loop8", "/dev/loop7")


def test_a_member_the_kernel_reports_busy_is_named_and_earlier_claims_released(
    loops: SyntheticSystem,
) -> None:
    claimer = FakeClaimer(busy={"loop7"})
    assert str(refused(loops, "loop8", claimer)).startswith(
        "refusing to write to /dev/loop8: it is backed by /dev/loop7, which is busy according to "
        "the kernel (an O_EXCL open failed): mounted (maybe in another mount namespace)"
    )
    assert claimer.claimed == ["loop8"] and claimer.released == ["loop8"]


def test_a_user_who_may_not_open_the_device_is_told_it_needs_root(
    loops: SyntheticSystem,
) -> None:
    # Not "cannot be held unused" (which reads as busy): a permission, said as `run` says it.
    denied = refused(loops, "loop8", FakeClaimer(forbidden={"loop8"}), TargetPermissionDenied)
    assert str(denied) == "/dev/loop8: permission denied: writing a device needs root (sudo)"
    assert isinstance(denied, TargetPermissionDenied) and denied.exit_status == 4


def test_a_mount_appearing_while_claiming_is_refused(loops: SyntheticSystem) -> None:
    claimer = FakeClaimer(on_claim=lambda: loops.mount("loop7p1", "/mnt/late"))
    mounted = str(refused(loops, "loop8", claimer))
    assert "which has partition /dev/loop7p1, which is mounted on /mnt/late" in mounted
    assert claimer.released == ["loop7", "loop8"]


def test_a_recorded_system_cannot_vouch_for_a_live_write(loops: SyntheticSystem) -> None:
    with (
        pytest.raises(UnsafeDevice, match="recorded system"),
        claim_for_writing("/dev/loop8", loops.roots),
    ):
        pass


def test_every_partition_under_an_array_checks_its_own_overlapping_siblings(
    tmp_path: Path,
) -> None:
    system = SyntheticSystem(tmp_path)
    system.disk("sdj", "8:144")
    system.partition("sdj", "sdj1", "8:145", start=2048, sectors=4096)
    system.partition("sdj", "sdj2", "8:146", start=6144, sectors=4096)
    system.partition("sdj", "sdj3", "8:147", start=8192, sectors=4096)  # overlaps sdj2 only
    system.md("md2", "9:2", "raid0", on=["sdj1", "sdj2"])
    system.mount("sdj3", "/mnt/overlap")
    assert reasons_for(system, "md2") == (
        "it is built on /dev/sdj2, which overlaps partition /dev/sdj3, which is mounted on "
        "/mnt/overlap",
    )


def test_a_dev_path_names_its_device_by_its_kernel_or_mapper_name(laptop: SyntheticSystem) -> None:
    roots = laptop.roots
    assert kernel_name_of_node("/dev/mapper/vg-root", roots) == "dm-0"
    assert [source_device_name(s, roots) for s in ("/dev/mapper/data", "/dev/sda1")] == [
        "dm-2",
        "sda1",
    ]
    assert [source_device_name(s, roots) for s in ("/dev/mapper/gone", "tmpfs")] == [None, None]
    resolution = resolve_target("/dev/mapper/data", roots)
    assert [(layer.kind, layer.name, layer.detail) for layer in resolution.layers] == [
        ("device-mapper", "dm-2", "LUKS 'data' on dm-1"),
        ("device-mapper", "dm-1", "LVM 'vg-data' on sda2"),
        ("partition", "sda2", "partition 2 of sda"),
        ("device", "sda", "physical device"),
    ]
    assert resolution.target_type == "block device" and resolution.physical == ("sda",)
