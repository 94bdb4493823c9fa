"""`flashmark health` as one library call: the device under a target read now (its wear as it
reports it, the kernel's write counter), joined with its earlier readings in the history, and
the forecast they give (docs/health.md).

A device's readings are found again by its key (its card's CID, else its serial, else its
kernel name); each saved result is one reading, so the record grows with every `health` run.
"""

from __future__ import annotations

import calendar
import itertools
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass

from flashmark import __version__
from flashmark.errors import TargetError
from flashmark.health.card_reads import CardReads, read_card_health
from flashmark.health.forecast import WearReading, emmc_bracket, forecast
from flashmark.health.nvme_wear import DATA_UNIT_BYTES, nvme_wear
from flashmark.health.red_flags import red_flags
from flashmark.health.result import HealthResult, WriteRate
from flashmark.health.write_counter import (
    SECTOR_BYTES,
    CounterSample,
    WritesSeen,
    add_up,
    rate_interval,
)
from flashmark.probe.emmc_health import decode_life_time
from flashmark.probe.mmc_ioctl import MmcIoctl, mmc_ioctl_for
from flashmark.probe.model import Device, Health
from flashmark.probe.smart import SmartReading, read_smart
from flashmark.probe.target import probe_target
from flashmark.probe.tools import (
    DEFAULT_TIMEOUT_S,
    ToolNotAvailable,
    ToolResult,
    ToolRunner,
    tool_runner_for,
)
from flashmark.system.diskstats import read_block_stat
from flashmark.system.sysroot import SystemRoots
from flashmark.system.target_lock import Measurer, measured_by
from flashmark.units import SECONDS_PER_DAY, UTC_FORMAT, utc_text

# Below this span the readings' own rate is too short to trust; the counter since boot
# (itself from the moment the device appeared) stands in.
MIN_SPAN_DAYS = 1.0
# The life estimate's text, as the probe decodes EXT_CSD 268/269, back to its value 1..11.
_LIFE_VALUES = {decode_life_time(f"0x{value:02x}"): value for value in range(1, 12)}
# The probe's tools that send the device a command (its SMART log), and why one was not run.
_DEVICE_TOOLS = frozenset({"nvme", "smartctl"})
_SPARED = "not run while a flashmark measures the device"
# Kernels whose `unsigned long` (the stat counters' type) is 32 bits wide, by `uname -m`
# (armv8l is a 64-bit kernel's 32-bit personality: not one of them).
_32_BIT_MACHINES = frozenset({"armv6l", "armv7l", "i386", "i486", "i586", "i686", "mips"})


@dataclass(frozen=True)
class HealthRequest:
    target: str = "/"


def read_device(
    target: str, roots: SystemRoots, measurer: Measurer | None = None
) -> tuple[Device, tuple[str, ...]]:
    """The physical device under `target` as the probe describes it, and what the probe
    could not read; TargetError for a target with no physical device below it. While
    `measurer` measures it, the probe sends it no command (its SMART log)."""
    tools = tool_runner_for(roots)
    report = probe_target(target, roots, tools if measurer is None else _DeviceSpared(tools))
    device = report.device
    if device is None:
        raise TargetError(
            f"{target}: no physical device below it (a RAM or network filesystem has no wear "
            "to read)"
        )
    notes = tuple(
        note
        for note in report.notes
        if "health" in note.lower() and _SPARED not in note  # check_health says it once
    )
    return device, notes


@dataclass(frozen=True)
class _DeviceSpared:
    """The probe's tools for a device being measured: those that send it a command are not
    run; those that read the kernel or the firmware (dmesg, vcgencmd) are."""

    tools: ToolRunner

    def run(
        self, argv: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S, *, check: bool = True
    ) -> ToolResult:
        if argv and argv[0] in _DEVICE_TOOLS:
            raise ToolNotAvailable(f"{argv[0]} {_SPARED}")
        return self.tools.run(argv, timeout_s, check=check)


def counter_now(device: Device, roots: SystemRoots, now: float) -> CounterSample | None:
    """The kernel's write counter of `device` (/sys/block/DEV/stat field 7), with this boot's
    id and the counter's width; None when it cannot be read."""
    counters = read_block_stat(roots, device.name)
    boot_id = (roots.read_proc("sys/kernel/random/boot_id") or "").strip()
    if counters is None or not boot_id:
        return None
    bits = 32 if os.uname().machine in _32_BIT_MACHINES else 64
    return CounterSample(now, boot_id, counters.sectors_written, bits)


def device_key(device: Device) -> str:
    """What finds this device's readings again (module doc)."""
    if device.card is not None and device.card.cid is not None:
        return f"cid:{device.card.cid.raw.lower()}"
    if device.serial:
        return f"serial:{device.model or ''}:{device.serial}"
    # Another device may take the name after a re-plug: its model and size tell most apart.
    return f"name:{device.name}:{device.model or ''}:{device.capacity_bytes or 0}"


def wear_reading(health: Health, cumulative_bytes: int, unseen_bytes: int) -> WearReading | None:
    """An eMMC/UFS reading (the worse of its type A and B estimates), or an SD card's vendor
    figure of life used, at `cumulative_bytes` counted since the record began (and up to
    `unseen_bytes` more); None when the device reports none."""
    vendor = health.vendor
    if vendor is not None and vendor.life_used_low_pct is not None:
        high = vendor.life_used_high_pct
        return WearReading(
            cumulative_bytes,
            vendor.life_used_low_pct / 100,
            (high if high is not None else vendor.life_used_low_pct) / 100,
            unseen_bytes,
        )
    values = [_LIFE_VALUES[text] for text in (health.life_time_a, health.life_time_b) if text]
    if not values:
        return None
    return WearReading(cumulative_bytes, *emmc_bracket(max(values)), unseen_bytes)


def skipped_reads(
    device: Device, notes: Sequence[str], target: str, smart: SmartReading | None = None
) -> tuple[str, ...]:
    """What was not read, each with the way to read it (`smart`: smartctl's reading of a USB,
    SATA or SCSI drive)."""
    skipped = list(notes)
    health = device.health
    reports = health is not None and (
        health.life_time_a or health.life_time_b or health.percentage_used is not None
    )
    nvme_as_user = device.kind == "nvme" and not reports and os.geteuid() != 0
    if nvme_as_user or (smart is not None and smart.needs_root):
        skipped.append(f"SMART needs root: sudo flashmark health {target}")
    if smart is not None:
        skipped.extend(smart.skipped)
    return tuple(skipped)


def check_health(
    request: HealthRequest,
    earlier: Sequence[HealthResult],
    roots: SystemRoots,
    now: float | None = None,
    mmc: MmcIoctl | None = None,
    vendor_health: bool = True,
) -> HealthResult:
    """Read the device now and forecast from it and its `earlier` readings (any device's:
    those of another key are left out); `mmc` asks the card itself (card_reads), an SD card's
    vendor health only with `vendor_health` (False for an unattended reading), and the device
    is asked nothing while a flashmark measures it."""
    now = time.time() if now is None else now
    # A command sent to a device a flashmark measures would fall inside its figures: while one
    # holds it, only what the kernel keeps (sysfs) is read.
    measurer = measured_by(request.target)
    device, notes = read_device(request.target, roots, measurer)
    key = device_key(device)
    smart = read_smart(device, roots, tool_runner_for(roots)) if measurer is None else None
    card = (
        read_card_health(
            device,
            (smart.health if smart is not None else None) or device.health or Health(),
            mmc or mmc_ioctl_for(roots),
            request.target,
            vendor_health,
        )
        if measurer is None
        else CardReads(
            device.health or Health(),
            (f"device commands not sent: {measurer} is measuring it",),
        )
    )
    health = card.health
    counter = counter_now(device, roots, now)
    mine = [result for result in earlier if result.device_key == key]
    samples = [result.counter for result in mine if result.counter is not None]
    samples += [counter] if counter is not None else []
    writes = add_up(samples)
    by_time = {
        seconds: (counted, unseen)
        for seconds, counted, unseen in zip(
            writes.seconds, writes.cumulative_bytes, writes.unseen_bytes, strict=True
        )
    }
    readings: list[WearReading] = []
    nvme = health.percentage_used is not None
    for result, sample in [*((r, r.counter) for r in mine), (None, counter)]:
        past = health if result is None else result.health
        if nvme:
            reading = nvme_wear(past)
        elif sample is not None:
            # The kernel reads the life estimate once, when the card starts: it holds at the
            # bytes counted when this boot began. One asked of the card (wear_read) holds now.
            counted, unseen = by_time[sample.seconds]
            at_boot = counted - sample.sectors_written * SECTOR_BYTES
            reading = wear_reading(past, counted if past.wear_read else at_boot, unseen)
        else:  # no counter: the wear as read, with no writes to set against it
            reading = wear_reading(past, 0, 0) if result is None and not samples else None
        if reading is not None:
            readings.append(reading)
    rate = _write_rate(mine, health, now, writes, counter, roots)
    record_s = now - min((_epoch(r.finished_at) or now for r in mine), default=now)
    return HealthResult(
        flashmark_version=__version__,
        target=request.target,
        device=f"/dev/{device.name}",
        device_kind=device.kind,
        model=" ".join(part for part in (device.vendor, device.model) if part) or None,
        capacity_bytes=device.capacity_bytes,
        device_key=key,
        card_cid=key.removeprefix("cid:") if key.startswith("cid:") else None,
        health=health,
        counter=counter,
        readings=len(mine) + 1,
        span_days=max(0.0, record_s) / SECONDS_PER_DAY,
        rate=rate,
        forecast=forecast(
            readings,
            rate.bytes_per_day if rate is not None else None,
            device.capacity_bytes,
            from_birth=nvme,
            rate_range=rate.interval if rate is not None else None,
        ),
        red_flags=red_flags(health),
        skipped=skipped_reads(device, notes, request.target, smart) + card.skipped,
        finished_at=utc_text(now),
    )


def _write_rate(
    mine: Sequence[HealthResult],
    health: Health,
    now: float,
    writes: WritesSeen,
    counter: CounterSample | None,
    roots: SystemRoots,
) -> WriteRate | None:
    """The writes per day: over the readings once they span a day (NVMe: the drive's own count
    of data written, which no reboot loses; else the kernel's counter summed across boots, its
    interval's top raised by what reboots may have taken), else since the counter began (this
    boot), else None."""
    counts = [r for r in mine if r.health.data_units_written is not None]
    if health.data_units_written is not None and counts:
        times = [*(_epoch(r.finished_at) or now for r in counts), now]
        units = [*(r.health.data_units_written or 0 for r in counts), health.data_units_written]
        spans = [b - a for a, b in itertools.pairwise(times)]
        amounts = [float(b - a) * DATA_UNIT_BYTES for a, b in itertools.pairwise(units)]
        over = _over_readings(spans, amounts)
    else:
        over = _over_readings(*writes.whole_stretches())
    if over is not None:
        return over
    uptime = (roots.read_proc("uptime") or "").split()
    seconds = float(uptime[0]) if uptime else 0.0
    if counter is None or seconds <= 0:
        return None
    per_day = counter.sectors_written * SECTOR_BYTES / seconds * SECONDS_PER_DAY
    return WriteRate(bytes_per_day=per_day, over_s=seconds, since_boot=True)


def _over_readings(spans_s: Sequence[float], amounts: Sequence[float]) -> WriteRate | None:
    """The rate over stretches counted whole (a reboot's stretch lost some of its writes), with
    its interval from three readings on; None until they span a day."""
    span_s = sum(spans_s)
    if span_s < MIN_SPAN_DAYS * SECONDS_PER_DAY:
        return None
    interval = rate_interval(spans_s, amounts)
    return WriteRate(
        bytes_per_day=sum(amounts) / span_s * SECONDS_PER_DAY,
        over_s=span_s,
        since_boot=False,
        low_per_day=interval.low if interval is not None else None,
        high_per_day=interval.high if interval is not None else None,
    )


def _epoch(text: str) -> float | None:
    """A reading's time (units.UTC_FORMAT); None for one it cannot read (an imported file)."""
    try:
        return calendar.timegm(time.strptime(text, UTC_FORMAT))
    except ValueError:
        return None
