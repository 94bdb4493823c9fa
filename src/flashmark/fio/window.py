"""fio's per-I/O completion log -> exact rates of the measuring window. Pure.

What fio 3.33 does (source read at tag fio-3.33, checked against real runs; see
tests/fio/test_window.py and tests/bench/test_exact_rates.py):
- When ramp_time is over, `ramp_time_over()` (time.c) calls `reset_all_stats()` (libfio.c),
  which zeroes the counters and sets `td->epoch` and `td->start` to that moment. So time 0 of
  every log and of fio's runtime is the start of the measuring window.
- The window closes when `runtime_exceeded()` sees runtime= elapsed since the epoch; do_io()
  then waits for the I/Os still in flight (`io_u_queued_complete`) and, on writes, runs the
  end_fsync, still in the running state: those I/Os are counted in fio's io_bytes/total_ios and
  logged with times after the window. fio's JSON "runtime" is measured from `td->start` to
  after the end_fsync, rounded up to a millisecond (backend.c, update_runtime).
- Completions are logged only after the ramp (`should_account()`, io_u.c), so the I/O in
  flight when the window opened appears in the log with a time just after 0.
- Without log_avg_msec, write_iops_log logs one line per completed I/O (fio HOWTO,
  "write_iops_log", "log_avg_msec"; "Log File Formats": `time (ms), value, data direction,
  block size, offset/priority`); the time is `mtime_since_now(td->epoch)` when the completion
  is reaped (stat.c, add_log_sample): whole milliseconds, cut down.

How the window is counted: the cumulative bytes completed are taken to grow linearly between
consecutive bursts of completions of the direction. A burst is a run of completions logged at
most 1 ms apart, which the log cannot order in time; most are single I/Os, but a device (or the
kernel's block throttle, which grants 100 ms of budget at once) may finish several together
after a pause, and then the pause was spent on all of them. Each burst's bytes are spread
evenly over its span, from the previous burst's last completion to its own, and the window's
bytes are what falls inside it. So a transfer straddling an edge counts for the part of its
span inside the window:
- the end: the I/Os still in flight when the window closed complete after it (fio drains
  them); they form one burst spanning at least one median burst spacing, as they would have if
  fio had kept issuing (the burst before them may have been cut short);
- the start: the I/Os in flight when the window opened (at most the queue depth; the rest of a
  burst completing then was issued inside the window and counts whole) span one median burst
  spacing back (their predecessors completed in the ramp, which fio does not log; the median,
  so that a pause elsewhere does not stretch it), from where the next few bursts put the first
  one's end (`_first_end_in_step`: a first burst that came early or late does not move it).
  Without a ramp (ramp_time=0) no I/O was
  issued before the window, which opens with the first one: the first burst spans from 0.
Logged times are cut to whole milliseconds, so each is taken at its middle (+0.5 ms). For a
device completing at a steady pace this is exact whatever the block size, where counting whole
I/Os is off by up to one transfer (12.5% at one transfer per second in 8 s).

The limit of the count, on the emulated devices (tests, benchmarks/accuracy.py): the block
throttle releases a 100 ms slice's budget at once, at the slice's start, and fio's window opens
and closes as it reaps such a burst (its thread wakes on completions). The burst at the close
straddles the window's last millisecond at an arbitrary point, so a window of 30 slices can
count up to one slice's budget more than cap x window (3.3% in 3 s, 1.25% in 8 s). Where a
release is one transfer or less (slow cards, large blocks) the count is within 0.3%. For such
a device the headline is the rate between the window's whole bursts instead (`WholeBursts`:
from the end of the opening burst to the end of the last one the close did not cut), exact
whatever the window's length; `edge_burst_bytes` and `WholeBursts.uncertain_bytes` say how
sure each is, and the parser takes the surer (bench/results.py).

Durable rates (writes): the data the host had accepted in the window is on the device once the
end_fsync returns. The durable rate is the window's bytes over the window plus the time the
end_fsync took (from the last write's completion to the end of fio's runtime, which fio
measures from the window start to the fsync's return, backend.c update_runtime). The queue's
drain is not added: the window's share of the drained I/Os is already counted.

Log volume: one line (~25 bytes) per I/O and ~32 bytes per I/O in fio's memory until the job
ends: 80,000 lines for 10,000 IOPS over 8 s. The worst case is a fast NVMe drive at a deep
queue: 200,000 IOPS over the full profile's 10 s is 2 million lines (~50 MB in the temporary
work folder, ~64 MB in fio). The log is read line by line, never held whole.
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
_LOG_RESOLUTION_MS = 1.0


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
    # Rates (bytes/s) between burst ends, about interval_ms each (`steady_rates`); () when the
    # window has too few bursts.
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

    On a device completing in bursts this is the exact rate, where the window's count is not:
    fio's window opens and closes as it reaps a burst (its thread wakes on completions), and
    the burst at the close is cut by the log's millisecond at an arbitrary point, which the
    count takes in proportion (`edge_burst_bytes`). The kernel block throttle of an emulated
    1500 IOPS / 40 MB/s card read within 0.12% of its caps between bursts over 2 to 8 s
    windows, where the windows' counts read up to +4.8%.

    What remains uncertain (`uncertain_bytes`, `_attribution_bytes`): which gap a burst pays
    for, the one before it (a device that completes what it worked on) or the one after (a
    throttle granting budget for the next slice), which changes the count by the opening
    burst's bytes less the last one's; where in a pattern of unequal bursts the window falls
    (less than the largest burst less the smallest); nothing of either for a device whose
    bursts are alike; how far its two ends are off the steady line through all its bursts,
    where that is more (`_ends_off_line_bytes`: a lone transfer granted at a throttle's slice
    boundary); and a millisecond of the rate, the log's resolution at the two ends."""

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
    found: list[Completion] = []
    for name, text in logs.items():
        # A log holds one line per I/O (millions on a fast drive, see above): each field is
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
            if direction == ddir:
                found.append(Completion(time_ms + _MS_MIDPOINT, size))
    found.sort(key=lambda c: c.time_ms)
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
) -> WindowCount:
    """The window [0, window_ms)'s bytes and I/Os, and its bytes per interval.
    `iodepth` bounds how many I/Os were in flight when the window opened after a ramp; without
    one (`ramped` False: ramp_time=0) none were, and the window opens with the first I/O."""
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
    steady_bps, whole = _between_bursts(bursts, spans, window_ms, interval_ms)
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
    """The bursts of `events` (`_bursts`: gaps <= 1 ms, which the log cannot order), each
    spanning from the previous burst's end to its own.

    The first burst's predecessor completed in the unlogged ramp. Only I/Os issued before the
    window opened can straddle its start, at most `iodepth` of them: the first `iodepth`
    completions span one median burst spacing (the median, so that a pause elsewhere does not
    stretch it) before the first completion, taken where the next bursts put it
    (`_first_end_in_step`); the rest of that burst was issued inside the
    window. (A device that finishes many I/Os at once when the window opens, such as the block
    throttle granting 100 ms of budget, would otherwise have a whole burst counted as the
    ramp's.) The I/Os in flight when the window closed, the first burst after it, are treated
    alike: they span at least one median burst spacing, as they would have without the close
    (fio stops issuing then, so that burst may follow a cut-short one).

    Without a ramp, fio's window and its first I/O start together (time.c: no stats reset, the
    epoch is the job's start): nothing straddles the start, and the first burst spans from 0."""
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
        if not closed and burst[-1].time_ms >= window_ms:
            closed = True
            start = min(start, burst[-1].time_ms - lead)
        spans.append(_span(start, burst))
    return spans


def _first_end_in_step(bursts: list[list[Completion]], window_ms: float) -> float:
    """Where the window's first burst would have ended had it kept the pace of the next few:
    each of them points back to it by the bytes between them at their own rate (the median of
    the rates between pairs of them, Theil and Sen), and the median of those and its own end
    is taken. Its own end when fewer than 3 whole bursts follow it.

    The first burst's span starts one median spacing before it ends, which is off by as much
    as that burst came early or late. The kernel block throttle now and then completes a
    16 MiB read at 30 MB/s some 70 ms before its place (at 488 ms where the others keep to
    556 + k x 560 ms): taken from its own end, the window counted 0.12 of a transfer too
    little, -0.73% of 10 s."""
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
    opening burst to the end of its last whole burst (`WholeBursts`): the samples its 95%
    interval rests on.

    The window's count is exact, but its per-second split is not at the edges: the burst that
    completes as the window opens (a block throttle's slice of budget, reaped just after the
    ramp) lands whole in the first second, while every later burst is spread over the gap
    before it (`_spans`), and the last second misses the burst fio's close cut short. A steady
    card throttled at 1920 IOPS read +10% in its first second and -10% in its last of a 3 s
    window (an emulated card, 4 runs alike), and an interval resting on those is that wide
    although the mean is right. Tiles that start and end at burst ends hold whole bursts, and
    read the card's steady rate. () when the window has too few bursts for two tiles (a stream
    faster than the log's millisecond, or a slow device): the caller then uses the per-second
    rates. `count_window` returns them too (`steady_rates_bps`), from the spans it counts."""
    events = list(completions)
    bursts = _bursts(events, window_ms)
    spans = _spans(events, bursts, iodepth, window_ms, ramped)
    return _between_bursts(bursts, spans, window_ms, interval_ms)[0]


def _between_bursts(
    bursts: list[list[Completion]], spans: list[_Span], window_ms: float, interval_ms: int
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
        + counted / (stop - start) * _LOG_RESOLUTION_MS,
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
    """How far the first and last of `bursts` ((end ms, bytes), in time order) are from the
    steady line through all of them, together, in bytes: the line fitted by least squares to
    the bytes completed by each burst's end, after the first.

    Each end of the rate between whole bursts is one burst's completion time. The kernel block
    throttle grants budget per 100 ms slice, so a transfer needing more than a slice's budget
    (16 MiB at 10 MB/s: 1677.7 ms) completes at the slice boundary after it: spacings of 1600
    and 1700 ms, 1639 to 1708 ms as recorded on this host. A rate between two such ends read
    +0.34% on a quiet host and +0.63% on a loaded one (CI, stop 18) where the window's count
    read -0.17% and -0.39%. For bursts alike and regular this is 0; unequal ones (a throttle's
    4, 4, 4, 3) sit off the line by part of a burst, which `_attribution_bytes` covers too."""
    if len(bursts) < 3:
        return 0.0
    ends = [end for end, _ in bursts]
    done = [0, *itertools.accumulate(size for _, size in bursts[1:])]
    line = statistics.linear_regression(ends, done)
    return abs(done[0] - line.intercept - line.slope * ends[0]) + abs(
        done[-1] - line.intercept - line.slope * ends[-1]
    )


def _attribution_bytes(sizes: list[int]) -> int:
    """What the bytes between whole bursts may be off by, for bursts of `sizes` (the opening
    one first): which pause a burst pays for (the one before it, or the one after, as a
    throttle's grant does) changes the count by the opening burst less the last; and bursts
    that differ by whole transfers (1 MiB reads through a 100 ms throttle grant: 4, 4, 4, 3)
    put the window somewhere in their pattern, off by less than the largest less the smallest
    (a throttle carrying its unused budget forward stays within one step of its line)."""
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
    """What the window's count may be off by on a device that completes in bursts: the bytes
    the device completes over its typical pause, beyond one I/O (0 for a steady stream).

    The count spreads each burst over the gap before it (`_spans`), which is exact for a steady
    stream whatever the block size. A device that finishes many I/Os at once after a pause (the
    kernel block throttle grants 100 ms of budget at a time: 150 I/Os of a 1500 IOPS card) has
    one burst more or fewer inside a window than its rate gives, by where the window falls
    between them, and the log cannot tell which: an emulated card at 1500 IOPS read 1539 IOPS
    over 3 s (one burst more) and 1500 over 8 s. The typical pause is the gap between
    completions that a moment picked at random falls in (the median of the gaps weighted by
    their length); over it the device completes rate x pause. For a steady stream that is one
    I/O, which the spreading already places; a device faster than the log's millisecond adds
    a millisecond's I/O, a negligible share of any window."""
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
    """How far from the start of the area a sequential write test wrote, from its per-I/O log
    with offsets (log_offset=1: `time, value, direction, block size, offset, priority`, fio
    HOWTO "Log File Formats").

    The test wrote sequentially from offset 0, its unlogged ramp first, so the area up to the
    end of the furthest logged write is written; a write reaching the end of the area means fio
    went round (time-based jobs wrap, fio HOWTO "time_based"): all of it. 0 when the log has
    no offsets (nothing is known to be written)."""
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
