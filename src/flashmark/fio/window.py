"""fio's per-I/O completion log -> exact rates of the measuring window. Pure.

Time 0 of fio's logs is the end of the ramp (fio 3.33 resets its stats then, libfio.c
`reset_all_stats`), and every completed I/O is one line, its time cut to whole milliseconds
(fio HOWTO, "Log File Formats"). Bytes are spread evenly over each burst of completions' span,
so a transfer straddling an edge counts for its part inside the window; for a device that
completes in bursts the rate between whole bursts is surer. The fio facts, the counting and
its limits: docs/methodology.md, "Exact windows".
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from flashmark.errors import FioOutputError

# Logged times are whole milliseconds, cut down: the true time lies in [t, t + 1).
_MS_MIDPOINT = 0.5
# Completions logged this close cannot be ordered in time by the log: one burst.
_SAME_INSTANT_MS = 1.0
# The bursts after the window's first that say where it would have ended
# (`_first_end_in_step`).
_NEXT_BURSTS = 5
# How far a logged time may be from the true one, both ends together: each is cut to a whole
# millisecond and taken at its middle (+-0.5 ms).
LOG_RESOLUTION_MS = 1.0


@dataclass(frozen=True)
class Completion:
    time_ms: float  # since the window start
    bytes: int


@dataclass(frozen=True)
class WindowCount:
    """One direction's I/O inside the window."""

    window_ms: float
    bytes: float  # completed inside the window, straddling transfers in proportion
    ios: float  # the same in I/Os
    interval_ms: int
    interval_bytes: tuple[float, ...]  # per whole interval of the window, in order
    completions: int  # I/Os in the log
    last_completion_ms: float | None  # the last one, drained I/Os included; None without any
    # Rates (bytes/s) between burst ends, about batch_ms each (`steady_rates`): the batches its
    # 95% interval rests on; () when the window has too few bursts.
    steady_rates_bps: tuple[float, ...] = ()
    # The rate between the ends of the window's opening burst and its last whole one (`whole`);
    # None when the window has too few bursts.
    whole: WholeBursts | None = None

    @property
    def bw_bytes(self) -> float:
        return self.bytes * 1000 / self.window_ms if self.window_ms > 0 else 0.0

    @property
    def iops(self) -> float:
        return self.ios * 1000 / self.window_ms if self.window_ms > 0 else 0.0

    @property
    def interval_rates_bps(self) -> tuple[float, ...]:
        return tuple(b * 1000 / self.interval_ms for b in self.interval_bytes)


@dataclass(frozen=True)
class WholeBursts:
    """The window's completions between the end of its opening burst and the end of its last
    whole burst (not the one fio's close cut): whole bursts only, each over the gap before it.
    On a device completing in bursts this is exact where the count is not; `uncertain_bytes`
    covers which gap a burst pays for, unequal bursts, ends off the steady line and the log's
    millisecond."""

    start_ms: float
    stop_ms: float
    bytes: float  # completed in (start_ms, stop_ms]
    ios: float
    uncertain_bytes: float

    @property
    def bw_bytes(self) -> float:
        return self.bytes * 1000 / (self.stop_ms - self.start_ms)

    @property
    def iops(self) -> float:
        return self.ios * 1000 / (self.stop_ms - self.start_ms)

    @property
    def uncertain_bps(self) -> float:
        return self.uncertain_bytes * 1000 / (self.stop_ms - self.start_ms)


def read_completions(logs: Mapping[str, str], ddir: int) -> list[Completion]:
    """Direction `ddir`'s completions (0 read, 1 write) from fio per-I/O iops logs, in time
    order. Loud about lines of another shape (quoted)."""
    return completions_by_direction(logs).get(ddir, [])


def completions_by_direction(logs: Mapping[str, str]) -> dict[int, list[Completion]]:
    """Every direction's completions from fio per-I/O iops logs, each in time order, read in
    one pass. Loud about lines of another shape (quoted)."""
    found: dict[int, list[Completion]] = {}
    for name, text in logs.items():
        # A log holds one line per I/O (millions on a fast drive): each field is
        # converted once, without a generator per line.
        for number, line in enumerate(text.splitlines(), start=1):
            fields = line.split(",", 4)
            try:
                time_ms, value, direction, size = (
                    int(fields[0]), int(fields[1]), int(fields[2]), int(fields[3])
                )  # fmt: skip
            except (ValueError, IndexError):
                if not line.strip():
                    continue
                raise FioOutputError(
                    f"fio log {name} line {number} is not 'time, value, direction, block size, "
                    f"...': {line!r}"
                ) from None
            if value != 1:
                raise FioOutputError(
                    f"fio log {name} line {number} is not a per-I/O entry (value {value}, "
                    f"expected 1: is log_avg_msec set?): {line!r}"
                )
            found.setdefault(direction, []).append(Completion(time_ms + _MS_MIDPOINT, size))
    for completions in found.values():
        completions.sort(key=lambda c: c.time_ms)
    return found


def read_latencies_ns(logs: Mapping[str, str], ddir: int) -> list[int]:
    """Direction `ddir`'s per-I/O total latencies in ns from fio's `write_lat_log` NAME_lat
    logs ("time (ms), latency (ns), direction, block size, offset", fio HOWTO "Log File
    Formats"; ns since fio 3.0), in completion order. Loud about lines of another shape."""
    found: list[tuple[int, int]] = []
    for name, text in logs.items():
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            fields = line.split(",")
            try:
                time_ms, latency_ns, direction = (int(field) for field in fields[:3])
            except ValueError:
                raise FioOutputError(
                    f"fio log {name} line {number} is not 'time, latency, direction, ...': {line!r}"
                ) from None
            if direction == ddir:
                found.append((time_ms, latency_ns))
    found.sort(key=lambda entry: entry[0])  # stable: same-millisecond entries keep log order
    return [latency for _, latency in found]


def count_window(
    completions: Iterable[Completion],
    window_ms: float,
    interval_ms: int,
    iodepth: int = 1,
    *,
    ramped: bool = True,
    batch_ms: float | None = None,
) -> WindowCount:
    """The window [0, window_ms)'s bytes and I/Os, and its bytes per interval.
    `iodepth` bounds how many I/Os were in flight when the window opened after a ramp; without
    one (`ramped` False: ramp_time=0) none were, and the window opens with the first I/O.
    The rates between burst ends are over about `batch_ms` each (default `interval_ms`)."""
    events = list(completions)
    interval_count = max(1, math.floor(window_ms / interval_ms))
    edges = [float(k * interval_ms) for k in range(interval_count + 1)]
    if window_ms < interval_ms:
        edges = [0.0, window_ms]
    width = edges[1] - edges[0]
    interval_bytes = [0.0] * (len(edges) - 1)
    window_bytes = window_ios = 0.0
    bursts = _bursts(events, window_ms)  # grouped once: the spans and the tiles share them
    spans = _spans(events, bursts, iodepth, window_ms, ramped)
    steady_bps, whole = _between_bursts(bursts, spans, window_ms, batch_ms or interval_ms)
    for span in spans:
        window_share = _share(span.start, span.end, 0.0, window_ms)
        window_bytes += window_share * span.bytes
        window_ios += window_share * span.ios
        if span.end <= 0 or span.start >= edges[-1]:
            continue
        first = max(0, math.floor(max(span.start, 0.0) / width))
        last = min(len(interval_bytes) - 1, math.floor(span.end / width))
        for k in range(first, last + 1):
            interval_bytes[k] += _share(span.start, span.end, edges[k], edges[k + 1]) * span.bytes
    return WindowCount(
        window_ms=window_ms,
        bytes=window_bytes,
        ios=window_ios,
        interval_ms=interval_ms if window_ms >= interval_ms else round(window_ms),
        interval_bytes=tuple(interval_bytes),
        completions=len(events),
        last_completion_ms=events[-1].time_ms if events else None,
        steady_rates_bps=steady_bps,
        whole=whole,
    )


@dataclass(frozen=True)
class _Span:
    """A burst of completions and the time it took: from the previous burst to its last one."""

    start: float
    end: float
    bytes: int
    ios: int


def _spans(
    events: list[Completion],
    bursts: list[list[Completion]],
    iodepth: int,
    window_ms: float,
    ramped: bool,
) -> list[_Span]:
    """The bursts of `events` (`_bursts`), each spanning from the previous burst's end to its own.
    After a ramp, the first `iodepth` completions (the I/Os in flight when the window opened)
    span one median burst spacing back from `_first_end_in_step`, the rest of that burst was
    issued inside the window; the burst fio drains at the close spans at least one median
    spacing. Without a ramp nothing straddles the start: the first burst spans from 0."""
    if not events:
        return []
    ends = [burst[-1].time_ms for burst in bursts]
    if len(bursts) > 1:
        lead = statistics.median(b - a for a, b in itertools.pairwise(ends))
    elif len(events) > 1:  # one long burst: a steady device faster than the log's resolution
        lead = (events[-1].time_ms - events[0].time_ms) / (len(events) - 1)
    else:
        lead = events[0].time_ms  # a lone I/O: it took the time since the window start
    if ramped:
        first, rest = bursts[0][: max(1, iodepth)], bursts[0][max(1, iodepth) :]
        spans = [_span(_first_end_in_step(bursts, window_ms) - lead, first)]
        if rest:
            spans.append(_span(first[-1].time_ms, rest))
    else:
        spans = [_span(0.0, bursts[0])]
    closed = False
    for previous, burst in itertools.pairwise(bursts):
        start = previous[-1].time_ms
        quiet = burst[0].time_ms - start
        if not closed and burst[-1].time_ms >= window_ms:
            closed = True
            start = min(start, burst[-1].time_ms - lead)
        if len(burst) > 1 and burst[-1].time_ms - burst[0].time_ms >= max(quiet, 2.0):
            # Not a burst but a stream (a device completing an I/O every millisecond or
            # faster), longer than the quiet before it: the quiet was its first I/O's (a stall
            # of 250 ms before 2 s of writes), spread over the stream it would hide the stall.
            spans.append(_span(start, burst[:1]))
            start = burst[0].time_ms
            burst = burst[1:]
        spans.append(_span(start, burst))
    return spans


def _first_end_in_step(bursts: list[list[Completion]], window_ms: float) -> float:
    """Where the window's first burst would have ended had it kept the pace of the next few: the
    median of its own end and where each of them points back to at their Theil-Sen rate; its own
    end when fewer than 3 whole bursts follow. A throttled 16 MiB read completing 70 ms early
    would otherwise cost the window 0.73% of its bytes."""
    own = bursts[0][-1].time_ms
    nexts = [burst for burst in bursts[1 : _NEXT_BURSTS + 1] if burst[-1].time_ms < window_ms]
    if len(nexts) < 3:
        return own
    # Only the bursts it looks at: a window of a fast drive holds millions of completions.
    done = list(
        itertools.accumulate(sum(c.bytes for c in burst) for burst in bursts[: len(nexts) + 1])
    )
    points = [(burst[-1].time_ms, done[k + 1]) for k, burst in enumerate(nexts)]
    slopes = [
        (b_done - a_done) / (b_end - a_end)
        for (a_end, a_done), (b_end, b_done) in itertools.combinations(points, 2)
        if b_end > a_end
    ]
    if not slopes or statistics.median(slopes) <= 0:
        return own
    rate = statistics.median(slopes)
    pointed = [end - (bytes_done - done[0]) / rate for end, bytes_done in points]
    return statistics.median([own, *pointed])


def _bursts(events: list[Completion], window_ms: float) -> list[list[Completion]]:
    """Completions (in time order) grouped into bursts: runs logged at most 1 ms apart, which
    the log cannot order in time. What completes after the window (fio's drain) is one burst,
    together with the one it continues across the close. [] without completions."""
    if not events:
        return []
    bursts: list[list[Completion]] = [[events[0]]]
    for event in events[1:]:
        same_instant = event.time_ms - bursts[-1][-1].time_ms <= _SAME_INSTANT_MS
        drained = event.time_ms >= window_ms and bursts[-1][-1].time_ms >= window_ms
        if same_instant or drained:
            bursts[-1].append(event)
        else:
            bursts.append([event])
    return bursts


def _span(start: float, burst: list[Completion]) -> _Span:
    return _Span(start, burst[-1].time_ms, sum(c.bytes for c in burst), len(burst))


def _share(start: float, end: float, low: float, high: float) -> float:
    """The fraction of span [start, end] inside [low, high); a point span counts whole or not."""
    if end <= start:
        return 1.0 if low <= end < high else 0.0
    overlap = min(end, high) - max(start, low)
    return max(0.0, overlap) / (end - start)


def steady_rates(
    completions: Iterable[Completion],
    window_ms: float,
    interval_ms: int,
    iodepth: int = 1,
    *,
    ramped: bool = True,
) -> tuple[float, ...]:
    """Rates (bytes/s) over about `interval_ms` each, tiling the window from the end of its
    opening burst to the end of its last whole burst: the samples its 95% interval rests on.
    Per-second rates would land the opening burst whole in the first second and miss the one the
    close cut (+-10% at a 3 s window's ends on a steady throttled card). () when there are too few
    bursts for two tiles: the caller then uses the per-second rates."""
    events = list(completions)
    bursts = _bursts(events, window_ms)
    spans = _spans(events, bursts, iodepth, window_ms, ramped)
    return _between_bursts(bursts, spans, window_ms, interval_ms)[0]


def _between_bursts(
    bursts: list[list[Completion]], spans: list[_Span], window_ms: float, interval_ms: float
) -> tuple[tuple[float, ...], WholeBursts | None]:
    """The tiles of `steady_rates` and the `WholeBursts` they tile, from the window's bursts
    (`_bursts`) and their spans (`_spans`)."""
    whole = [burst for burst in bursts if burst[-1].time_ms < window_ms]
    if len(whole) < 3:
        return (), None
    ends = [burst[-1].time_ms for burst in whole]
    spacing = statistics.median(b - a for a, b in itertools.pairwise(ends))
    # Bursts ending within half a spacing of the first still belong to the window's opening.
    opening = max(k for k, end in enumerate(ends) if end <= ends[0] + spacing / 2)
    # Likewise the last burst counted is one that half a spacing of quiet follows: a burst the
    # device split (a throttled card's grant delayed by a journal write, 5 ms) is counted whole
    # or not at all. With nothing logged after a burst, the quiet known is up to the close: at
    # queue depth 1 fio issues nothing after it, so a grant the close cut shows as its first
    # I/O alone, just before it (1K writes at 2000 IOPS: 200 a grant, then 1 at 2999.5 ms of
    # 3000, which counted as whole had the window's rate read 1.85 MB/s in its last second).
    nexts = [burst[0].time_ms for burst in bursts[1 : len(whole) + 1]]
    nexts += [window_ms] * (len(whole) - len(nexts))
    last = len(whole) - 1
    while last > opening and nexts[last] - ends[last] < spacing / 2:
        last -= 1
    whole = whole[: last + 1]
    start, stop = ends[opening], ends[last]
    if stop <= start:
        return (), None
    inside = [s for s in spans if start < s.end <= stop]
    # The counted bursts (end, bytes), a burst the device split (parts less than half a
    # spacing apart) taken whole; the opening one with those within half a spacing of it.
    counted_bursts = [(ends[opening], sum(c.bytes for b in whole[: opening + 1] for c in b))]
    for k in range(opening + 1, last + 1):
        size = sum(c.bytes for c in whole[k])
        if k > opening + 1 and whole[k][0].time_ms - ends[k - 1] < spacing / 2:
            counted_bursts[-1] = (ends[k], counted_bursts[-1][1] + size)
        else:
            counted_bursts.append((ends[k], size))
    sizes = [size for _, size in counted_bursts]
    counted = sum(s.bytes for s in inside)
    between = WholeBursts(
        start_ms=start,
        stop_ms=stop,
        bytes=counted,
        ios=sum(s.ios for s in inside),
        uncertain_bytes=max(_attribution_bytes(sizes), _ends_off_line_bytes(counted_bursts))
        + counted / (stop - start) * LOG_RESOLUTION_MS,
    )
    count = round((stop - start) / interval_ms)
    if count < 2:
        return (), between
    width = (stop - start) / count
    rates = []
    for k in range(count):
        low, high = start + k * width, start + (k + 1) * width
        # The opening burst (ends up to `start`) belongs to no tile: they start after it.
        share = sum(_share(s.start, s.end, low, high) * s.bytes for s in inside)
        rates.append(share * 1000 / width)
    return tuple(rates), between


def _ends_off_line_bytes(bursts: list[tuple[float, int]]) -> float:
    """How far the first and last of `bursts` ((end ms, bytes), in time order) are, together, from
    the least-squares line through the bytes completed by each burst's end. A throttle completes a
    transfer larger than a slice's budget at a slice boundary (16 MiB at 10 MB/s: spacings of 1600
    and 1700 ms), which moves the rate between two such ends by up to 0.6%. 0 for regular bursts."""
    if len(bursts) < 3:
        return 0.0
    ends = [end for end, _ in bursts]
    done = [0, *itertools.accumulate(size for _, size in bursts[1:])]
    line = statistics.linear_regression(ends, done)
    return abs(done[0] - line.intercept - line.slope * ends[0]) + abs(
        done[-1] - line.intercept - line.slope * ends[-1]
    )


def _attribution_bytes(sizes: list[int]) -> int:
    """What the bytes between whole bursts may be off by, for bursts of `sizes` (the opening one
    first): the opening burst less the last (which pause a burst pays for), or the largest less
    the smallest (where in a pattern of unequal bursts, 4, 4, 4, 3, the window falls)."""
    counted = sizes[1:] or sizes
    return max(abs(sizes[0] - sizes[-1]), max(counted) - min(counted))


@dataclass(frozen=True)
class Headline:
    """The window's rate: its count or the rate between its whole bursts, whichever is surer,
    and what its edges leave uncertain (bytes/s)."""

    iops: float
    bw_bytes: float
    uncertain_bps: float
    between_bursts: bool  # the rate between whole bursts, not the count


def surer_rate(count: WindowCount, completions: Sequence[Completion]) -> Headline:
    """The count of the window (`count_window` of `completions`), uncertain by a burst at its
    edges (`edge_burst_bytes`), or the rate between its whole bursts (`WholeBursts`) where that
    is surer: a device completing many I/Os at once (a throttle's grant), whose count the close
    cuts. A device completing one I/O at a time keeps its count, exact whatever the block size,
    unless the rate between its bursts is exact too and surer by the log's millisecond."""
    edge_bps = edge_burst_bytes(completions, count.window_ms) * 1000 / count.window_ms
    between = count.whole
    if between is not None and between.uncertain_bps < edge_bps:
        return Headline(between.iops, between.bw_bytes, between.uncertain_bps, True)
    return Headline(count.iops, count.bw_bytes, edge_bps, False)


def edge_burst_bytes(completions: Sequence[Completion], window_ms: float) -> float:
    """What the window's count may be off by on a device that completes in bursts: the bytes it
    completes over its typical pause (the gap a random moment falls in), beyond one I/O. A window
    holds one burst more or fewer than the rate gives, by where it falls between them; for a
    steady stream this is 0, which the spreading already places."""
    inside = [c for c in completions if c.time_ms < window_ms]
    if len(inside) < 3:
        return 0.0
    span_ms = inside[-1].time_ms - inside[0].time_ms
    gaps = sorted(b.time_ms - a.time_ms for a, b in itertools.pairwise(inside))
    if span_ms <= 0:
        return 0.0
    covered = 0.0
    typical_gap = gaps[-1]
    for gap in gaps:
        covered += gap
        if covered >= span_ms / 2:
            typical_gap = gap
            break
    rate = sum(c.bytes for c in inside[1:]) / span_ms  # bytes per ms
    one_io = statistics.median(c.bytes for c in inside)
    return max(0.0, rate * typical_gap - one_io)


def written_extent(logs: Mapping[str, str], area_bytes: int) -> int:
    """How far from the start of the area a sequential write test wrote, from its per-I/O log with
    offsets (log_offset=1, fio HOWTO "Log File Formats"): to the end of the furthest logged
    write, or all of the area once a write reaches its end (time-based jobs wrap, fio HOWTO
    "time_based"). 0 when the log has no offsets."""
    extent = 0
    for name, text in logs.items():
        for number, line in enumerate(text.splitlines(), start=1):
            fields = line.split(",")
            if len(fields) < 6:
                if line.strip():
                    return 0
                continue
            try:
                direction, size, offset = int(fields[2]), int(fields[3]), int(fields[4])
            except ValueError:
                raise FioOutputError(
                    f"fio log {name} line {number} is not 'time, value, direction, block size, "
                    f"offset, priority': {line!r}"
                ) from None
            if direction == 1:
                extent = max(extent, offset + size)
    return min(extent, area_bytes)
