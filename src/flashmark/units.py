"""Parsing and formatting of sizes, rates and durations.

flashmark stores bytes, bytes/s and nanoseconds. It shows MB/s with MB = 10^6 bytes, which is
the unit of the SD Association's speed classes (see grade.py), and labels binary units (KiB,
MiB) wherever they are used. Sizes typed by a user ("256M", "1G") are binary, like fio's.
"""

from __future__ import annotations

import calendar
import math
import re
import time
from decimal import Decimal

from flashmark.errors import UsageError

MB = 1_000_000  # decimal megabyte: the unit of MB/s everywhere flashmark shows a rate
KiB = 1024
MiB = 1024**2
GiB = 1024**3

# fio keeps sizes and offsets in 64-bit integers (unsigned long long in fio's options.c).
MAX_SIZE_BYTES = 2**63 - 1

_SIZE_SUFFIXES = {"": 1, "K": KiB, "M": MiB, "G": GiB, "T": 1024**4}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Parse "256M", "1G", "4k", "512MiB" or a plain byte count into bytes (binary suffixes).

    >>> parse_size("256M")
    268435456
    """
    match = _SIZE_RE.match(text)
    if match is None:
        raise UsageError(f"cannot read size {text!r}: use a number with K, M or G, e.g. 256M or 1G")
    number, suffix = match.groups()
    # Exact decimal arithmetic: a float turns a long digit string into inf (OverflowError).
    size = int(Decimal(number) * _SIZE_SUFFIXES[suffix.upper()])
    if size <= 0:
        raise UsageError(f"size {text!r} must be larger than zero")
    if size > MAX_SIZE_BYTES:
        shown = text if len(text) <= 24 else f"{text[:20]}... ({len(text)} characters)"
        raise UsageError(f"size {shown!r} is too large: fio counts bytes in 64 bits")
    return size


def format_size(size_bytes: int) -> str:
    """Binary size for people, labelled: 268435456 -> '256 MiB'."""
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size_bytes >= factor:
            value = size_bytes / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size_bytes} B"


def block_size_label(size_bytes: int) -> str:
    """Block size as it appears in test names: 4096 -> '4k', 1048576 -> '1M'."""
    if size_bytes % MiB == 0:
        return f"{size_bytes // MiB}M"
    if size_bytes % KiB == 0:
        return f"{size_bytes // KiB}k"
    return f"{size_bytes}"


def mb_per_s(bytes_per_s: float) -> float:
    return bytes_per_s / MB


def format_rate(bytes_per_s: float) -> str:
    """'12.3 MB/s' with MB = 10^6 bytes."""
    value = mb_per_s(bytes_per_s)
    decimals = 0 if value >= 100 else 1 if value >= 10 else 2  # three significant digits
    return f"{value:.{decimals}f} MB/s"


def format_iops(iops: float) -> str:
    return f"{iops:.0f}" if iops >= 100 else f"{iops:.1f}"


def format_latency_ns(ns: float) -> str:
    """Latency with a unit that keeps three significant digits: '812 µs', '1.29 ms'."""
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.0f} µs"
    return f"{ns:.0f} ns"


def format_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


SECONDS_PER_DAY = 86_400
# A moment as documents keep it: ISO 8601 in UTC to the second ("2026-11-29T04:12:00Z").
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_text(epoch: float) -> str:
    return time.strftime(UTC_FORMAT, time.gmtime(epoch))


def utc_epoch(text: str) -> float | None:
    """A moment written as UTC_FORMAT as Unix seconds; None for text in another form."""
    try:
        return float(calendar.timegm(time.strptime(text, UTC_FORMAT)))
    except ValueError:
        return None


def round_step(value: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at least `value`: a chart's ticks a reader
    can add."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value * (1 - 1e-9))
