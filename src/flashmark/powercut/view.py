"""A power-cut result in words: the view every format is written from (flashmark.views)."""

from __future__ import annotations

from flashmark.powercut.result import RAW, CycleResult, PowercutResult, powercut_summary
from flashmark.units import format_size
from flashmark.views.model import Cell, Column, Lines, Notes, Row, Sentence, Table, Tone, View

COLUMNS = (
    "cycle",
    "cut at",
    "written",
    "flushed",
    "durable",
    "lost after flush",
    "lost unflushed",
    "torn",
    "corrupt",
    "device",
    "back after",
)


def describe_lines(result: PowercutResult) -> list[str]:
    """The lines under the verdict: what was tested, how, and what the kernel said."""
    target, settings = result.target, result.settings
    what = (
        f"a journal of {format_size(settings.record_bytes)} records on the device"
        if settings.mode == RAW
        else f"files of {format_size(settings.record_bytes)} on a fresh {settings.mode}"
    )
    flush = f"a flush every {settings.flush_every} records" + (
        " (the last one written with FUA)" if settings.fua else ""
    )
    cache = target.write_cache or "unknown"
    fua = {True: "yes", False: "no", None: "unknown"}[target.fua]
    lines = [
        f"device   {target.path}" + (f": {target.device}" if target.device else ""),
        f"identity {target.identity or 'none (recognised by path and capacity)'}",
        f"kernel   write cache: {cache}; FUA: {fua}; logical block {target.logical_block_bytes}",
        f"method   {what}, {flush}; power cut {settings.cut_min_s:g}-{settings.cut_max_s:g} s "
        f"after each cycle's first write",
        f"recorder {settings.recorder}",
        f"cycles   {len(result.cycles)} of {settings.cycles}, {result.duration_s:.1f} s; "
        f"flushed bytes lost: {result.flushed_bytes_lost:,}",
    ]
    if result.stopped:
        lines.append(f"stopped  {result.stopped}")
    return lines


_TONE: dict[str, Tone] = {"pass": "pass", "fail": "fail"}


def powercut_view(result: PowercutResult) -> View:
    """The verdict first (it is what the user came for), what was tested, a row per cycle (one
    that lost acknowledged writes marked), fsck's word after each cut; its CSV rows one per
    cycle (counts of records, bytes, seconds)."""
    title = f"Power-cut test {result.id}" if result.id else "Power-cut test"
    fsck = tuple(
        Sentence(
            f"fsck after cut {cycle.number}: {cycle.fsck.state} "
            f"({cycle.fsck.tool} exit {cycle.fsck.exit_status})"
            + (f": {problems}" if (problems := "; ".join(cycle.fsck.problems[:3])) else ""),
            tone="" if cycle.fsck.state == "clean" else "fail",
            shown="terminal",
        )
        for cycle in result.cycles
        if cycle.fsck is not None
    )
    table = Table(
        tuple(Column(name, numeric=name != "device") for name in COLUMNS),
        tuple(
            Row(tuple(row_of(cycle)), tone="fail" if cycle.lost_acknowledged else "")
            for cycle in result.cycles
        ),
    )
    return View(
        title=f"{title}: {result.target.path}",
        verdict=f"verdict: {powercut_summary(result)}",
        badge=result.verdict,
        tone=_TONE.get(result.verdict, "uncertain"),
        blocks=(
            Lines(tuple(describe_lines(result))),
            *((table,) if result.cycles else ()),
            *fsck,
            Notes(tuple(result.notes)),
        ),
        records=tuple(_record(result, cycle) for cycle in result.cycles),
    )


CSV_COLUMNS = (
    "id",
    "device",
    "identity",
    "run",
    "mode",
    "verdict",
    "cycle",
    "cut_at_s",
    "off_command_s",
    "records_written",
    "records_in_flight",
    "records_flushed",
    "durable",
    "lost_after_flush",
    "lost_unflushed",
    "torn",
    "corrupt",
    "flushed_bytes_lost",
    "reordered",
    "device_state",
    "back_after_s",
    "fsck",
)


def _record(result: PowercutResult, cycle: CycleResult) -> tuple[Cell, ...]:
    return (
        result.id or "", result.target.path, result.target.identity or "", result.settings.run,
        result.settings.mode, result.verdict, cycle.number, cycle.cut_at_s, cycle.off_command_s,
        cycle.records_written, cycle.records_in_flight, cycle.records_flushed, cycle.durable,
        cycle.lost_after_flush, cycle.lost_unflushed, cycle.torn, cycle.corrupt,
        cycle.flushed_bytes_lost, str(cycle.reordered).lower(), cycle.device, cycle.back_after_s,
        None if cycle.fsck is None else cycle.fsck.state,
    )  # fmt: skip


def row_of(cycle: CycleResult) -> list[str]:
    return [
        str(cycle.number),
        _seconds(cycle.cut_at_s),
        f"{cycle.records_written:,}",
        f"{cycle.records_flushed:,}",
        f"{cycle.durable:,}",
        f"{cycle.lost_after_flush:,}" + (" (reordered)" if cycle.reordered else ""),
        f"{cycle.lost_unflushed:,}",
        f"{cycle.torn:,}",
        f"{cycle.corrupt:,}",
        cycle.device + ("" if cycle.fsck is None else f", fsck {cycle.fsck.state}"),
        _seconds(cycle.back_after_s),
    ]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"
