"""A surface scan in words and figures: the view every format is written from
(flashmark.views). Pure: builds text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields

from flashmark.errors import printable
from flashmark.surface.result import SliceStats, SurfaceResult
from flashmark.units import format_latency_ns, format_rate, format_size, mb_per_s
from flashmark.views.model import Block, Cell, Column, Lines, Sentence, Table, View, rows_of

_BARS = "▁▂▃▄▅▆▇█"
SPARK_WIDTH = 64
TABLE_ROWS = 16
MAX_RANGES_SHOWN = 20


def _kind_text(kind: str, source: int | None) -> str:
    if kind == "aliased" and source is not None:
        return f"aliased: holds the data written at {_place(source)}"
    return {
        "zeros": "zeros: the write was dropped",
        "erased": "erased (0xFF): the write was dropped",
        "stale": "stale: not this run's data (the write never arrived)",
        "corrupted": "corrupted: this block's data, damaged",
        "unreadable": "unreadable: I/O error down to the block",
        "unwritable": "unwritable: I/O error on write, down to the block",
    }.get(kind, kind)


def summary_lines(result: SurfaceResult) -> list[str]:
    target, settings = result.target, result.settings
    integrity = result.integrity
    state = "complete" if result.complete else "INCOMPLETE"
    fs = f", {target.filesystem}" if target.filesystem else ""
    lines = [
        f"flashmark surface{f' #{result.id}' if result.id else ''}  {result.started_at}  "
        f"({state}{f', resumed from #{result.resumed_from}' if result.resumed_from else ''})",
        f"target   {printable(target.path)} ({target.kind}{fs}): {format_size(target.size_bytes)}, "
        f"{len(result.slices)} slices, "
        f"blocks of {format_size(settings.block_bytes)}, direct I/O; MB = 10^6 bytes",
    ]
    if target.device is not None:
        lines.append(f"device   {target.device}")
    for name, stats in (("write", result.write), ("read", result.read)):
        if stats is not None:
            slowest = _slowest(getattr(s, f"{name}_bw_bytes") for s in result.slices)
            lines.append(f"{name:<9}{_pass_line(stats.bw_bytes, stats.bytes, slowest)}")
    cache = result.cache
    if cache is not None and cache.found and cache.bytes is not None:
        lines.append(
            f"cache    {format_size(cache.bytes)} at {_rate(cache.burst_bw_bytes)}, "
            f"then {_rate(cache.sustained_bw_bytes)} sustained"
        )
    elif cache is not None:
        lines.append(f"cache    no fall-off found: {_rate(cache.sustained_bw_bytes)} throughout")
    if settings.verify:
        lines.append(
            f"verify   {format_size(integrity.verified_bytes)} as written, "
            f"{format_size(integrity.mismatched_bytes)} mismatched, "
            f"{format_size(integrity.unreadable_bytes)} unreadable"
            + (
                f", {format_size(integrity.unwritable_bytes)} unwritable"
                if integrity.unwritable_bytes
                else ""
            )
        )
    else:
        lines.append(
            f"errors   {format_size(integrity.unreadable_bytes)} unreadable "
            "(read only: nothing verified; --destructive writes and verifies)"
        )
    if not result.complete:
        why = result.state.stop_reason or "stopped"
        # Writing again needs the flag that allows it (cli/surface.py refuses it otherwise).
        again = " --destructive" if result.state.phase == "write" else ""
        lines.append(
            f"stopped  {why}, in the {result.state.phase} phase at "
            f"{_place(result.state.next_offset)}: "
            f"`flashmark surface {printable(target.given)}{again} --resume` continues"
        )
    return lines


def _pass_line(rate: float | None, size: int, slowest: float | None) -> str:
    """'40.0 MB/s average over 511 MiB, slowest slice 38.2 MB/s': the headline is the average
    and the slowest part; a slice faster than the device (a burst the host delivered late)
    is no headline."""
    text = f"{_rate(rate)} average over {format_size(size)}"
    return text if slowest is None else f"{text}, slowest slice {_rate(slowest)}"


def _slowest(rates: Iterable[float | None]) -> float | None:
    return min((rate for rate in rates if rate is not None), default=None)


def _place(offset: int) -> str:
    """An offset for people: '384 MiB', '0'."""
    return format_size(offset) if offset else "0"


def _rate(rate: float | None) -> str:
    return "-" if rate is None else format_rate(rate)


def sparkline(values: Sequence[float | None], width: int = SPARK_WIDTH) -> str:
    """Values squeezed into `width` characters (means of groups), scaled to their maximum."""
    if not values:
        return ""
    groups = _groups(len(values), width)
    means: list[float | None] = []
    for lo, hi in groups:
        present = [v for v in values[lo:hi] if v is not None]
        means.append(sum(present) / len(present) if present else None)
    top = max((m for m in means if m is not None), default=0.0)
    if top <= 0:
        return " " * len(means)
    return "".join(
        " " if m is None else _BARS[min(len(_BARS) - 1, int(m / top * (len(_BARS) - 1) + 0.5))]
        for m in means
    )


def _groups(count: int, width: int) -> list[tuple[int, int]]:
    width = min(width, count)
    return [(i * count // width, (i + 1) * count // width) for i in range(width)]


def cliff_marker(result: SurfaceResult, width: int = SPARK_WIDTH) -> str | None:
    """A '^' under the sparkline column where the cache ran out."""
    cache = result.cache
    if cache is None or not cache.found or cache.bytes is None or not result.slices:
        return None
    groups = _groups(len(result.slices), width)
    for column, (lo, hi) in enumerate(groups):
        last = result.slices[hi - 1]
        if lo < hi and cache.bytes < last.start + last.length:
            return " " * column + "^ cache full"
    return None


def _merged(slices: Sequence[SliceStats], lo: int, hi: int) -> SliceStats:
    """Slices lo..hi as one: their counters added, their latencies' maximum."""
    part = slices[lo:hi]
    return SliceStats(
        start=part[0].start,
        **{
            name: (max if name.endswith("latency_ns") else sum)(getattr(s, name) for s in part)
            for name in (f.name for f in fields(SliceStats)[1:])
        },
    )


def surface_view(result: SurfaceResult) -> View:
    """The summary, a sparkline of MB/s over the surface per pass (the cache cliff marked under
    the write line), the surface in 16 parts, the ranges that did not read back as written and
    the slowest requests; its CSV rows one per slice (bytes, bytes/s, ns: the stored units)."""
    slices = result.slices
    spark: list[str] = []
    if result.write is not None:
        line = sparkline([s.write_bw_bytes for s in slices])
        spark.append(f"write MB/s {line}  {_spark_scale(result.write.bw_bytes, line)}")
        marker = cliff_marker(result)
        if marker:
            spark.append(" " * 11 + marker)
    if result.read is not None:
        line = sparkline([s.read_bw_bytes for s in slices])
        spark.append(f"read MB/s  {line}  {_spark_scale(result.read.bw_bytes, line)}")
    parts = [_merged(slices, lo, hi) for lo, hi in _groups(len(slices), TABLE_ROWS)]
    outliers = [("write", o) for o in (result.write.outliers if result.write else ())] + [
        ("read", o) for o in (result.read.outliers if result.read else ())
    ]
    blocks: list[Block] = [
        Lines(tuple(summary_lines(result))),
        *((Lines(tuple(spark), shown="terminal"),) if spark else ()),
        Table(
            tuple(Column(name, numeric=True) for name in _PART_COLUMNS),
            rows_of(_part_row(part) for part in parts),
            title="the surface in parts",
            shown="terminal",
        ),
        Table(
            tuple(Column(name, numeric=True) for name in _PART_COLUMNS if name != "slowest read"),
            rows_of(
                (str(part.start), format_size(part.length), _mb(part.write_bw_bytes),
                 _mb(part.read_bw_bytes), str(part.mismatched_bytes), str(part.unreadable_bytes))
                for part in parts
            ),
            padded=False,
            shown="documents",
        ),
        *_ranges(result),
    ]  # fmt: skip
    if outliers:
        slow = "; ".join(
            f"{name} at {_place(o.offset)} {format_latency_ns(o.latency_ns)}"
            for name, o in outliers[:8]
        )
        blocks.append(Sentence(f"slow requests: {slow}", tone="uncertain", shown="terminal"))
    if result.warnings:
        warnings = "\n".join(f"warning: {w}" for w in result.warnings)
        blocks.append(Sentence(warnings, tone="uncertain", shown="terminal"))
    return View(
        title="",
        blocks=tuple(blocks),
        records=tuple(_record(result, number, piece) for number, piece in enumerate(slices)),
    )


_PART_COLUMNS = (
    "from", "size", "write MB/s", "read MB/s", "slowest read", "mismatched", "unreadable",
)  # fmt: skip


def _part_row(part: SliceStats) -> tuple[str, ...]:
    return (
        _place(part.start),
        format_size(part.length),
        _mb(part.write_bw_bytes),
        _mb(part.read_bw_bytes),
        format_latency_ns(part.read_max_latency_ns) if part.read_max_latency_ns else "-",
        format_size(part.mismatched_bytes) if part.mismatched_bytes else "-",
        format_size(part.unreadable_bytes) if part.unreadable_bytes else "-",
    )


def _ranges(result: SurfaceResult) -> tuple[Block, ...]:
    """The ranges that did not read back as written, the first MAX_RANGES_SHOWN of them."""
    ranges = result.integrity.ranges
    if not ranges:
        return ()
    table = Table(
        (Column("from", numeric=True), Column("size", numeric=True), Column("what")),
        rows_of(
            (_place(found.start), format_size(found.length), _kind_text(found.kind, found.source))
            for found in ranges[:MAX_RANGES_SHOWN]
        ),
        title="not as written",
        shown="terminal",
    )
    if len(ranges) <= MAX_RANGES_SHOWN:
        return (table,)
    more = f"... and {len(ranges) - MAX_RANGES_SHOWN} more ranges (--format json has all)"
    return table, Sentence(more, shown="terminal")


CSV_COLUMNS = (
    "id", "target", "slice", "start_bytes", "length_bytes", "write_bw_bytes", "read_bw_bytes",
    "read_max_latency_ns", "write_max_latency_ns", "mismatched_bytes", "unreadable_bytes",
)  # fmt: skip


def _record(result: SurfaceResult, number: int, piece: SliceStats) -> tuple[Cell, ...]:
    return (
        result.id or "", printable(result.target.path), number, piece.start, piece.length,
        None if piece.write_bw_bytes is None else round(piece.write_bw_bytes, 1),
        None if piece.read_bw_bytes is None else round(piece.read_bw_bytes, 1),
        piece.read_max_latency_ns, piece.write_max_latency_ns, piece.mismatched_bytes,
        piece.unreadable_bytes,
    )  # fmt: skip


def _spark_scale(average: float | None, line: str) -> str:
    """What the sparkline says in figures: the pass's average (its slowest slice is in the
    summary above)."""
    return "" if average is None or not line.strip() else f"average {mb_per_s(average):.1f}"


def _mb(rate: float | None) -> str:
    return "-" if rate is None else f"{mb_per_s(rate):.1f}"
