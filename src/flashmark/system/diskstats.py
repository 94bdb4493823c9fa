"""/proc/diskstats: the kernel's per-device I/O counters, read and parsed, and which device a
path lives on.

A line is "major minor name" and 11, 15 (4.18: discards) or 17 (5.5: flushes) counters, or 4
on partition lines of 2.6.0-2.6.24 (Documentation/admin-guide/iostats.rst); any other shape is
refused, quoting the line. Sectors are 512 bytes whatever the device's (Documentation/block/
stat.rst), and the counters wrap at 2^32 on 32-bit boards: deltas are taken modulo their width.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from flashmark.errors import EnvironmentProblem, FlashmarkError, TargetNotFound
from flashmark.system.sysroot import SECTOR_BYTES as SECTOR_BYTES
from flashmark.system.sysroot import SystemRoots
from flashmark.upload_rules import KERNEL_NAME, upload, uploaded

KIB = 1024

# Number of whitespace-separated fields per line for each kernel format (see module doc).
FORMAT_FIELDS = {
    7: "2.6.0-2.6.24 partition",
    14: "2.6.25-4.17",
    18: "4.18-5.4 (discards)",
    20: "5.5+ (discards, flushes)",
}


# The counters of a line in the order the kernel writes them (iostats.rst): 11 up to 4.17,
# then discards (4.18) and flushes (5.5); old partition lines hold only four.
_COUNTERS = (
    "reads", "reads_merged", "sectors_read", "read_ms",
    "writes", "writes_merged", "sectors_written", "write_ms",
    "in_flight", "io_ms", "weighted_io_ms",
    "discards", "discards_merged", "sectors_discarded", "discard_ms",
    "flushes", "flush_ms",
)  # fmt: skip
_PARTITION_COUNTERS = ("reads", "sectors_read", "writes", "sectors_written")


class DiskstatsFormatError(FlashmarkError):
    """/proc/diskstats (or a recorded copy) has a shape no kernel has produced."""


class MonitorDeviceNotFound(TargetNotFound):
    """The device to monitor is not listed in /proc/diskstats."""


class DiskstatsUnreadable(EnvironmentProblem):
    """/proc/diskstats cannot be read (no procfs, or a moved root without the file)."""


@uploaded
@dataclass(frozen=True)
class DiskCounters:
    """One line of /proc/diskstats. Counters a kernel format lacks are None."""

    major: int
    minor: int
    name: str = field(metadata=upload(KERNEL_NAME.or_withheld()))
    fields: int  # 7, 14, 18 or 20: the kernel format (FORMAT_FIELDS)
    reads: int  # completed (7-field partitions: issued)
    sectors_read: int
    writes: int
    sectors_written: int
    reads_merged: int | None = None
    read_ms: int | None = None
    writes_merged: int | None = None
    write_ms: int | None = None
    in_flight: int | None = None
    io_ms: int | None = None  # time the device had at least one request in flight
    weighted_io_ms: int | None = None  # sum of in-flight time of all requests
    discards: int | None = None
    discards_merged: int | None = None
    sectors_discarded: int | None = None
    discard_ms: int | None = None
    flushes: int | None = None
    flush_ms: int | None = None


def parse_diskstats_line(line: str) -> DiskCounters:
    parts = line.split()
    count = len(parts)
    if count not in FORMAT_FIELDS:
        raise DiskstatsFormatError(
            f"diskstats line has {count} fields, expected 7, 14, 18 or 20 "
            f"(Documentation/admin-guide/iostats.rst): {line.strip()!r}"
        )
    try:
        major, minor = int(parts[0]), int(parts[1])
        values = [int(value) for value in parts[3:]]
    except ValueError:
        raise DiskstatsFormatError(
            f"diskstats line has a field that is not a whole number: {line.strip()!r}"
        ) from None
    names = _PARTITION_COUNTERS if count == 7 else _COUNTERS
    return DiskCounters(major, minor, parts[2], count, **dict(zip(names, values, strict=False)))


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    """Every device of a /proc/diskstats text, by name."""
    devices: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        if line.strip():
            counters = parse_diskstats_line(line)
            devices[counters.name] = counters
    return devices


def read_block_stat(roots: SystemRoots, name: str) -> DiskCounters | None:
    """The counters of block device `name` from its sysfs `stat`: its diskstats line without
    the numbers and name (Documentation/block/stat.rst); None when it cannot be read."""
    text = roots.read_sys(f"class/block/{name}/stat")
    try:
        return None if text is None else parse_diskstats_line(f"0 0 {name} {text}")
    except DiskstatsFormatError:
        return None


def read_diskstats(roots: SystemRoots) -> dict[str, DiskCounters]:
    text = roots.read_proc("diskstats")
    if text is None:
        raise DiskstatsUnreadable(
            f"cannot read {roots.proc_path('diskstats')}: the I/O monitor needs procfs "
            "(check FLASHMARK_PROCFS_ROOT if you moved it)"
        )
    return parse_diskstats(text)


def read_device_counters(roots: SystemRoots, device: str) -> DiskCounters:
    devices = read_diskstats(roots)
    counters = devices.get(device)
    if counters is None:
        known = ", ".join(sorted(devices)) or "none"
        raise MonitorDeviceNotFound(
            f"device {device!r} is not in {roots.proc_path('diskstats')} (devices listed: "
            f"{known}); give a name such as mmcblk0 or /dev/sda"
        )
    return counters


def normalise_device_name(device: str) -> str:
    """'/dev/mmcblk0' or a /dev/disk/by-* or /dev/mapper link -> 'mmcblk0' / 'dm-0'."""
    if device.startswith("/"):
        return Path(os.path.realpath(device)).name
    return device


def device_for_path(path: Path, roots: SystemRoots) -> str | None:
    """The diskstats name of the whole device holding `path`, or None (tmpfs, overlay, NFS).

    A partition resolves to its disk (mmcblk0p2 -> mmcblk0), as in seed 002's iostat tables:
    the card is one device whatever partition a file is on, and only the disk line counts
    flushes (iostats.rst, field 16: "Not tracked for partitions").
    """
    try:
        st_dev = os.stat(path).st_dev
    except OSError:
        return None
    major, minor = os.major(st_dev), os.minor(st_dev)
    if major == 0:  # anonymous block device: tmpfs, overlayfs, btrfs subvolumes, network
        return None
    try:
        devices = read_diskstats(roots)
    except (DiskstatsUnreadable, DiskstatsFormatError):
        return None
    name = next((c.name for c in devices.values() if (c.major, c.minor) == (major, minor)), None)
    if name is None:
        return None
    disk = roots.disk_of(name)
    return disk if disk in devices else name
