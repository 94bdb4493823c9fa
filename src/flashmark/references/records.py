"""The typed records of the reference data set: published figures, never flashmark measurements.

Every figure keeps the text and the unit exactly as its source printed them, next to the value
flashmark normalised it to (bytes/s, IOPS, ns, s), so a reader can always check the arithmetic
against the source and see what was assumed. Nothing here does I/O; `loader.py` builds these
from the JSON files shipped beside this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

from flashmark.codec import document

# Published units and the factor that turns one of them into flashmark's unit. KiB/MiB are
# binary, kB/MB decimal (flashmark shows MB = 10^6, see flashmark.units). "usec" is how fio
# 3.x labels microseconds in its normal output (seed 000).
UNIT_FACTORS: dict[str, tuple[Decimal, str]] = {
    "B/s": (Decimal(1), "B/s"),
    "kB/s": (Decimal(1000), "B/s"),
    "KiB/s": (Decimal(1024), "B/s"),
    "MB/s": (Decimal(1000**2), "B/s"),
    "MiB/s": (Decimal(1024**2), "B/s"),
    "IOPS": (Decimal(1), "IOPS"),
    "ns": (Decimal(1), "ns"),
    "usec": (Decimal(1000), "ns"),
    "ms": (Decimal(1000**2), "ns"),
    "s": (Decimal(1), "s"),
}

# The metric names follow flashmark.bench.model.Check.metric; each has one normalised unit.
METRIC_UNITS: dict[str, str] = {
    "read_iops": "IOPS",
    "write_iops": "IOPS",
    "read_bw_bytes": "B/s",
    "write_bw_bytes": "B/s",
    "lat_mean_ns": "ns",
    "seconds": "s",
}


class MediaKind(StrEnum):
    SD = "sd"
    MICROSD = "microsd"
    EMMC = "emmc"
    NVME = "nvme"
    UFS = "ufs"
    USB = "usb"
    CF = "cf"


@dataclass(frozen=True)
class Figure:
    """One number as its source printed it.

    `text` is the cell or the fragment of a tool's output, verbatim ("42,53", "~1.5",
    "IOPS=19.1k", "DNF"). `value` is that number in `unit` (None for "DNF"/"tbd" cells).
    `unit_read_as` is the unit the number is taken to be in when it differs from the label,
    e.g. seed 002's "MB/s", which its script computes as iozone KiB/s / 1024 (= MiB/s).
    """

    text: str
    value: float | None
    unit: str
    # Absent from a figure printed in the unit it is read in: read as None, then `unit`.
    unit_read_as: str = field(metadata=document(omit_none=True))

    def __post_init__(self) -> None:
        if self.unit_read_as is None:
            object.__setattr__(self, "unit_read_as", self.unit)

    @property
    def normalising_factor(self) -> Decimal:
        return UNIT_FACTORS[self.unit_read_as][0]


@dataclass(frozen=True)
class Measurement:
    """One published figure, normalised, and the flashmark tests it can be held against."""

    metric: str  # a key of METRIC_UNITS
    tests: tuple[str, ...]  # comparable flashmark test or workload names, closest first
    block_size_bytes: int | None  # transfer size of the published test; None for workloads
    published: Figure
    also_published: tuple[Figure, ...]  # the same figure printed again in another unit
    value: float | None  # in `unit`; None when the source has no number (DNF, tbd)
    unit: str  # flashmark's unit for `metric`: "B/s", "IOPS", "ns" or "s"
    loose: bool  # even the closest flashmark test measures something noticeably different
    suspect: bool  # the figure itself looks wrong in its source (kept as published)
    note: str

    @property
    def absent(self) -> bool:
        return self.value is None


@dataclass(frozen=True)
class Source:
    """One seed document: where the figures come from and why they may not match flashmark."""

    seed: str  # the seed's file name, e.g. "002_acdb80469b41d5e2.txt"
    title: str | None  # as given in the text; None when the text has none
    author: str | None
    url: str | None
    date: str | None  # when measured or published, as far as the text says (ISO 8601 prefix)
    summary: str
    differs_because: tuple[str, ...]  # why its figures may differ from a flashmark run

    @property
    def seed_id(self) -> str:
        """The three-digit number the seed's file name starts with, e.g. "002"."""
        return self.seed.split("_", 1)[0]

    @property
    def citation(self) -> str:
        """The source as a reader would cite it, from what its text states: title, author
        (or site), year and URL, e.g. '"Performance impact of MMC storage used on SBC"
        (2018)' or 'untitled post by Ryder'. Never the seed's file name, which names nothing
        to a reader; a source stating no title is "untitled", as it is."""
        name = f'"{self.title}"' if self.title else "untitled post"
        if self.author:
            name += f" by {self.author}"
        if self.date:
            name += f" ({self.date[:4]})"
        if self.url:
            name += f", {self.url}"
        return name


@dataclass(frozen=True)
class Setup:
    """How a group of figures was measured: host, tool and method, as the source states them."""

    name: str
    host_board: str
    host_details: str  # OS, kernel, filesystem, controller: whatever the source gives
    tool: str  # "fio", "iozone", "ddrescue", "sd-card-bench"
    tool_version: str | None
    commands: tuple[str, ...]  # as published (or as in the script the source links to)
    direct_io: bool | None  # O_DIRECT; None when the source does not say
    block_sizes: str
    queue_depth: str
    test_size: str | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ReferenceValue:
    """What `ReferenceDevice.value_for` answers: a value with its provenance."""

    value: float
    unit: str
    metric: str
    test: str
    measurement: Measurement
    derived: bool  # computed from another published figure (IOPS <-> bytes/s), not printed
    loose: bool
    suspect: bool  # the published figure itself looks wrong (see the note)
    note: str


_BLOCK_SUFFIX = re.compile(r"-(\d+)([kM])(?=-|$)")


def block_size_for(test_name: str) -> int | None:
    """Block size a flashmark test name implies: "rand-read-4k" 4096, "seq-read" 1 MiB.

    Sequential tests without a size suffix use 1 MiB (flashmark.bench.profiles); workloads have
    none.
    """
    match = _BLOCK_SUFFIX.search(test_name)
    if match is not None:
        return int(match.group(1)) * (1024 if match.group(2) == "k" else 1024**2)
    if test_name.startswith("seq-"):
        return 1024**2
    return None


_DERIVABLE = {
    "read_iops": "read_bw_bytes",
    "write_iops": "write_bw_bytes",
    "read_bw_bytes": "read_iops",
    "write_bw_bytes": "write_iops",
}


@dataclass(frozen=True)
class ReferenceDevice:
    """One device as measured in one setup of one source, with its published figures."""

    slug: str
    name: str
    manufacturer: str | None
    model: str | None
    media_kind: MediaKind
    type_as_published: str | None  # e.g. "mSDXC", "USB 2.0"
    capacity: str | None  # as printed, e.g. "64 GB"
    rating: str | None  # speed class / rating as printed, e.g. "U3", "Class 4", "A2", "80x"
    production_date: str | None  # "YYYY-MM" where the source gives one
    published_label: str  # the device's row or column label in the source, verbatim
    interface: str  # slot, reader or bus it was measured through
    source: Source
    setup: Setup
    measurements: tuple[Measurement, ...]
    notes: tuple[str, ...]

    def value_for(self, test_name: str, metric: str) -> ReferenceValue | None:
        """The published value comparable to `metric` of flashmark test `test_name`, or None.

        A figure printed for that test and metric wins. Otherwise IOPS and bytes/s are derived
        from each other through the published test's block size (e.g. seed 003's iozone
        "4K rand. read (MB/s)" -> read IOPS), marked `derived` and `loose`.
        """
        direct = self._find(test_name, metric)
        if direct is not None and direct.value is not None:
            return ReferenceValue(
                value=direct.value,
                unit=direct.unit,
                metric=metric,
                test=test_name,
                measurement=direct,
                derived=False,
                loose=direct.loose or test_name != direct.tests[0],
                suspect=direct.suspect,
                note=direct.note,
            )
        other_metric = _DERIVABLE.get(metric)
        if direct is not None or other_metric is None:
            return None
        other = self._find(test_name, other_metric)
        if (
            other is None
            or other.value is None
            or other.block_size_bytes is None
            # IOPS <-> bytes/s only holds at the block size the figure was measured with: seed
            # 000's 4k sequential IOPS say nothing about flashmark's 1M seq-write.
            or block_size_for(test_name) != other.block_size_bytes
        ):
            return None
        if metric.endswith("_iops"):
            value = other.value / other.block_size_bytes
            how = f"{other.published.text} {other.published.unit} / {other.block_size_bytes} B"
        else:
            value = other.value * other.block_size_bytes
            how = f"{other.published.text} {other.published.unit} x {other.block_size_bytes} B"
        return ReferenceValue(
            value=value,
            unit=METRIC_UNITS[metric],
            metric=metric,
            test=test_name,
            measurement=other,
            derived=True,
            loose=True,
            suspect=other.suspect,
            note=f"derived, not published: {how}" + (f"; {other.note}" if other.note else ""),
        )

    def _find(self, test_name: str, metric: str) -> Measurement | None:
        return next(
            (m for m in self.measurements if m.metric == metric and test_name in m.tests),
            None,
        )
