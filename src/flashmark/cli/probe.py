"""`flashmark probe [TARGET] [--json]`: what the target's device is and what surrounds it."""

from __future__ import annotations

from collections.abc import Iterable

import click
from rich.console import Group
from rich.table import Table
from rich.text import Text

from flashmark.cli import debug_option
from flashmark.cli.output import print_json, stderr_console, stdout_console
from flashmark.grading import judge_probe
from flashmark.probe import probe_target
from flashmark.probe.model import Device, Environment, ProbeReport
from flashmark.sysroot import SystemRoots


@click.command("probe")
@click.argument("target", required=False, default=".", metavar="[TARGET]")
@click.option("--json", "as_json", is_flag=True, help='As JSON ("schema": "flashmark.probe/1").')
@debug_option
def probe_command(target: str, as_json: bool, debug: bool) -> None:
    """Identify the device under TARGET (a folder, file, partition or device; default: the
    current folder): kind, registers and claimed classes of SD/eMMC cards, bus speed,
    health, and the conditions on this machine that would distort a benchmark.

    \b
    Examples:
        flashmark probe
        flashmark probe /media/card --json
        flashmark probe /dev/mmcblk0
    Recorded trees: FLASHMARK_SYSFS_ROOT, FLASHMARK_PROCFS_ROOT, FLASHMARK_DEBUGFS_ROOT.
    """
    report = judge_probe(probe_target(target, SystemRoots.from_environment()))
    if as_json:
        print_json(report.to_dict())
    else:
        stdout_console().print(render_probe(report))
    errors = stderr_console()
    for warning in report.warnings:
        errors.print(Text(f"warning: {warning}", style="yellow"))


def render_probe(report: ProbeReport) -> Group:
    parts: list[Table | Text] = [
        Text(f"{report.target_type} {report.resolved}", style="bold"),
        _section(
            "Layers", ((layer.kind, f"{layer.name}: {layer.detail}") for layer in report.layers)
        ),
    ]
    for device in report.devices:
        parts.append(_section(f"Device {device.name}", _device_rows(device)))
    parts.append(_section("Environment", _environment_rows(report.environment)))
    if report.notes:
        parts.append(_section("Notes", (("", note) for note in report.notes)))
    return Group(*parts)


def _section(title: str, rows: Iterable[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(key, value)
    return table


def _bytes(value: int | None) -> str:
    if value is None:
        return "?"
    return f"{value / 1e9:.1f} GB ({value / 2**30:.1f} GiB)"


def _opt(value: object) -> str:
    return "?" if value is None else str(value)


def _device_rows(device: Device) -> list[tuple[str, str]]:
    rows = [
        ("kind", device.kind),
        ("vendor / model", f"{_opt(device.vendor)} / {_opt(device.model)}"),
        ("serial / firmware", f"{_opt(device.serial)} / {_opt(device.firmware)}"),
        ("capacity", _bytes(device.capacity_bytes)),
        (
            "sectors",
            f"{_opt(device.logical_sector_bytes)} B logical, "
            f"{_opt(device.physical_sector_bytes)} B physical",
        ),
        (
            "queue",
            f"scheduler {_opt(device.scheduler)}, read-ahead {_opt(device.read_ahead_kb)} KiB, "
            f"rotational {_opt(device.rotational)}, cache {_opt(device.write_cache)}",
        ),
    ]
    card = device.card
    if card:
        if card.cid:
            cid = card.cid
            rows.append(
                (
                    "CID",
                    f"MID 0x{cid.manufacturer_id:02x} OID {cid.oem_id} ({cid.oem_id_text}) "
                    f"{cid.product_name} rev {cid.revision} made {_opt(cid.manufactured)}",
                )
            )
        rows.append(
            ("manufacturer", f"{_opt(card.manufacturer)}  [{_opt(card.manufacturer_source)}]")
        )
        if card.csd:
            rows.append(("CSD", f"{card.csd.version}, {_bytes(card.csd.capacity_bytes)}"))
        if card.scr:
            rows.append(("SCR", f"SD spec {card.scr.spec_version}"))
        if card.ssr:
            ssr = card.ssr
            rows.append(
                (
                    "SSR",
                    f"AU {_opt(ssr.au_size_bytes)} B, command queue depth "
                    f"{_opt(ssr.command_queue_depth)}, cache {_opt(ssr.cache_supported)}",
                )
            )
        rows.append(("claims", " ".join(card.claimed.names()) or "none readable"))
        for flag in card.counterfeit_flags:
            rows.append(("suspicious", flag))
    bus = device.mmc_bus
    if bus:
        clock = (
            f", {bus.actual_clock_hz or bus.clock_hz} Hz"
            if (bus.clock_hz or bus.actual_clock_hz)
            else ""
        )
        rows.append(
            (
                "bus",
                f"{bus.host} ({_opt(bus.controller)}): {_opt(bus.timing)}{clock} "
                f"[{_opt(bus.timing_source)}]",
            )
        )
        rows.append(
            (
                "host features",
                f"command queueing {_opt(bus.command_queue)} [{_opt(bus.command_queue_source)}], "
                f"card cache {_opt(bus.cache_enabled)}",
            )
        )
    if device.pcie:
        link = device.pcie
        rows.append(
            (
                "PCIe link",
                f"{_opt(link.current_speed)} x{_opt(link.current_width)} "
                f"(max {_opt(link.max_speed)} x{_opt(link.max_width)})",
            )
        )
    if device.usb:
        usb = device.usb
        rows.append(
            (
                "USB",
                f"{_opt(usb.vendor_id)}:{_opt(usb.product_id)} {_opt(usb.product)}, "
                f"{_opt(usb.speed_mbps)} Mb/s of {_opt(usb.best_speed_mbps)} "
                f"(USB {_opt(usb.usb_version)}), driver {_opt(usb.driver)}",
            )
        )
    health = device.health
    if health:
        values = [
            f"life A {health.life_time_a}" if health.life_time_a else "",
            f"life B {health.life_time_b}" if health.life_time_b else "",
            f"pre-EOL {health.pre_eol}" if health.pre_eol else "",
            f"{health.percentage_used}% used" if health.percentage_used is not None else "",
            f"{health.media_errors} media errors" if health.media_errors is not None else "",
            f"{health.temperature_c:.0f} °C" if health.temperature_c is not None else "",
        ]
        rows.append(("health", ", ".join(v for v in values if v) or "not reported"))
    for item in device.unreadable:
        rows.append(("unreadable", f"{item.field}: {item.reason}"))
    return rows


def _environment_rows(env: Environment) -> list[tuple[str, str]]:
    rows = [
        ("board", _opt(env.board)),
        ("CPU", f"{_opt(env.cpu_model)} x{_opt(env.cpu_count)}"),
        ("kernel / OS", f"{_opt(env.kernel)} / {_opt(env.distribution)}"),
        (
            "filesystem",
            f"{_opt(env.filesystem)} at {_opt(env.mount_point)} ({_opt(env.mount_options)})",
        ),
        ("free space", f"{_bytes(env.free_bytes)} of {_bytes(env.total_bytes)}"),
        (
            "CPU clock",
            f"governor {', '.join(env.cpu_governors) or '?'}, "
            f"{', '.join(str(m) for m in env.cpu_mhz) or '?'} MHz (max {_opt(env.cpu_max_mhz)})",
        ),
    ]
    if env.temperatures:
        rows.append(
            (
                "temperature",
                ", ".join(f"{t.type or t.zone} {t.celsius:.0f} °C" for t in env.temperatures),
            )
        )
    if env.throttling:
        rows.append(
            (
                "throttling",
                f"{env.throttling.raw}: now {', '.join(env.throttling.now) or 'none'}; "
                f"since boot {', '.join(env.throttling.since_boot) or 'none'}",
            )
        )
    rows.append(
        (
            "load",
            f"{_opt(env.load_1m)} {_opt(env.load_5m)} {_opt(env.load_15m)}, iowait "
            f"{_opt(env.iowait_pct)}%, device busy {_opt(env.device_busy_pct)}% "
            f"over {_opt(env.sample_window_s)} s",
        )
    )
    return rows
