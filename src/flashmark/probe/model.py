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

# `probe --json`, and a run's "probe" (docs/probe.md).
#   1: first version.
SCHEMA = "flashmark.probe/1"

T = TypeVar("T")

# NVMe's data unit: 1000 512-byte sectors (NVMe Base Specification, SMART / Health
# Information log, Data Units Written), the unit of Health.data_units_written.
DATA_UNIT_BYTES = 512_000


@dataclass(frozen=True)
class Unreadable:
    """A field whose text was present but not in the expected format (quoted as read)."""

    field: str  # e.g. "ssr", "life_time", "current_link_speed"
    raw: str
    reason: str


@dataclass(frozen=True)
class Layer:
    """One step from the target down to a physical device, e.g. a partition or LUKS."""

    kind: str  # "filesystem", "partition", "loop", "device-mapper", "md", "device"
    name: str
    detail: str


@dataclass(frozen=True)
class Cid:
    """Card IDentification register (SD Physical Layer Simplified Spec 5.2; JEDEC eMMC 7.2)."""

    raw: str
    manufacturer_id: int  # MID [127:120]
    oem_id: str  # OID [119:104] as hex, e.g. "0x5344"
    oem_id_text: str  # the same two bytes as ASCII where printable, e.g. "SD"
    product_name: str  # PNM
    revision: str  # PRV as "major.minor" (BCD nibbles)
    serial: int  # PSN
    manufactured: str | None  # "YYYY-MM"


@dataclass(frozen=True)
class Csd:
    raw: str
    structure: int  # CSD_STRUCTURE [127:126]
    version: str  # e.g. "2.0 (SDHC/SDXC)", "1.0 (SDSC)", "eMMC 1.2"
    capacity_bytes: int | None  # from C_SIZE; None for eMMC > 2 GB (sector count in EXT_CSD)


@dataclass(frozen=True)
class Scr:
    raw: str
    spec_version: str  # e.g. "3.0x", "4.xx", "6.xx"
    bus_widths: tuple[int, ...]  # supported data bus widths in bits


@dataclass(frozen=True)
class Ssr:
    """SD Status register (SD Physical Layer Simplified Spec, section 4.10.2)."""

    raw: str
    speed_class: str | None  # "C0", "C2", "C4", "C6", "C10"
    uhs_grade: str | None  # "U1", "U3" (None when the card reports 0)
    video_class: str | None  # "V6".."V90"
    app_class: str | None  # "A1", "A2"
    au_size_bytes: int | None
    command_queue_depth: int | None  # PERFORMANCE_ENHANCE: 0 = no CQ support
    cache_supported: bool | None  # PERFORMANCE_ENHANCE bit 2


@dataclass(frozen=True)
class Claims:
    """What the card says about itself (from SSR), in the names printed on cards."""

    speed_class: str | None = None  # "C10"
    uhs_grade: str | None = None  # "U3"
    video_class: str | None = None  # "V30"
    app_class: str | None = None  # "A1" / "A2"

    def names(self) -> tuple[str, ...]:
        present = (self.speed_class, self.uhs_grade, self.video_class, self.app_class)
        return tuple(name for name in present if name)


@dataclass(frozen=True)
class Card:
    """SD or eMMC card identity decoded from sysfs `device/` registers."""

    type: str  # "SD", "MMC" (eMMC), "SDIO"
    cid: Cid | None
    csd: Csd | None
    scr: Scr | None
    ssr: Ssr | None
    manufacturer: str | None  # named from the MID+OID table
    manufacturer_source: str | None  # where that table entry comes from
    counterfeit_flags: tuple[str, ...] = ()
    claimed: Claims = field(default_factory=Claims)


@dataclass(frozen=True)
class MmcBus:
    """The SD/eMMC host and the bus mode it runs the card in."""

    host: str  # "mmc0"
    controller: str | None  # host driver, e.g. "sdhci-brcmstb"
    timing: str | None  # e.g. "sd uhs SDR104", "sd uhs DDR50", "mmc HS200"
    clock_hz: int | None  # requested clock
    actual_clock_hz: int | None
    bus_width_bits: int | None
    signal_voltage: str | None
    timing_source: str | None  # "debugfs ios", "kernel log", None when unknown
    command_queue: bool | None  # the host runs the card with command queueing
    command_queue_source: str | None
    cache_enabled: bool | None  # the kernel enabled the card's write cache
    cache_source: str | None


@dataclass(frozen=True)
class PcieLink:
    current_speed: str | None  # e.g. "5.0 GT/s PCIe"
    current_width: int | None
    max_speed: str | None
    max_width: int | None

    @property
    def below_max(self) -> bool | None:
        speed_now, speed_max = _gts(self.current_speed), _gts(self.max_speed)
        if speed_now is None or speed_max is None or not self.current_width or not self.max_width:
            return None
        return speed_now < speed_max or self.current_width < self.max_width


@dataclass(frozen=True)
class UsbLink:
    port: str  # sysfs name of the USB device, e.g. "2-1"
    vendor_id: str | None  # "0781"
    product_id: str | None
    manufacturer: str | None
    product: str | None
    speed_mbps: int | None  # negotiated
    usb_version: str | None  # bcdUSB as sysfs prints it, e.g. "3.20"
    best_speed_mbps: int | None  # the fastest signalling rate that USB version allows
    driver: str | None  # "uas" or "usb-storage"


@dataclass(frozen=True)
class VendorHealth:
    """What an SD card answered to its vendor's CMD56 health command, decoded by its layout
    (probe.sd_vendor_health); a field the layout does not give is None."""

    vendor: str  # whose layout answered, e.g. "SanDisk", "Phison (Kingston, Apacer)"
    command: str  # what was sent, e.g. "CMD56 read 0x00000001"
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
    manufactured: str | None = None
    firmware: str | None = None
    other: tuple[str, ...] = ()  # a layout's figures that no field above holds, named


@dataclass(frozen=True)
class Health:
    """Wear and health as the device reports it. Percentages are of rated life used."""

    life_time_a: str | None = None  # eMMC/UFS type A estimate, e.g. "0-10%"
    life_time_b: str | None = None
    pre_eol: str | None = None  # "normal", "warning", "urgent"
    percentage_used: int | None = None  # NVMe; an SSD's SMART wear attribute read as it
    media_errors: int | None = None  # NVMe
    critical_warning: int | None = None  # NVMe
    temperature_c: float | None = None
    sources: tuple[str, ...] = ()
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
    wear_read: str | None = field(default=None, metadata=document(omit_none=True))
    vendor: VendorHealth | None = field(  # an SD card's answer to its vendor's CMD56
        default=None, metadata=document(omit_none=True)
    )


@dataclass(frozen=True)
class Device:
    """One block device on the way from the target down (the last one is physical)."""

    name: str  # kernel name, e.g. "mmcblk0"
    kind: str  # "sd", "emmc", "ufs", "nvme", "usb", "sata", "virtio", "loop", "scsi", ...
    sysfs_path: str  # relative to the sysfs root, e.g. "devices/platform/.../block/mmcblk0"
    vendor: str | None = None
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    capacity_bytes: int | None = None
    logical_sector_bytes: int | None = None
    physical_sector_bytes: int | None = None
    rotational: bool | None = None
    removable: bool | None = None
    scheduler: str | None = None
    read_ahead_kb: int | None = None
    write_cache: str | None = None  # queue/write_cache: "write back" / "write through"
    card: Card | None = None
    mmc_bus: MmcBus | None = None
    pcie: PcieLink | None = None
    usb: UsbLink | None = None
    health: Health | None = None
    unreadable: tuple[Unreadable, ...] = ()


@dataclass(frozen=True)
class Temperature:
    zone: str  # e.g. "thermal_zone0"
    type: str | None  # e.g. "cpu-thermal"
    celsius: float


@dataclass(frozen=True)
class Throttling:
    """Raspberry Pi firmware's get_throttled bit field, decoded."""

    raw: str  # e.g. "0x50005"
    now: tuple[str, ...]  # conditions active now
    since_boot: tuple[str, ...]  # conditions that occurred since boot


@dataclass(frozen=True)
class Environment:
    board: str | None
    cpu_model: str | None
    cpu_count: int | None
    kernel: str | None
    distribution: str | None
    filesystem: str | None
    mount_point: str | None
    mount_source: str | None
    mount_options: str | None
    free_bytes: int | None
    total_bytes: int | None
    cpu_governors: tuple[str, ...]  # distinct scaling_governor values across CPUs
    cpu_mhz: tuple[int, ...]  # scaling_cur_freq per CPU, MHz
    cpu_max_mhz: int | None
    temperatures: tuple[Temperature, ...]
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
    cpu_scaling_driver: str | None = field(default=None, metadata=document(omit_none=True))


@dataclass(frozen=True)
class ProbeReport:
    target: str  # as given
    resolved: str  # absolute path
    target_type: str  # "folder", "file", "block device"
    layers: tuple[Layer, ...]
    devices: tuple[Device, ...]  # every physical device found under the target
    environment: Environment
    warnings: tuple[str, ...] = ()  # conditions that distort a benchmark
    notes: tuple[str, ...] = ()  # what could not be looked at, and why

    @property
    def device(self) -> Device | None:
        """The (first) physical device, the one a benchmark of this target measures."""
        return self.devices[0] if self.devices else None

    @property
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
