"""Devices, environments and runs in words: the one place every view takes them from, so the
probe, the HTML report and the exporters say a fact the same way. An unknown fact is None.
Runs are named by the target and the device under it ("#3 /media/pi/CARD on mmcblk0p1"),
never by the host's disk alone. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from flashmark.bench.model import Passport, TargetKind
from flashmark.bench.run_result import Run
from flashmark.errors import printable
from flashmark.probe.model import Device, Environment
from flashmark.probe.summary import device_summary

_Subject = TypeVar("_Subject", Device, Environment)


@dataclass(frozen=True)
class Fact(Generic[_Subject]):
    """One row of a description: a label and how to say it of a device or an environment."""

    label: str
    text: Callable[[_Subject], str | None]
    detail: bool = False  # only in the probe's full view, not in the report's summary


def _rows(
    facts: Sequence[Fact[_Subject]], subject: _Subject, detail: bool
) -> list[tuple[str, str]]:
    """(label, text) of every fact known of `subject`; `detail` adds the detailed ones."""
    return [
        (fact.label, text)
        for fact in facts
        if (detail or not fact.detail) and (text := fact.text(subject)) is not None
    ]


def join(values: Iterable[object], separator: str = ", ") -> str | None:
    """The known values joined; None when there is none."""
    text = separator.join(str(value) for value in values if value is not None and value != "")
    return text or None


def optional(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def capacity_text(value: int | None) -> str | None:
    """Decimal GB as the SD Association and the box say it, binary GiB as Linux tools do."""
    if not value:
        return None
    return f"{value / 1e9:.1f} GB ({value / 2**30:.1f} GiB)"


# -- devices ----------------------------------------------------------------------------------


def device_name(device: Device) -> str:
    """A short name for a device: maker and product ('Samsung EB1QT'), else its kernel name
    and kind ('vda (virtio)'): a vendor id alone ('0x1af4') names nothing."""
    card = device.card
    product = card.cid.product_name if card and card.cid else device.model
    if not product:
        return f"{device.name} ({device.kind})"
    maker = (card.manufacturer if card else None) or device.vendor
    return " ".join(part for part in (maker, product) if part)


def bus_text(device: Device) -> str | None:
    """How the device is attached: SD/eMMC timing and clock, PCIe link, USB speed."""
    parts = []
    if device.mmc_bus:
        bus = device.mmc_bus
        hz = bus.actual_clock_hz or bus.clock_hz
        queueing = {True: "command queueing on", False: "no command queueing", None: None}
        parts.append(
            join(
                (
                    bus.timing,
                    f"{hz / 1e6:.0f} MHz" if hz else None,
                    f"{bus.bus_width_bits}-bit" if bus.bus_width_bits else None,
                    bus.controller,
                    queueing[bus.command_queue],
                    "card cache on" if bus.cache_enabled else None,
                )
            )
        )
    if device.pcie:
        link = device.pcie
        # sysfs speeds name the bus already: "8.0 GT/s PCIe"
        parts.append(
            f"{link.current_speed or 'PCIe ?'} x{link.current_width or '?'} "
            f"(max {link.max_speed or '?'} x{link.max_width or '?'})"
        )
    if device.usb:
        usb = device.usb
        parts.append(
            join(
                (
                    f"USB {usb.speed_mbps} Mb/s" if usb.speed_mbps else "USB",
                    f"of {usb.best_speed_mbps} Mb/s" if usb.best_speed_mbps else None,
                    f"USB {usb.usb_version}" if usb.usb_version else None,
                    usb.driver,
                )
            )
        )
    return join(parts, "; ")


def health_text(device: Device) -> str | None:
    health = device.health
    if health is None:
        return None
    return (
        join(
            (
                f"life used A {health.life_time_a}" if health.life_time_a else None,
                f"life used B {health.life_time_b}" if health.life_time_b else None,
                f"pre-EOL {health.pre_eol}" if health.pre_eol else None,
                f"{health.percentage_used}% used" if health.percentage_used is not None else None,
                f"{health.media_errors} media errors" if health.media_errors is not None else None,
                f"{health.temperature_c:.0f} °C" if health.temperature_c is not None else None,
            )
        )
        or "not reported"
    )


def card_identity(device: Device) -> str | None:
    """Who made an SD/eMMC card and what it claims, from its CID and SSR registers."""
    card = device.card
    if card is None:
        return None
    cid = card.cid
    return join(
        (
            card.type,
            card.manufacturer or (f"manufacturer id {cid.manufacturer_id:#04x}" if cid else None),
            f'"{cid.product_name}" rev {cid.revision}' if cid else None,
            f"made {cid.manufactured}" if cid and cid.manufactured else None,
            f"claims {' '.join(card.claimed.names())}" if card.claimed.names() else None,
            *(f"suspect: {flag}" for flag in card.counterfeit_flags),
        )
    )


def _cid(device: Device) -> str | None:
    cid = device.card.cid if device.card else None
    if cid is None:
        return None
    return (
        f"MID 0x{cid.manufacturer_id:02x} OID {cid.oem_id} ({cid.oem_id_text}) "
        f"{cid.product_name} rev {cid.revision}"
        + (f" made {cid.manufactured}" if cid.manufactured else "")
    )


def _manufacturer(device: Device) -> str | None:
    card = device.card
    if card is None or card.manufacturer is None:
        return None
    source = f" [{card.manufacturer_source}]" if card.manufacturer_source else ""
    return f"{card.manufacturer}{source}"


def _registers(device: Device) -> str | None:
    card = device.card
    if card is None:
        return None
    ssr = card.ssr
    return join(
        (
            f"CSD {card.csd.version}, {capacity_text(card.csd.capacity_bytes)}"
            if card.csd
            else None,
            f"SD spec {card.scr.spec_version}" if card.scr else None,
            f"AU {ssr.au_size_bytes} B" if ssr and ssr.au_size_bytes else None,
            f"command queue depth {ssr.command_queue_depth}"
            if ssr and ssr.command_queue_depth
            else None,
            {True: "cache supported", False: "no cache", None: None}[ssr.cache_supported]
            if ssr
            else None,
        ),
        "; ",
    )


def _host(device: Device) -> str | None:
    """Which SD/MMC host the card sits on, and where the bus facts were read (debugfs, sysfs):
    a reader checking a surprising timing wants the source."""
    bus = device.mmc_bus
    if bus is None:
        return None
    return join(
        (
            bus.host,
            f"timing from {bus.timing_source}" if bus.timing_source else None,
            f"command queueing from {bus.command_queue_source}"
            if bus.command_queue_source
            else None,
        )
    )


def _claims(device: Device) -> str | None:
    card = device.card
    if card is None:
        return None
    return " ".join(card.claimed.names()) or "none readable"


def _sectors(device: Device) -> str | None:
    logical, physical = device.logical_sector_bytes, device.physical_sector_bytes
    if logical is None and physical is None:
        return None
    return f"{logical or '?'} B logical, {physical or '?'} B physical"


def _queue(device: Device) -> str | None:
    return join(
        (
            f"read-ahead {device.read_ahead_kb} KiB" if device.read_ahead_kb is not None else None,
            {True: "rotational", False: "not rotational", None: None}[device.rotational],
            {True: "removable", False: None, None: None}[device.removable],
        )
    )


DEVICE_FACTS: tuple[Fact[Device], ...] = (
    Fact("device", device_summary),  # name, kind, maker, product, size, claims, bus
    Fact("kind", lambda d: d.kind),
    Fact("vendor, model", lambda d: join((d.vendor, d.model))),
    Fact("serial", lambda d: optional(d.serial), detail=True),
    Fact("firmware", lambda d: optional(d.firmware)),
    Fact("capacity", lambda d: capacity_text(d.capacity_bytes)),
    Fact("sectors", _sectors, detail=True),
    Fact("card identity", card_identity),
    Fact("CID", _cid, detail=True),
    Fact("manufacturer", _manufacturer, detail=True),
    Fact("registers", _registers, detail=True),
    Fact("claims", _claims, detail=True),
    Fact("bus", bus_text),
    Fact("host", _host, detail=True),
    Fact("I/O scheduler", lambda d: optional(d.scheduler)),
    Fact("queue", _queue, detail=True),
    Fact("write cache", lambda d: optional(d.write_cache)),
    Fact("health", health_text),
)


def device_facts(device: Device, *, detail: bool) -> list[tuple[str, str]]:
    """(label, text) of every known fact; `detail` adds the registers and the queue."""
    rows = _rows(DEVICE_FACTS, device, detail)
    if detail:
        rows += [
            ("suspicious", flag) for flag in (device.card.counterfeit_flags if device.card else ())
        ]
        rows += [("unreadable", f"{item.field}: {item.reason}") for item in device.unreadable]
    return rows


# -- environment ------------------------------------------------------------------------------


def cpu_clock_text(environment: Environment) -> str | None:
    mhz = environment.cpu_mhz
    return join(
        (
            (f"{min(mhz)}-{max(mhz)} MHz" if min(mhz) != max(mhz) else f"{mhz[0]} MHz")
            if mhz
            else None,
            f"max {environment.cpu_max_mhz} MHz" if environment.cpu_max_mhz else None,
        )
    )


def temperatures_text(environment: Environment) -> str | None:
    return join(f"{t.type or t.zone} {t.celsius:.1f} °C" for t in environment.temperatures)


def throttling_text(environment: Environment) -> str | None:
    throttling = environment.throttling
    if throttling is None:
        return None
    now = ", ".join(throttling.now) or "none now"
    since = ", ".join(throttling.since_boot) or "none since boot"
    return f"{throttling.raw}: {now}; {since}"


def load_text(environment: Environment) -> str | None:
    if environment.load_1m is None:
        return None
    text = f"{environment.load_1m:.2f} / {environment.load_5m or 0:.2f} / "
    text += f"{environment.load_15m or 0:.2f}"
    if environment.iowait_pct is not None:
        text += f"; iowait {environment.iowait_pct:.1f}%"
    if environment.device_busy_pct is not None:
        window = environment.sample_window_s
        text += f"; device busy {environment.device_busy_pct:.0f}%" + (
            f" over {window:g} s before the run" if window else " before the run"
        )
    return text


def _filesystem(environment: Environment) -> str | None:
    if environment.filesystem is None:
        return None
    where = f" at {environment.mount_point}" if environment.mount_point else ""
    options = f" ({environment.mount_options})" if environment.mount_options else ""
    return f"{environment.filesystem}{where}{options}"


def _space(environment: Environment) -> str | None:
    if environment.free_bytes is None:
        return None
    total = capacity_text(environment.total_bytes)
    return f"{capacity_text(environment.free_bytes)} free" + (f" of {total}" if total else "")


ENVIRONMENT_FACTS: tuple[Fact[Environment], ...] = (
    Fact("board", lambda e: optional(e.board)),
    Fact("CPU", lambda e: join((e.cpu_model, f"{e.cpu_count} cores" if e.cpu_count else None))),
    Fact("CPU governor", lambda e: join(e.cpu_governors)),
    Fact("CPU clock", cpu_clock_text),
    Fact("temperature", temperatures_text),
    Fact("throttling", throttling_text),
    Fact("load 1/5/15 min", load_text),
    Fact("kernel", lambda e: optional(e.kernel)),
    Fact("distribution", lambda e: optional(e.distribution)),
    Fact("filesystem", _filesystem, detail=True),
    Fact("space", _space, detail=True),
)


def environment_facts(environment: Environment, *, detail: bool) -> list[tuple[str, str]]:
    return _rows(ENVIRONMENT_FACTS, environment, detail)


# -- runs -------------------------------------------------------------------------------------


def run_id_label(run: Run, index: int) -> str:
    """A run's short name: its history id, else its position ("run 2")."""
    return f"#{run.id}" if run.id is not None else f"run {index + 1}"


def target_text(run: Run) -> str:
    """What was measured, as the user named it: the folder of the test file, or the device;
    control characters escaped, as everywhere a target is shown."""
    target = run.target
    if target.kind is TargetKind.FILE:
        return printable(target.folder or target.given)
    return printable(target.path)


def measured_device(run: Run) -> str | None:
    """The device the target is on: the block device the kernel names for the target (a
    partition, a loop device), and the probed device's name where that is the same device.

    It names the probed device only when its kernel name is the target's block device or its
    disk (a loop device is its own device: the probe does not name the disk under its file).
    """
    block = run.target.block_device
    device = run.probe.device if run.probe else None
    kernel = block.removeprefix("/dev/") if block else None
    if device is None:
        return kernel
    if kernel is None or kernel == device.name or kernel.startswith(device.name):
        name = device_name(device)
        own = kernel or device.name
        return own if name == f"{device.name} ({device.kind})" else f"{own}, {name}"
    return kernel


def run_label(run: Run, index: int) -> str:
    """A run in legends and headings: id, target and device, "#3 /media/pi/CARD on
    mmcblk0p1, Samsung EB1QT"."""
    device = measured_device(run)
    return f"{run_id_label(run, index)} {target_text(run)}" + (f" on {device}" if device else "")


def where_text(run: Run) -> str:
    """Where the run measured, in a sentence: "a test file in /media/card (ext4)"."""
    target = run.target
    if target.kind is TargetKind.FILE:
        fs = f" ({target.filesystem})" if target.filesystem else ""
        return f"a test file in {target.folder or target.path}{fs}"
    return f"block device {target.path}"


def legend_label(run: Run, index: int) -> str:
    """run_label, short enough for a chart's legend: the folder's last name and the kernel
    name of its device ("#3 CARD on mmcblk0p1"), or the device node ("#4 /dev/sda")."""
    block = run.target.block_device
    device = run.probe.device if run.probe else None
    kernel = block.removeprefix("/dev/") if block else (device.name if device else None)
    if run.target.kind is TargetKind.DEVICE:
        return f"{run_id_label(run, index)} {run.target.path}"
    target = target_text(run).rstrip("/")
    short = target.rsplit("/", 1)[-1] or target
    return f"{run_id_label(run, index)} {short}" + (f" on {kernel}" if kernel else "")


def passport_rows(passport: Passport) -> list[tuple[str, str]]:
    """A card passport as (label, text) rows: the verdict, each point with its evidence and
    source, and whether the history knew the card (the probe's and the run's terminal view)."""
    rows = [("verdict", passport.verdict)]
    for point in passport.points:
        detail = "; ".join(part for part in (point.evidence, point.source) if part)
        rows.append(
            (f"{point.topic} {point.status}", point.text + (f"  [{detail}]" if detail else ""))
        )
    rows.append(("seen before", seen_before_text(passport)))
    return rows


def seen_before_text(passport: Passport) -> str:
    if passport.seen_before:
        seen = ", ".join(str(result_id) for result_id in passport.seen_before)
        return f"results {seen} (`flashmark show ID`; `flashmark history --card {passport.cid}`)"
    return "never: this card (by CID) is not in the history"
