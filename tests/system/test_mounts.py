from flashmark.system.mounts import mount_of, parse_mountinfo

# Shape from proc(5); the card line is a Raspberry Pi OS mount of the SD card's root partition.
MOUNTINFO = """\
22 1 179:2 / / rw,noatime shared:1 - ext4 /dev/mmcblk0p2 rw
25 22 179:1 / /boot/firmware rw,relatime shared:2 - vfat /dev/mmcblk0p1 rw,fmask=0022
30 22 0:26 / /tmp rw,nosuid,nodev shared:9 - tmpfs tmpfs rw,size=1G
41 22 8:1 / /media/pi/My\\040Card ro,nosuid,nodev shared:20 - exfat /dev/sda1 rw,uid=1000
"""


def test_mountinfo_fields_and_escaped_spaces():
    mounts = parse_mountinfo(MOUNTINFO)
    assert [m.mount_point for m in mounts] == ["/", "/boot/firmware", "/tmp", "/media/pi/My Card"]
    card = mounts[3]
    assert (card.majmin, card.fstype, card.source, card.read_only) == (
        "8:1",
        "exfat",
        "/dev/sda1",
        True,
    )
    assert mounts[0].read_only is False


def test_the_longest_mount_point_holds_a_path():
    mounts = parse_mountinfo(MOUNTINFO)

    def holder(path):
        mount = mount_of(path, mounts)
        assert mount is not None
        return mount

    assert holder("/boot/firmware/config.txt").source == "/dev/mmcblk0p1"
    assert holder("/home/pi").source == "/dev/mmcblk0p2"
    assert holder("/tmpfoo").mount_point == "/"
    assert holder("/media/pi/My Card/x").fstype == "exfat"
