"""Write the recorded trees built from published register values and sysfs listings.

Each scenario's SOURCES.md says where every value comes from; this script is how the files
were laid out (symlinks the way /sys has them), so a reviewer can regenerate and diff them:

    python tests/data/probe/build_published_scenarios.py tests/data/probe
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n")


def link(root: Path, relative: str, target: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def rel(from_dir: str, to: str) -> str:
    """Relative symlink text from directory `from_dir` to `to` (both relative to the root)."""
    start = [p for p in from_dir.split("/") if p]
    end = [p for p in to.split("/") if p]
    common = 0
    while common < min(len(start), len(end)) and start[common] == end[common]:
        common += 1
    return "/".join([".."] * (len(start) - common) + end[common:])


def block(root: Path, dev_path: str, name: str, majmin: str, attrs: dict[str, str]) -> None:
    """A block device directory with class/block and dev/block links."""
    for key, value in attrs.items():
        write(root, f"sys/{dev_path}/{key}", value)
    write(root, f"sys/{dev_path}/dev", majmin)
    link(root, f"sys/class/block/{name}", rel("sys/class/block", f"sys/{dev_path}"))
    link(root, f"sys/dev/block/{majmin}", rel("sys/dev/block", f"sys/{dev_path}"))


def driver(root: Path, device_dir: str, bus: str, name: str) -> None:
    (root / f"sys/bus/{bus}/drivers/{name}").mkdir(parents=True, exist_ok=True)
    link(
        root, f"sys/{device_dir}/driver", rel(f"sys/{device_dir}", f"sys/bus/{bus}/drivers/{name}")
    )


def mountinfo(root: Path, lines: list[str]) -> None:
    write(root, "proc/self/mountinfo", "\n".join(lines))


QUEUE_SD = {
    "queue/logical_block_size": "512",
    "queue/physical_block_size": "512",
    "queue/rotational": "0",
    "queue/scheduler": "[mq-deadline] none",
    "queue/read_ahead_kb": "128",
    "removable": "0",
    "ro": "0",
    "stat": "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
    "inflight": "       0        0",
}


def rpi4_sd(root: Path) -> None:
    card = "devices/platform/emmc2bus/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa"
    registers = {
        "cid": "035344534e35313280fff7b17b015700",
        "csd": "400e0032db79000ee5b77f800a404000",
        "scr": "0245848700000000",
        "date": "07/2021",
        "dsr": "0x404",
        "erase_size": "512",
        "fwrev": "0x0",
        "hwrev": "0x8",
        "manfid": "0x000003",
        "name": "SN512",
        "ocr": "0x00200000",
        "oemid": "0x5344",
        "preferred_erase_size": "4194304",
        "type": "SD",
    }
    for key, value in registers.items():
        write(root, f"sys/{card}/{key}", value)
    driver(root, "devices/platform/emmc2bus/fe340000.mmc", "platform", "sdhci-iproc")
    disk = f"{card}/block/mmcblk0"
    block(root, disk, "mmcblk0", "179:0", {"size": "999743488", **QUEUE_SD})
    link(root, f"sys/{disk}/device", rel(f"sys/{disk}", f"sys/{card}"))
    block(root, f"{disk}/mmcblk0p2", "mmcblk0p2", "179:2", {"partition": "2", "size": "999219200"})
    write(root, "sys/firmware/devicetree/base/model", "Raspberry Pi 4 Model B Rev 1.4\x00")
    write(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", "cpufreq-dt")
    for cpu in range(4):
        write(root, f"sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor", "powersave")
        write(root, f"sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq", "600000")
    write(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "1800000")
    write(root, "sys/class/thermal/thermal_zone0/type", "cpu-thermal")
    write(root, "sys/class/thermal/thermal_zone0/temp", "48686")
    write(
        root,
        "debug/mmc0/ios",
        "clock:\t\t50000000 Hz\nactual clock:\t50000000 Hz\nvdd:\t\t21 (3.3 ~ 3.4 V)\n"
        "bus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\npower mode:\t2 (on)\n"
        "bus width:\t2 (4 bits)\ntiming spec:\t7 (sd uhs DDR50)\n"
        "signal voltage:\t1 (1.80 V)\ndriver type:\t0 (driver type B)",
    )
    mountinfo(
        root,
        [
            "22 1 179:2 / / rw,noatime shared:1 - ext4 /dev/mmcblk0p2 rw",
            "26 22 179:1 / /boot/firmware rw,relatime shared:2 - vfat /dev/mmcblk0p1 rw,fmask=0022",
        ],
    )
    write(root, "proc/loadavg", "0.08 0.03 0.01 1/170 1234")
    write(root, "proc/sys/kernel/osrelease", "6.6.51+rpt-rpi-v8")
    write(
        root,
        "proc/cpuinfo",
        "processor\t: 0\nBogoMIPS\t: 108.00\nCPU part\t: 0xd08\n\n"
        "processor\t: 1\nCPU part\t: 0xd08\n\nprocessor\t: 2\nCPU part\t: 0xd08\n\n"
        "processor\t: 3\nCPU part\t: 0xd08\n\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4",
    )
    write(
        root,
        "proc/self/root/etc/os-release",
        'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian',
    )


KINGSTON = {
    "cid": "9f544953443634476136980065013b00",
    "csd": "400e00325b590001cfff7f800a400000",
    "date": "11/2019",
    "dsr": "0x404",
    "erase_size": "512",
    "fwrev": "0x1",
    "hwrev": "0x6",
    "manfid": "0x00009f",
    "name": "SD64G",
    "ocr": "0x00300000",
    "oemid": "0x5449",
    "preferred_erase_size": "4194304",
    "rca": "0x5048",
    "scr": "0205848701006432",
    "serial": "0x36980065",
    "ssr": "000000000800000004009000011b391e000800000002ff00030000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000",
    "type": "SD",
}


def rpi5_a2(root: Path) -> None:
    card = "devices/platform/axi/1000fff000.mmc/mmc_host/mmc0/mmc0:5048"
    for key, value in KINGSTON.items():
        write(root, f"sys/{card}/{key}", value)
    driver(root, "devices/platform/axi/1000fff000.mmc", "platform", "sdhci-brcmstb")
    disk = f"{card}/block/mmcblk0"
    block(root, disk, "mmcblk0", "179:0", {"size": "121634816", **QUEUE_SD})
    link(root, f"sys/{disk}/device", rel(f"sys/{disk}", f"sys/{card}"))
    block(root, f"{disk}/mmcblk0p2", "mmcblk0p2", "179:2", {"partition": "2", "size": "121110528"})
    write(root, "sys/firmware/devicetree/base/model", "Raspberry Pi 5 Model B Rev 1.0\x00")
    mountinfo(root, ["22 1 179:2 / / rw,noatime shared:1 - ext4 /dev/mmcblk0p2 rw"])
    write(root, "proc/sys/kernel/osrelease", "6.6.62+rpt-rpi-2712")


def emmc_wear(root: Path) -> None:
    card = "devices/platform/sunxi-mmc.2/mmc_host/mmc1/mmc1:0001"
    registers = {
        "cid": "1501004d384731474303dc0db061506f",
        "csd": "d02701320f5903fff6dbffef8e40400d",
        "rev": "6",
        "date": "05/1997",
        "name": "M8G1GC",
        "type": "MMC",
        "preferred_erase_size": "524288",
        "cache_ctrl": "0",
        "cache_size": "65536",
        "fwrev": "0x0",
        "hwrev": "0x0",
        "oemid": "0x0100",
        "manfid": "0x000015",
        "serial": "0xdc0db061",
        "life_time": "0x01 0x01",
        "pre_eol_info": "0x01",
    }
    for key, value in registers.items():
        write(root, f"sys/{card}/{key}", value)
    disk = f"{card}/block/mmcblk1"
    block(root, disk, "mmcblk1", "179:8", {k: v for k, v in QUEUE_SD.items()})
    link(root, f"sys/{disk}/device", rel(f"sys/{disk}", f"sys/{card}"))
    mountinfo(root, ["22 1 179:8 / / rw,relatime - ext4 /dev/mmcblk1 rw,commit=600"])


def nvme_pcie(root: Path) -> None:
    pci = "devices/platform/axi/1000110000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0"
    for key, value in {
        "vendor": "0x15b7",
        "device": "0x5009",
        "current_link_speed": "5.0 GT/s PCIe",
        "current_link_width": "1",
        "max_link_speed": "8.0 GT/s PCIe",
        "max_link_width": "4",
    }.items():
        write(root, f"sys/{pci}/{key}", value)
    controller = f"{pci}/nvme/nvme0"
    write(root, f"sys/{controller}/model", "SanDisk Ultra 3D NVMe                   ")
    write(root, f"sys/{controller}/firmware_rev", "211210WD")
    link(root, f"sys/{controller}/device", rel(f"sys/{controller}", f"sys/{pci}"))
    disk = f"{controller}/nvme0n1"
    queue = {**QUEUE_SD, "queue/scheduler": "[none] mq-deadline"}
    block(root, disk, "nvme0n1", "259:0", {"size": "976773168", **queue})
    link(root, f"sys/{disk}/device", rel(f"sys/{disk}", f"sys/{controller}"))
    block(root, f"{disk}/nvme0n1p2", "nvme0n1p2", "259:2", {"partition": "2", "size": "975724544"})
    write(root, "sys/firmware/devicetree/base/model", "Raspberry Pi 5 Model B Rev 1.0\x00")
    mountinfo(root, ["22 1 259:2 / / rw,noatime - ext4 /dev/nvme0n1p2 rw"])


def _usb_disk(
    root: Path,
    controller: str,
    usb_path: str,
    interface: str,
    host: str,
    driver_name: str,
    usb_attrs: dict[str, str],
    name: str,
    majmin: str,
    size: str,
    board: str = "Radxa ROCK 5 ITX",
    mount_point: str = "/mnt/usb",
) -> None:
    usb_dir = f"{controller}/{usb_path}"
    for key, value in usb_attrs.items():
        write(root, f"sys/{usb_dir}/{key}", value)
    driver(root, f"{usb_dir}/{interface}", "usb", driver_name)
    write(root, f"sys/class/scsi_host/{host}/proc_name", driver_name)
    number = host.removeprefix("host")
    disk = f"{usb_dir}/{interface}/{host}/target{number}:0:0/{number}:0:0:0/block/{name}"
    queue = {**QUEUE_SD, "removable": "1" if driver_name == "usb-storage" else "0"}
    block(root, disk, name, majmin, {"size": size, **queue})
    block(
        root,
        f"{disk}/{name}1",
        f"{name}1",
        majmin.split(":")[0] + ":" + str(int(majmin.split(":")[1]) + 1),
        {"partition": "1", "size": str(int(size) - 2048)},
    )
    partition = f"{majmin.split(':')[0]}:{int(majmin.split(':')[1]) + 1}"
    if mount_point == "/":
        lines = [f"22 1 {partition} / / rw,noatime - ext4 /dev/{name}1 rw"]
    else:
        lines = [
            f"40 22 {partition} / {mount_point} rw,relatime - ext4 /dev/{name}1 rw",
            "22 1 179:2 / / rw,noatime - ext4 /dev/mmcblk0p2 rw",
        ]
    mountinfo(root, lines)
    write(root, "sys/firmware/devicetree/base/model", f"{board}\x00")


def usb_stick_usb_storage(root: Path) -> None:
    _usb_disk(
        root,
        "devices/platform/fc880000.usb",
        "usb2/2-1",
        "2-1:1.0",
        "host4",
        "usb-storage",
        {"idVendor": "0781", "idProduct": "5590", "speed": "480", "version": " 3.00"},
        "sde",
        "8:64",
        "242640486",
    )


def usb_ssd_uas(root: Path) -> None:
    _usb_disk(
        root,
        "devices/platform/usbdrd3_1/fcd00000.usb",
        "usb6/6-1/6-1.4",
        "6-1.4:1.0",
        "host0",
        "uas",
        {"idVendor": "174c", "idProduct": "55aa", "speed": "5000", "version": " 3.00"},
        "sda",
        "8:0",
        "234441648",
    )


def usb_ssd_jms578(root: Path) -> None:
    _usb_disk(
        root,
        "devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0",
        "usb2/2-2",
        "2-2:1.0",
        "host0",
        "uas",
        {"idVendor": "152d", "idProduct": "0578", "speed": "5000", "version": " 3.10"},
        "sda",
        "8:0",
        "234441648",
        board="Raspberry Pi 4 Model B",
        mount_point="/",
    )


def smartctl_json(root: Path, folder: str, argv: list[str], body: dict[str, object]) -> None:
    """smartctl's --json=c answer to `argv` in `folder` (the recorded tools), named as
    RecordedToolRunner looks it up."""
    name = "_".join(argv).replace("/", "_").replace("__", "_") + ".txt"
    write(root, f"{folder}/{name}", json.dumps(body, separators=(",", ":")))


def smartctl_block(
    argv: list[str], version: list[int], svn: str, platform: str, exit_status: int, **more: object
) -> dict[str, object]:
    """The "smartctl" object smartctl opens its JSON with (src/smartctl.cpp)."""
    return {
        "json_format_version": [1, 0],
        "smartctl": {
            "version": version,
            "svn_revision": svn,
            "platform_info": platform,
            "build_info": "(local build)",
            "argv": argv,
            **more,
            "exit_status": exit_status,
        },
    }


def ata_attribute(line: str) -> dict[str, object]:
    """One row of `smartctl -a`'s attribute table ("ID# ATTRIBUTE_NAME FLAG VALUE WORST THRESH
    TYPE UPDATED WHEN_FAILED RAW_VALUE") as smartctl's JSON writes it (src/ataprint.cpp: the
    flag bits P O S R C K are prefailure, updated_online, performance, error_rate, event_count,
    auto_keep)."""
    number, name, flag, value, worst, thresh, _type, _updated, failed, raw = line.split()
    bits = int(flag, 16)
    keys = ("prefailure", "updated_online", "performance", "error_rate", "event_count", "auto_keep")
    letters = "".join(c if bits >> i & 1 else "-" for i, c in enumerate("POSRCK"))
    return {
        "id": int(number),
        "name": name,
        "value": int(value),
        "worst": int(worst),
        "thresh": int(thresh),
        "when_failed": "" if failed == "-" else failed,
        "flags": {
            "value": bits,
            "string": letters + " ",
            **{key: bool(bits >> i & 1) for i, key in enumerate(keys)},
        },
        "raw": {"value": int(raw), "string": raw},
    }


# `sudo smartctl -a -d sat /dev/sdf` of a Samsung SSD 870 QVO 4TB behind a UGREEN CM321
# USB-SATA adapter (usb_ssd_sat_smart/SOURCES.md): its attribute table as printed.
QVO_870_ATTRIBUTES = """\
  5 Reallocated_Sector_Ct   0x0033   100   100   010    Pre-fail  Always       -       0
  9 Power_On_Hours          0x0032   099   099   000    Old_age   Always       -       1376
 12 Power_Cycle_Count       0x0032   099   099   000    Old_age   Always       -       195
177 Wear_Leveling_Count     0x0013   099   099   000    Pre-fail  Always       -       4
179 Used_Rsvd_Blk_Cnt_Tot   0x0013   100   100   010    Pre-fail  Always       -       0
181 Program_Fail_Cnt_Total  0x0032   100   100   010    Old_age   Always       -       0
182 Erase_Fail_Count_Total  0x0032   100   100   010    Old_age   Always       -       0
183 Runtime_Bad_Block       0x0013   100   100   010    Pre-fail  Always       -       0
187 Uncorrectable_Error_Cnt 0x0032   100   100   000    Old_age   Always       -       0
190 Airflow_Temperature_Cel 0x0032   076   047   000    Old_age   Always       -       24
195 ECC_Error_Rate          0x001a   200   200   000    Old_age   Always       -       0
199 CRC_Error_Count         0x003e   100   100   000    Old_age   Always       -       0
235 POR_Recovery_Count      0x0012   099   099   000    Old_age   Always       -       12
241 Total_LBAs_Written      0x0032   099   099   000    Old_age   Always       -       24021862977
"""


def usb_ssd_sat_smart(root: Path) -> None:
    _usb_disk(
        root,
        "devices/platform/usbdrd3_1/fcd00000.usb",
        "usb6/6-1/6-1.4",
        "6-1.4:1.0",
        "host0",
        "uas",
        {"idVendor": "174c", "idProduct": "55aa", "speed": "5000", "version": " 3.00"},
        "sda",
        "8:0",
        "7814037168",
        mount_point="/",
    )
    # No -d: smartctl's drivedb.h reads an ASMedia 174c bridge as SAT ("USB: ; ASMedia",
    # 0x174c:0x....), the type the post gave it.
    argv = ["smartctl", "--json=c", "-a", "-n", "standby", "/dev/sda"]
    head = ([7, 4], "5530", "x86_64-linux-6.14.0-37-generic")
    smartctl_json(
        root,
        "tools",
        argv,
        {
            **smartctl_block(argv, *head, 0),
            "device": {
                "name": "/dev/sda",
                "info_name": "/dev/sda [SAT]",
                "type": "sat",
                "protocol": "ATA",
            },
            "model_family": "Samsung based SSDs",
            "model_name": "Samsung SSD 870 QVO 4TB",
            "serial_number": "S5STNF0W706332M",
            "firmware_version": "SVQ02B6Q",
            "user_capacity": {"blocks": 7814037168, "bytes": 4000787030016},
            "logical_block_size": 512,
            "physical_block_size": 512,
            "rotation_rate": 0,
            # "Device is: In smartctl database 7.3/5528" in the post (src/ataprint.cpp,
            # ata_print_drive_info, writes it after the rotation rate).
            "in_smartctl_database": True,
            "smart_status": {"passed": True},
            "ata_smart_attributes": {
                "revision": 1,
                "table": [ata_attribute(line) for line in QVO_870_ATTRIBUTES.splitlines()],
            },
            "power_on_time": {"hours": 1376},
            "power_cycle_count": 195,
            "temperature": {"current": 24},
        },
    )
    # The same command as a user: smartctl cannot open /dev/sda (src/smartctl.cpp,
    # "Smartctl open device: %s failed: %s", exit status bit 1).
    denied = "Smartctl open device: /dev/sda [SAT] failed: Permission denied"
    smartctl_json(
        root,
        "tools_user",
        argv,
        smartctl_block(argv, *head, 2, messages=[{"string": denied, "severity": "error"}]),
    )


def usb_nvme_asmedia(root: Path) -> None:
    _usb_disk(
        root,
        "devices/platform/axi/1000120000.pcie/1f00300000.usb/xhci-hcd.1",
        "usb4/4-1",
        "4-1:1.0",
        "host0",
        "uas",
        {"idVendor": "0634", "idProduct": "5603", "speed": "5000", "version": " 3.20"},
        "sda",
        "8:0",
        "3907029167",
        board="Raspberry Pi 5 Model B Rev 1.0",
        mount_point="/",
    )
    argv = ["smartctl", "--json=c", "-a", "-n", "standby", "-d", "sntasmedia", "/dev/sda"]
    head = ([7, 4], "5530", "aarch64-linux-6.12.62+rpt-rpi-2712")
    smartctl_json(
        root,
        "tools",
        argv,
        {
            **smartctl_block(argv, *head, 0),
            "device": {
                "name": "/dev/sda",
                "info_name": "/dev/sda [USB NVMe ASMedia]",
                "type": "sntasmedia",
                "protocol": "NVMe",
            },
            "model_name": "CT2000X9PROSSD9",
            "serial_number": "2508E8C5B78E",
            "firmware_version": "U1CR1A08",
            "nvme_number_of_namespaces": 0,
            "smart_status": {"passed": True, "nvme": {"value": 0}},
            "nvme_smart_health_information_log": {
                "critical_warning": 0,
                "temperature": 36,
                "available_spare": 100,
                "available_spare_threshold": 10,
                "percentage_used": 0,
                "data_units_read": 760361,
                "data_units_written": 621718,
            },
            "temperature": {"current": 36},
        },
    )


def usb_nvme_jms581_sat(root: Path) -> None:
    _usb_disk(
        root,
        "devices/pci0000:00/0000:00:14.0",
        "usb2/2-3",
        "2-3:1.0",
        "host2",
        "uas",
        {"idVendor": "152d", "idProduct": "a581", "speed": "10000", "version": " 3.20"},
        "sdc",
        "8:32",
        "1953525168",
        mount_point="/",
    )
    # `-d sat` to an NVMe drive behind it: "Read Device Identity failed: scsi error
    # unsupported scsi opcode", a line smartctl prints but keeps out of the JSON's messages
    # (src/ataprint.cpp, pout), then exit status bit 1 (FAILID).
    argv = ["smartctl", "--json=c", "-a", "-n", "standby", "-d", "sat", "/dev/sdc"]
    head = ([7, 5], "5714", "x86_64-linux-6.19.12-1-vanilla")
    smartctl_json(
        root,
        "tools",
        argv,
        {
            **smartctl_block(argv, *head, 2, pre_release=False),
            "device": {
                "name": "/dev/sdc",
                "info_name": "/dev/sdc [SAT]",
                "type": "sat",
                "protocol": "ATA",
            },
        },
    )


def ufs(root: Path) -> None:
    hba = "devices/platform/soc@0/1d84000.ufshc"
    for key, value in {
        "device_descriptor/manufacturer_id": "0x01CE",
        "device_descriptor/specification_version": "0x0210",
        "health_descriptor/eol_info": "0x01",
        "health_descriptor/life_time_estimation_a": "0x02",
        "health_descriptor/life_time_estimation_b": "0x01",
    }.items():
        write(root, f"sys/{hba}/{key}", value)
    write(root, "sys/class/scsi_host/host0/proc_name", "ufshcd")
    disk = f"{hba}/host0/target0:0:0/0:0:0:0/block/sda"
    queue = {**QUEUE_SD, "queue/physical_block_size": "4096", "queue/logical_block_size": "4096"}
    block(root, disk, "sda", "8:0", {"size": "124993536", **queue})
    block(root, f"{disk}/sda17", "sda17", "259:5", {"partition": "17", "size": "110000000"})
    mountinfo(root, ["30 1 259:5 / / rw,nosuid,nodev,noatime - ext4 /dev/sda17 rw"])


# -- Answers to MMC_IOC_CMD (tools/ioctl/DEV/cmdOPCODE_ARG.hex, flashmark.probe.mmc_ioctl) ------

# One answer block: (offset, bytes, what the layout calls them). Layouts: sdmon src/sdmon.c at
# commit 94cda42b (BE/LE as it reads each figure); values: each answer's source, SOURCES.md.
Field = tuple[int, bytes, str]


def be(value: int, size: int) -> bytes:
    return value.to_bytes(size, "big")


def le(value: int, size: int) -> bytes:
    return value.to_bytes(size, "little")


def phison(values: dict[str, int], flash_id: str, ic: str, fw: tuple[int, int]) -> list[Field]:
    """The two-step layout (write 0x10, read 0x21)."""
    avg, low, high = values["avg"], values["min"], values["max"]
    return [
        (0, bytes.fromhex(flash_id), "flash id"),
        (9, bytes.fromhex(ic), "IC version"),
        (11, bytes(fw), "firmware version"),
        (14, be(values["ce"], 1), "CE number"),
        (16, be(values["spare"], 2), "spare block count"),
        (32, be(values["initial_bad"], 1), "bad blocks per die (die 0; the rest 0)"),
        (64, be(values["good_rate"], 2), "good block rate, 0.01%"),
        (80, be(values["total_erase"], 4), "total erase count"),
        (96, be(values["remaining"], 2), "endurance remaining life, 0.01%"),
        (98, be(avg & 0xFFFF, 2), "average erase count, low half"),
        (100, be(low & 0xFFFF, 2), "minimum erase count, low half"),
        (102, be(high & 0xFFFF, 2), "maximum erase count, low half"),
        (104, be(avg >> 16, 2), "average erase count, high half"),
        (106, be(low >> 16, 2), "minimum erase count, high half"),
        (108, be(high >> 16, 2), "maximum erase count, high half"),
        (112, be(values["power_up"], 4), "power-up count"),
        (128, be(values["abnormal_off"], 2), "abnormal power-off count"),
        (160, be(values["refresh"], 2), "total refresh count"),
        (184, be(values["later_bad"], 1), "later bad blocks per die (die 0; the rest 0)"),
    ]


def sandisk(signature: bytes, made: str, used: int, generation: int, product: str,
            power_on: int) -> list[Field]:  # fmt: skip
    return [
        (0, signature, "signature"),
        (2, made.encode(), "manufactured YYMMDD"),
        (8, be(used, 1), "health status, % of life used (1 = 0-0.99%)"),
        (11, be(0x1F, 1), "feature revision"),
        (14, be(generation, 1), "generation identifier"),
        (24, be(power_on, 3), "power-on count"),
        (49, product.ljust(32).encode(), "product string"),
    ]


CMD56_ANSWERS: dict[str, list[Field]] = {
    # sdmon readme.md, "Sandisk Industrial SD card (99% healthy)" (no power-on count then).
    "sandisk_industrial": sandisk(b"DS", "211122", 1, 5, "SanDisk", 0),
    # sdmon readme.md, "Western Digital Purple QD101".
    "wd_purple": sandisk(b"DW", "240403", 1, 7, "Western Digital", 14),
    # sdmon issue #30, Kingston SDCE/256GB.
    "kingston_sdce": phison(
        {"ce": 4, "spare": 12, "initial_bad": 24, "good_rate": 9981, "total_erase": 66,
         "remaining": 9997, "avg": 1, "min": 1, "max": 1, "power_up": 16, "abnormal_off": 0,
         "refresh": 0, "later_bad": 0},
        "983ea8037ae4081600", "2025", (19, 143),
    ),
    # sdmon readme.md, "Apacer Industrial micro SD card (99.97% healthy)".
    "apacer_industrial": phison(
        {"ce": 1, "spare": 46, "initial_bad": 72, "good_rate": 9756, "total_erase": 1380,
         "remaining": 9997, "avg": 1, "min": 1, "max": 5, "power_up": 55, "abnormal_off": 0,
         "refresh": 0, "later_bad": 0},
        "983c98b37672080e00", "1fc3", (83, 201),
    ),
    # sdmon issue #44, a Transcend 460T answering ADATA's argument in ADATA's layout.
    "adata_transcend_460t": [
        (0, b"\x09\x41", "signature"),
        (24, be(5, 2), "factory bad blocks"),
        (26, be(0, 1), "grown bad blocks"),
        (27, be(34, 1), "spare SLC blocks"),
        (30, be(198, 2), "spare blocks"),
        (32, be(0, 4), "data area minimum erase count"),
        (36, be(2, 4), "data area maximum erase count"),
        (40, be(405, 4), "data area total erase count"),
        (44, be(0, 4), "data area average erase count"),
        (64, be(59777, 4), "raw capacity, MB"),
        (68, be(30, 2), "PE cycle life"),
        (70, be(100, 1), "remaining life %"),
        (76, be(12, 4), "power cycle count"),
        (88, b"SM2706", "controller"),
        (128, b"U1115 ", "firmware version"),
    ],
    # sdmon PR #19, a Swissbit S-56u Gen 5 card.
    "swissbit_s56u": [
        (0, b"Sw", "signature"),
        (32, b"W0112", "firmware version"),
        (48, be(100000, 4), "user area rated cycles"),
        (52, be(3, 4), "user area max cycle count"),
        (56, be(2230, 4), "user area total cycle count"),
        (60, be(1, 4), "user area average cycle count"),
        (80, be(99, 1), "remaining lifetime %"),
        (86, be(0x18, 1), "speed mode (SDR104)"),
        (87, be(0x10, 1), "bus width (4 bits)"),
        (88, be(482, 4), "user area spare blocks"),
        (92, be(99, 4), "system area spare blocks"),
        (116, be(19, 4), "power cycle count"),
    ],
    # sdmon issue #15, a Micron i400 (step utilization 1; the TLC and SLC figures are cut
    # off in the issue: illustrative).
    "micron_i400": [
        (0, b"ME", "signature"),
        (7, be(1, 1), "percentage step utilization"),
        (8, be(2, 1), "TLC area utilization (illustrative)"),
        (9, be(0, 1), "SLC area utilization (illustrative)"),
    ],
    # No published answers: illustrative values in sdmon's layouts.
    "transcend_illustrative": [
        (0, b"Tr", "signature"),
        (26, be(1, 1), "new bad blocks"),
        (27, be(60, 1), "runtime spare blocks"),
        (28, le(3, 4), "abnormal power loss"),
        (32, le(2, 4), "minimum erase count"),
        (36, le(41, 4), "maximum erase count"),
        (44, le(17, 4), "average erase count"),
        (70, be(97, 1), "remaining card life %"),
        (76, be(230, 2), "power cycle count"),
        (128, b"T1.0.2", "firmware version"),
    ],
    "innodisk_illustrative": [
        (0, b"LX", "signature"),
        (24, be(40, 1), "total spare blocks"),
        (25, be(6, 1), "factory bad blocks"),
        (26, be(1, 1), "runtime bad blocks"),
        (27, be(2, 1), "spare utilization rate %"),
        (28, be(4, 4), "SPOR failure count"),
        (32, be(1, 4), "minimum erase count"),
        (36, be(12, 4), "maximum erase count"),
        (40, be(9000, 4), "total erase count"),
        (44, be(7, 4), "average erase count"),
        (53, b"S17411", "firmware version"),
    ],
    "longsys_illustrative": [
        (0, b"pX", "signature"),
        (16, le(20, 4), "original bad blocks"),
        (20, le(2, 4), "increased bad blocks"),
        (32, le(50, 4), "replacement blocks left"),
        (36, le(25500, 4), "degree of wear, 1/1000 cycle"),
        (44, le(92, 4), "remaining life %"),
        (52, le(3000, 4), "life time total, cycles"),
    ],
}


def hex_block(fields: list[Field], note: str) -> str:
    """512 bytes as hex text, 16 a line, each field named in a comment above."""
    data = bytearray(512)
    lines = [f"# {note}"]
    for offset, raw, what in fields:
        data[offset : offset + len(raw)] = raw
        lines.append(f"# [{offset}:{offset + len(raw)}] {what}")
    lines += [data[row : row + 16].hex(" ") for row in range(0, 512, 16)]
    return "\n".join(lines)


def answer(root: Path, device: str, opcode: int, arg: int, name: str) -> None:
    text = hex_block(CMD56_ANSWERS[name], f"{name}: see SOURCES.md")
    write(root, f"tools/ioctl/{device}/cmd{opcode}_{arg:08x}.hex", text)


def with_cid(root: Path, card: str, cid: str) -> None:
    """A tree's card given another CID (its manfid and oemid with it)."""
    write(root, f"sys/{card}/cid", cid)
    write(root, f"sys/{card}/manfid", f"0x{int(cid[:2], 16):06x}")
    write(root, f"sys/{card}/oemid", f"0x{cid[2:6]}")


RPI4_CARD = "devices/platform/emmc2bus/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa"
RPI4_CID = "035344534e35313280fff7b17b015700"


def sd_sandisk_industrial(root: Path) -> None:
    rpi4_sd(root)
    answer(root, "mmcblk0", 56, 0x00000001, "sandisk_industrial")


def sd_wd_purple(root: Path) -> None:
    rpi4_sd(root)
    answer(root, "mmcblk0", 56, 0x00000001, "wd_purple")


RPI5_CARD = "devices/platform/axi/1000fff000.mmc/mmc_host/mmc0/mmc0:5048"
# rpi5_a2's Kingston CID with a High Endurance product name (derived: SOURCES.md).
SDCE_NAME = "SDCE0"


def sd_kingston_sdce(root: Path) -> None:
    rpi5_a2(root)
    cid = str(KINGSTON["cid"])
    with_cid(root, RPI5_CARD, cid[:6] + SDCE_NAME.encode().hex() + cid[16:])
    write(root, f"sys/{RPI5_CARD}/name", SDCE_NAME)
    answer(root, "mmcblk0", 56, 0x00000021, "kingston_sdce")


def sd_apacer_industrial(root: Path) -> None:
    rpi4_sd(root)
    with_cid(root, RPI4_CARD, "27" + b"PH".hex() + RPI4_CID[6:])
    answer(root, "mmcblk0", 56, 0x00000021, "apacer_industrial")


def sd_transcend_460t(root: Path) -> None:
    rpi4_sd(root)
    with_cid(root, RPI4_CARD, "744a605553442020104182bbc7010600")
    answer(root, "mmcblk0", 56, 0x110005F1, "adata_transcend_460t")


def sd_transcend(root: Path) -> None:
    rpi4_sd(root)
    with_cid(root, RPI4_CARD, "744a605553442020104182bbc7010600")
    answer(root, "mmcblk0", 56, 0x110005F9, "transcend_illustrative")


def sd_adata(root: Path) -> None:
    rpi4_sd(root)
    with_cid(root, RPI4_CARD, "1d" + b"AD".hex() + RPI4_CID[6:])
    answer(root, "mmcblk0", 56, 0x110005F1, "adata_transcend_460t")


def emmc_ext_csd(root: Path) -> None:
    """emmc_wear, with its EXT_CSD answer to CMD8: the wear bytes as toltec-dev/toltec PR #490
    quotes `mmc extcsd read` (the rest is not published: zeros)."""
    emmc_wear(root)
    fields: list[Field] = [
        (192, be(8, 1), "EXT_CSD_REV (derived: eMMC 5.1)"),
        (267, be(0x01, 1), "PRE_EOL_INFO"),
        (268, be(0x01, 1), "DEVICE_LIFE_TIME_EST_TYP_A"),
        (269, be(0x01, 1), "DEVICE_LIFE_TIME_EST_TYP_B"),
    ]
    write(root, "tools/ioctl/mmcblk1/cmd8_00000000.hex", hex_block(fields, "EXT_CSD: SOURCES.md"))


def cmd56_layouts(root: Path) -> None:
    """Every answer above as its own file, for the layouts' tests."""
    for name in CMD56_ANSWERS:
        write(root, f"{name}.hex", hex_block(CMD56_ANSWERS[name], f"{name}: see SOURCES.md"))


# The Pi 5's boot lines of its SD card, as rpi5_a2's tools/dmesg.txt has them (its SOURCES.md).
RPI5_CARD_LOG = (
    "[    2.546753] mmc0: SDHCI controller on 1000fff000.mmc [1000fff000.mmc] using ADMA 64-bit\n"
    "[    2.652792] mmc0: new ultra high speed SDR104 SDXC card at address 5048\n"
    "[    2.659679] mmcblk0: mmc0:5048 SD64G 58.0 GiB\n"
)


def rpi5_cqe_recovery(root: Path) -> None:
    """rpi5_a2 with its card queued, and the queue failing once."""
    rpi5_a2(root)
    write(root, "tools/vcgencmd_get_throttled.txt", "throttled=0x0")
    write(
        root,
        "tools/dmesg.txt",
        RPI5_CARD_LOG + "mmc0: Command Queue Engine enabled\nmmc0: running CQE recovery",
    )


def nvme_aspm_resets(root: Path) -> None:
    """nvme_pcie with its controller reset off its link once."""
    nvme_pcie(root)
    write(
        root,
        "tools/dmesg.txt",
        "[   11.031164] Bluetooth: RFCOMM ver 1.11\n"
        "[   79.340981] nvme nvme0: controller is down; will reset: CSTS=0xffffffff, "
        "PCI_STATUS=0x10\n"
        "[   79.340991] nvme nvme0: Does your device have a faulty power saving mode enabled?\n"
        '[   79.340994] nvme nvme0: Try "nvme_core.default_ps_max_latency_us=0 pcie_aspm=off '
        'pcie_port_pm=off" and report a bug\n'
        "[   79.396996] nvme 0000:01:00.0: enabling device (0000 -> 0002)\n"
        "[   79.404526] nvme nvme0: 4/0/0 default/read/poll queues\n"
        "[   79.410364] nvme nvme0: Ignoring bogus Namespace Identifiers",
    )


def rpi4_mount_writes(root: Path) -> None:
    """rpi4_sd with a steady supply and the ondemand governor (a healthy Pi 4), its root mounted
    with the options that multiply writes."""
    rpi4_sd(root)
    write(root, "tools/vcgencmd_get_throttled.txt", "throttled=0x0")
    for cpu in range(4):
        write(root, f"sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor", "ondemand")
    mountinfo(
        root,
        [
            "22 1 179:2 / / rw shared:1 - ext4 /dev/mmcblk0p2 rw,dirsync,data=journal,commit=1",
            "26 22 179:1 / /boot/firmware rw,relatime shared:2 - vfat /dev/mmcblk0p1 rw,fmask=0022",
        ],
    )


def nvme_bfq(root: Path) -> None:
    """nvme_pcie with bfq as its I/O scheduler."""
    nvme_pcie(root)
    write(
        root,
        "sys/devices/platform/axi/1000110000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/nvme/nvme0/"
        "nvme0n1/queue/scheduler",
        "mq-deadline kyber [bfq] none",
    )


SCENARIOS = {
    "rpi4_sd": rpi4_sd,
    "rpi5_a2": rpi5_a2,
    "emmc_wear": emmc_wear,
    "nvme_pcie": nvme_pcie,
    "usb_stick_usb_storage": usb_stick_usb_storage,
    "usb_ssd_uas": usb_ssd_uas,
    "usb_ssd_jms578": usb_ssd_jms578,
    "usb_ssd_sat_smart": usb_ssd_sat_smart,
    "usb_nvme_asmedia": usb_nvme_asmedia,
    "usb_nvme_jms581_sat": usb_nvme_jms581_sat,
    "ufs": ufs,
    "sd_sandisk_industrial": sd_sandisk_industrial,
    "sd_wd_purple": sd_wd_purple,
    "sd_kingston_sdce": sd_kingston_sdce,
    "sd_apacer_industrial": sd_apacer_industrial,
    "sd_transcend_460t": sd_transcend_460t,
    "sd_transcend": sd_transcend,
    "sd_adata": sd_adata,
    "emmc_ext_csd": emmc_ext_csd,
    "cmd56_layouts": cmd56_layouts,
    "rpi5_cqe_recovery": rpi5_cqe_recovery,
    "nvme_aspm_resets": nvme_aspm_resets,
    "nvme_bfq": nvme_bfq,
    "rpi4_mount_writes": rpi4_mount_writes,
}


def main(argv: list[str]) -> None:
    base = Path(argv[1])
    for name, build in SCENARIOS.items():
        root = base / name
        for sub in ("sys", "proc", "debug", "tools/ioctl"):
            shutil.rmtree(root / sub, ignore_errors=True)
        for old in root.glob("*.hex"):
            old.unlink()
        build(root)


if __name__ == "__main__":
    main(sys.argv)
