"""The typed result of `flashmark probe`: frozen dataclasses, its document in the one codec.

Everything a probe found crosses into `flashmark run` and the JSON output as these classes.
A value that could not be read is None; a value that was read but could not be understood is
an `Unreadable` entry quoting the raw text, so a report never hides what the kernel said.

A report's document (`probe --json`, a run's "probe") is `flashmark.codec.encode(report)`,
"schema" first; its history: SCHEMA below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flashmark.codec import document, written
from flashmark.upload_rules import (
    DEVICE_NODE,
    FILESYSTEM_TYPE,
    KERNEL_NAME,
    KERNEL_RELEASE,
    MADE_TEXT,
    MODEL_NAME,
    Always,
    Fields,
    ListOf,
    Matching,
    MountOptions,
    OneOf,
    Text,
    Withheld,
    upload,
    upload_as,
    uploaded,
)

# `probe --json`, and a run's "probe" (docs/probe.md).
#   1: first version.
SCHEMA = "flashmark.probe/1"

T = TypeVar("T")

# NVMe's data unit: 1000 512-byte sectors (NVMe Base Specification, SMART / Health
# Information log, Data Units Written), the unit of Health.data_units_written.
DATA_UNIT_BYTES = 512_000

# probe/block.py classify(): the kinds of device flashmark tells apart.
DEVICE_KIND = OneOf(
    "sd", "emmc", "ufs", "nvme", "usb", "sata", "virtio", "loop", "md", "dm", "zram", "scsi",
    "unknown",
)  # fmt: skip
# Mount points people share: the standard places (Filesystem Hierarchy Standard 3.0). Others
# (/media/alice/3F2A-1B4C, /mnt/photos-of-bob) may name a user or a volume.
MOUNT_POINT = OneOf(
    "/", "/boot", "/boot/firmware", "/boot/efi", "/home", "/media", "/mnt", "/opt", "/srv",
    "/tmp", "/usr", "/var", "/var/tmp",
).or_withheld()  # fmt: skip
# Options that change how fast a file system reads and writes (mount(8), ext4(5), btrfs(5),
# f2fs, nfs(5), mount.cifs(8)); a network mount's user, address or credentials never are.
MOUNT_OPTIONS = MountOptions(
    frozenset(
        (
            "rw", "ro", "sync", "async", "dirsync", "atime", "noatime", "relatime",
            "strictatime", "diratime", "nodiratime", "lazytime", "nolazytime", "discard",
            "nodiscard", "barrier", "nobarrier", "data", "commit", "journal_checksum",
            "journal_async_commit", "delalloc", "nodelalloc", "inline_data", "dax", "compress",
            "compress-force", "ssd", "nossd", "ssd_spread", "space_cache", "autodefrag",
            "noautodefrag", "flush", "background_gc", "fsync_mode", "mode", "cache", "rsize",
            "wsize", "vers", "nfsvers", "hard", "soft", "actimeo", "noac",
        )
    )
).or_withheld()  # fmt: skip
# A speed class as printed on cards and read from the SSR: "C10", "U3", "V30", "A2".
_CLASS_NAME = upload(Matching(r"[ACUV][0-9]{1,2}").or_null())
# What most texts of a probe are sent as: flashmark's own words and figures, or what a device
# reports of its model, screened (null when the screen finds an identifier).
_MADE_TEXT = upload(MADE_TEXT.or_null())
_MADE_TEXTS = upload(ListOf(MADE_TEXT, drop=True))
_MODEL_NAME = upload(MODEL_NAME.or_null())
_HEX_ID = upload(Matching(r"[0-9a-f]{4}").or_null())


# The vendor command an SD card answered, as probe.sd_vendor_health's VendorCommand.described
# words it: the command and its 32-bit arguments (flashmark's constants), nothing of the card,
# so not screened (an argument such as 0x00000001 may look like a serial number).
_VENDOR_COMMAND = upload(
    Matching(
        r"(CMD56 write 0x[0-9a-f]{8}, then )?CMD56 read 0x[0-9a-f]{8}", screened=False
    ).or_withheld()
)


@dataclass(frozen=True)
class Unreadable:
    """A field whose text was present but not in the expected format (quoted as read)."""

    field: str  # e.g. "ssr", "life_time", "current_link_speed"
    raw: str
    reason: str


@uploaded
@dataclass(frozen=True)
class Layer:
    """One step from the target down to a physical device, e.g. a partition or LUKS."""

    kind: str = field(
        metadata=upload(
            OneOf("filesystem", "file", "partition", "loop", "device-mapper", "md", "device")
        )
    )
    # A filesystem layer is named by its mount point, a file by its path (both withheld by the
    # kernel-name rule); details quote mount sources and backing files.
    name: str = field(metadata=upload(KERNEL_NAME.or_withheld()))
    detail: str = field(metadata=upload(Withheld()))


@uploaded
@dataclass(frozen=True)
class Cid:
    """Card IDentification register (SD Physical Layer Simplified Spec 5.2; JEDEC eMMC 7.2)."""

    # Rebuilt by server/outgoing.py: the register with its serial (PSN) and CRC digits zeroed,
    # the CRC being computed over the serial (SD Physical Layer Simplified Specification
    # 5.2; JESD84-B51 7.2); withheld when it does not decode to the fields below.
    raw: str = field(metadata=upload(Withheld()))
    manufacturer_id: int  # MID [127:120]
    # OID [119:104] as hex, e.g. "0x5344"
    oem_id: str = field(metadata=upload(Matching(r"0x[0-9a-f]{2,4}").or_withheld()))
    # the same two bytes as ASCII where printable, e.g. "SD"
    oem_id_text: str = field(metadata=upload(Text(max_length=8).or_withheld()))
    product_name: str = field(metadata=upload(MODEL_NAME.or_withheld()))  # PNM
    # PRV as "major.minor" (BCD nibbles)
    revision: str = field(metadata=upload(Matching(r"\d{1,2}\.\d{1,2}").or_withheld()))
    # PSN: the card's serial number. 0 in uploads means "withheld"; a card whose serial is
    # really 0 (a counterfeit sign) says so in counterfeit_flags.
    serial: int = field(metadata=upload(Always(0)))
    # "YYYY-MM" (MDT: a month, shared by a batch)
    manufactured: str | None = field(metadata=upload(Matching(r"\d{4}-\d{2}").or_null()))


@uploaded
@dataclass(frozen=True)
class Csd:
    # The registers' raw dumps (CSD, SCR, SSR) hold no serial, but only their decoded fields
    # are needed: the dumps stay here.
    raw: str = field(metadata=upload(Withheld()))
    structure: int  # CSD_STRUCTURE [127:126]
    version: str = field(
        metadata=upload(MADE_TEXT.or_withheld())
    )  # e.g. "2.0 (SDHC/SDXC)", "1.0 (SDSC)", "eMMC 1.2"
    capacity_bytes: int | None  # from C_SIZE; None for eMMC > 2 GB (sector count in EXT_CSD)


@uploaded
@dataclass(frozen=True)
class Scr:
    raw: str = field(metadata=upload(Withheld()))
    spec_version: str = field(metadata=upload(MADE_TEXT.or_withheld()))  # "3.0x", "4.xx"
    bus_widths: tuple[int, ...]  # supported data bus widths in bits


@uploaded
@dataclass(frozen=True)
class Ssr:
    """SD Status register (SD Physical Layer Simplified Spec, section 4.10.2)."""

    raw: str = field(metadata=upload(Withheld()))
    speed_class: str | None = field(metadata=_CLASS_NAME)  # "C0", "C2", "C4", "C6", "C10"
    uhs_grade: str | None = field(metadata=_CLASS_NAME)  # "U1", "U3" (None when 0)
    video_class: str | None = field(metadata=_CLASS_NAME)  # "V6".."V90"
    app_class: str | None = field(metadata=_CLASS_NAME)  # "A1", "A2"
    au_size_bytes: int | None
    command_queue_depth: int | None  # PERFORMANCE_ENHANCE: 0 = no CQ support
    cache_supported: bool | None  # PERFORMANCE_ENHANCE bit 2


@uploaded
@dataclass(frozen=True)
class Claims:
    """What the card says about itself (from SSR), in the names printed on cards."""

    speed_class: str | None = field(default=None, metadata=_CLASS_NAME)  # "C10"
    uhs_grade: str | None = field(default=None, metadata=_CLASS_NAME)  # "U3"
    video_class: str | None = field(default=None, metadata=_CLASS_NAME)  # "V30"
    app_class: str | None = field(default=None, metadata=_CLASS_NAME)  # "A1" / "A2"

    def names(self) -> tuple[str, ...]:
        present = (self.speed_class, self.uhs_grade, self.video_class, self.app_class)
        return tuple(name for name in present if name)


@uploaded
@dataclass(frozen=True)
class Card:
    """SD or eMMC card identity decoded from sysfs `device/` registers."""

    type: str = field(metadata=upload(OneOf("SD", "MMC", "SDIO")))  # "MMC": eMMC
    cid: Cid | None
    csd: Csd | None
    scr: Scr | None
    ssr: Ssr | None
    manufacturer: str | None = field(metadata=_MODEL_NAME)  # named from the MID+OID table
    manufacturer_source: str | None = field(metadata=_MADE_TEXT)  # where that entry comes from
    counterfeit_flags: tuple[str, ...] = field(default=(), metadata=_MADE_TEXTS)
    claimed: Claims = field(default_factory=Claims)


@uploaded
@dataclass(frozen=True)
class MmcBus:
    """The SD/eMMC host and the bus mode it runs the card in."""

    host: str = field(metadata=upload(Matching(r"mmc[0-9]{1,3}").or_withheld()))  # "mmc0"
    # The host driver, e.g. "sdhci-brcmstb"; a device-tree node (fe340000.mmc) is dropped by
    # the screen.
    controller: str | None = field(metadata=upload(Matching(r"[A-Za-z0-9_.-]{1,48}").or_null()))
    timing: str | None = field(metadata=_MADE_TEXT)  # "sd uhs SDR104", "mmc HS200"
    clock_hz: int | None  # requested clock
    actual_clock_hz: int | None
    bus_width_bits: int | None
    signal_voltage: str | None = field(metadata=_MADE_TEXT)
    timing_source: str | None = field(metadata=_MADE_TEXT)  # "debugfs ios", "kernel log"
    command_queue: bool | None  # the host runs the card with command queueing
    command_queue_source: str | None = field(metadata=_MADE_TEXT)
    cache_enabled: bool | None  # the kernel enabled the card's write cache
    cache_source: str | None = field(metadata=_MADE_TEXT)


@uploaded
@dataclass(frozen=True)
class PcieLink:
    current_speed: str | None = field(metadata=_MADE_TEXT)  # e.g. "5.0 GT/s PCIe"
    current_width: int | None
    max_speed: str | None = field(metadata=_MADE_TEXT)
    max_width: int | None

    @property
    def below_max(self) -> bool | None:
        speed_now, speed_max = _gts(self.current_speed), _gts(self.max_speed)
        if speed_now is None or speed_max is None or not self.current_width or not self.max_width:
            return None
        return speed_now < speed_max or self.current_width < self.max_width


@uploaded
@dataclass(frozen=True)
class UsbLink:
    # The sysfs name of the USB device, e.g. "2-1.3": where it is plugged in, not which device
    # it is.
    port: str = field(metadata=upload(Matching(r"[0-9]{1,3}-[0-9.]{1,16}").or_withheld()))
    vendor_id: str | None = field(metadata=_HEX_ID)  # "0781"
    product_id: str | None = field(metadata=_HEX_ID)
    manufacturer: str | None = field(metadata=_MODEL_NAME)
    product: str | None = field(metadata=_MODEL_NAME)
    speed_mbps: int | None  # negotiated
    # bcdUSB as sysfs prints it, e.g. "3.20"
    usb_version: str | None = field(metadata=upload(Matching(r"[0-9]{1,2}\.[0-9]{1,2}").or_null()))
    best_speed_mbps: int | None  # the fastest signalling rate that USB version allows
    driver: str | None = field(metadata=upload(KERNEL_NAME.or_null()))  # "uas", "usb-storage"


@uploaded
@dataclass(frozen=True)
class VendorHealth:
    """What an SD card answered to its vendor's CMD56 health command, decoded by its layout
    (probe.sd_vendor_health); a field the layout does not give is None."""

    # whose layout answered: flashmark's name for it, e.g. "SanDisk", "Phison (Kingston, Apacer)"
    vendor: str = field(metadata=upload(MADE_TEXT.or_withheld()))
    # What was sent, e.g. "CMD56 read 0x00000001", as flashmark sends it to a vendor's cards
    # (a text screen would take the argument, 0x00000001, for a serial number).
    command: str = field(metadata=_VENDOR_COMMAND)
    # Rated life used, as a bracket in percent (the layout's own resolution): from a figure
    # of life used, or 100 minus one of life remaining.
    life_used_low_pct: float | None = None
    life_used_high_pct: float | None = None
    erase_count_average: int | None = None
    erase_count_max: int | None = None
    erase_count_total: int | None = None
    rated_erase_cycles: int | None = None
    spare_blocks: int | None = None
    bad_blocks_factory: int | None = None
    bad_blocks_grown: int | None = None  # found since the card left the factory
    power_on_count: int | None = None
    power_loss_count: int | None = None  # abnormal power-offs
    manufactured: str | None = field(default=None, metadata=_MADE_TEXT)  # the card's own texts
    firmware: str | None = field(default=None, metadata=_MODEL_NAME)
    # a layout's figures that no field above holds, named by flashmark
    other: tuple[str, ...] = field(default=(), metadata=_MADE_TEXTS)


@uploaded
@dataclass(frozen=True)
class Health:
    """Wear and health as the device reports it. Percentages are of rated life used: figures
    of the model's wear and of how it was used (data written, hours powered on), not of whose
    it is."""

    life_time_a: str | None = field(default=None, metadata=_MADE_TEXT)  # eMMC/UFS type A, "0-10%"
    life_time_b: str | None = field(default=None, metadata=_MADE_TEXT)
    pre_eol: str | None = field(default=None, metadata=_MADE_TEXT)  # "normal", "warning", "urgent"
    percentage_used: int | None = None  # NVMe; an SSD's SMART wear attribute read as it
    media_errors: int | None = None  # NVMe
    critical_warning: int | None = None  # NVMe
    temperature_c: float | None = None
    sources: tuple[str, ...] = field(default=(), metadata=_MADE_TEXTS)
    # NVMe, kept for `flashmark health` (written only when known: a document without them
    # reads as it was written before they were kept).
    available_spare: int | None = field(default=None, metadata=document(omit_none=True))  # %
    available_spare_threshold: int | None = field(  # % of spare, below which the drive warns
        default=None, metadata=document(omit_none=True)
    )
    # The drive's own count of data written since its first write, in DATA_UNIT_BYTES (an ATA
    # drive's total LBAs written, read through smartctl, is converted to it).
    data_units_written: int | None = field(default=None, metadata=document(omit_none=True))
    # SMART through smartctl (`flashmark health` on a USB, SATA or SCSI drive): the drive's
    # power-on hours and its overall self-assessment (smart_status.passed).
    power_on_hours: int | None = field(default=None, metadata=document(omit_none=True))
    smart_passed: bool | None = field(default=None, metadata=document(omit_none=True))
    # Where the eMMC/SD wear was read: "ext_csd" or "cmd56", asked of the card now (as root);
    # None: sysfs, which the kernel read once at card start (so are readings from before).
    wear_read: str | None = field(
        default=None, metadata=upload(OneOf("ext_csd", "cmd56").or_null(), document(omit_none=True))
    )
    vendor: VendorHealth | None = field(  # an SD card's answer to its vendor's CMD56
        default=None, metadata=document(omit_none=True)
    )


@uploaded
@dataclass(frozen=True)
class Device:
    """One block device on the way from the target down (the last one is physical)."""

    name: str = field(metadata=upload(KERNEL_NAME.or_withheld()))  # kernel name, "mmcblk0"
    kind: str = field(metadata=upload(DEVICE_KIND))  # "sd", "emmc", "nvme", "usb", "loop", ...
    # Relative to the sysfs root, e.g. "devices/platform/.../block/mmcblk0": the bus path
    # fingerprints this machine's hardware layout and says nothing the fields below do not.
    sysfs_path: str = field(metadata=upload(Withheld()))
    vendor: str | None = field(default=None, metadata=_MODEL_NAME)
    model: str | None = field(default=None, metadata=_MODEL_NAME)
    serial: str | None = field(default=None, metadata=upload(Always(None)))
    firmware: str | None = field(default=None, metadata=_MODEL_NAME)
    capacity_bytes: int | None = None
    logical_sector_bytes: int | None = None
    physical_sector_bytes: int | None = None
    rotational: bool | None = None
    removable: bool | None = None
    scheduler: str | None = field(default=None, metadata=upload(KERNEL_NAME.or_null()))
    read_ahead_kb: int | None = None
    write_cache: str | None = field(  # queue/write_cache
        default=None, metadata=upload(OneOf("write back", "write through").or_null())
    )
    card: Card | None = None
    mmc_bus: MmcBus | None = None
    pcie: PcieLink | None = None
    usb: UsbLink | None = None
    health: Health | None = None
    # quotes what a sysfs file held, a serial number's included
    unreadable: tuple[Unreadable, ...] = field(default=(), metadata=upload(Always(())))


@uploaded
@dataclass(frozen=True)
class Temperature:
    zone: str = field(metadata=upload(KERNEL_NAME.or_withheld()))  # e.g. "thermal_zone0"
    type: str | None = field(metadata=upload(Matching(r"[A-Za-z0-9_.-]{1,32}").or_null()))
    celsius: float


@uploaded
@dataclass(frozen=True)
class Throttling:
    """Raspberry Pi firmware's get_throttled bit field, decoded."""

    raw: str = field(metadata=upload(Matching(r"0x[0-9a-fA-F]{1,8}").or_withheld()))  # "0x50005"
    now: tuple[str, ...] = field(metadata=_MADE_TEXTS)  # conditions active now
    since_boot: tuple[str, ...] = field(metadata=_MADE_TEXTS)  # conditions since boot


@uploaded
@dataclass(frozen=True)
class Environment:
    board: str | None = field(metadata=_MODEL_NAME)
    cpu_model: str | None = field(metadata=_MODEL_NAME)
    cpu_count: int | None
    kernel: str | None = field(metadata=upload(KERNEL_RELEASE.or_null()))
    distribution: str | None = field(metadata=_MODEL_NAME)
    filesystem: str | None = field(metadata=upload(FILESYSTEM_TYPE.or_null()))
    mount_point: str | None = field(metadata=upload(MOUNT_POINT))
    # /dev/mmcblk0p2 is sent; user@host:/share, //server/share, UUID=... are not.
    mount_source: str | None = field(metadata=upload(DEVICE_NODE.or_withheld()))
    mount_options: str | None = field(metadata=upload(MOUNT_OPTIONS))
    free_bytes: int | None
    total_bytes: int | None
    # distinct scaling_governor values across CPUs
    cpu_governors: tuple[str, ...] = field(metadata=upload(ListOf(KERNEL_NAME, drop=True)))
    cpu_mhz: tuple[int, ...]  # scaling_cur_freq per CPU, MHz
    cpu_max_mhz: int | None
    temperatures: tuple[Temperature, ...] = field(
        metadata=upload(ListOf(Fields(Temperature), drop=True))
    )
    throttling: Throttling | None
    load_1m: float | None
    load_5m: float | None
    load_15m: float | None
    iowait_pct: float | None  # share of CPU time in iowait during the sample window
    sample_window_s: float | None
    device_busy_pct: float | None  # share of the window the physical device was busy
    device_inflight: int | None  # requests in flight on the physical device at probe time
    # cpufreq's scaling_driver ("intel_pstate", "cpufreq-dt"): what a governor's name means
    # depends on it (written only when known, so older documents read as written).
    cpu_scaling_driver: str | None = field(
        default=None, metadata=upload(None, document(omit_none=True))
    )


@uploaded
@dataclass(frozen=True)
class ProbeReport:
    target: str = field(metadata=upload(Withheld()))  # as given
    resolved: str = field(metadata=upload(Withheld()))  # absolute path
    target_type: str = field(  # "folder", "file", "block device"
        metadata=upload(OneOf("folder", "file", "block device").or_withheld())
    )
    layers: tuple[Layer, ...]  # the stack from the target down
    devices: tuple[Device, ...]  # every physical device found under the target
    environment: Environment
    # conditions that distort a benchmark (they may quote device paths and mount points)
    warnings: tuple[str, ...] = field(default=(), metadata=upload(Always(())))
    # what could not be looked at, and why (with paths)
    notes: tuple[str, ...] = field(default=(), metadata=upload(Always(())))

    @property
    def device(self) -> Device | None:
        """The (first) physical device, the one a benchmark of this target measures."""
        return self.devices[0] if self.devices else None

    @property
    @upload_as(OneOf(SCHEMA))
    @written(before="target", read=lambda schema, report: _same_schema(schema))
    def schema(self) -> str:
        """Written first: readers check it before anything else."""
        return SCHEMA


def _same_schema(schema: Any) -> Mapping[str, Any]:
    if schema != SCHEMA:
        raise ValueError(f"not a {SCHEMA} document (schema is {schema!r})")
    return {}


def _gts(speed: str | None) -> float | None:
    if not speed:
        return None
    try:
        return float(speed.split()[0])
    except (ValueError, IndexError):
        return None
