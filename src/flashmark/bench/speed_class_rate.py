"""The sustained write measured as the SD speed classes are specified: the rate of every 4 MB
sub-unit after the write cache and the busy time of every 512 KB write. Pure.

SD Physical Layer Simplified Specification 4.10, 4.13: per 4 MB sub-unit in 512 KB units, each
write busy at most 250 ms; its KB and MB are binary here (RU and AU sizes are powers of two).
The slowest whole sub-unit after the cache is graded, host stalls left out; one slow
sub-unit alone is uncertain. docs/sustained-write.md.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence

from flashmark.bench.model import SubUnitRates
from flashmark.fio.window import Completion
from flashmark.units import MiB

SUB_UNIT_BYTES = 4 * MiB  # "performance is measured in each 4MB sub-unit" (Table 4-60)
WRITE_BUSY_LIMIT_MS = 250.0  # "Each write busy shall be less than or equal to 250ms"
_LOG_RESOLUTION_MS = 1.0  # fio logs whole milliseconds (flashmark.fio.window)
# A gap this long between a write's completion and the next write's issue is a stalled host
# (a loaded host delays a thread by tens of ms now and then, docs/emulated-flash.md); the card
# sat idle and the gap is not its time. Shorter gaps (tens of µs on a healthy host) count
# against the card: strict, never lenient. The emulated cards absorb gaps up to the same 50 ms
# (FlashModel.absorb_ns), so their truth is met exactly.
HOST_STALL_MS = 50.0
METHOD_LATENCY = (
    "sub-unit: time between completions less host stalls over 50 ms (from fio's latency log); "
    "busy: each write's total latency (fio write_lat_log)"
)
METHOD_COMPLETIONS = (
    "sub-unit and busy: time between completions (fio's per-I/O log, whole ms; no latency log)"
)


def sub_unit_rates(
    completions: Sequence[Completion],
    from_bytes: int,
    latencies_ns: Sequence[int] | None = None,
) -> SubUnitRates | None:
    """The rates of the whole 4 MiB sub-units that start at or after `from_bytes` (bytes
    written from the start of the pass) and the longest write busy; None when no whole
    sub-unit is there to grade. `completions` are in time order (flashmark.fio.window);
    `latencies_ns`, each write's total latency in the same order, make the busy times exact and
    tell host stalls from the card's time."""
    if not completions:
        return None
    exact = latencies_ns is not None and len(latencies_ns) == len(completions)
    # Per write: the host's stall before it was issued (only with latencies; 0 otherwise).
    stalls = [0.0] * len(completions)
    if exact:
        assert latencies_ns is not None
        for index in range(1, len(completions)):
            issued = completions[index].time_ms - latencies_ns[index] / 1e6
            gap = issued - completions[index - 1].time_ms
            stalls[index] = gap if gap > HOST_STALL_MS else 0.0
    first_graded = -(-max(0, from_bytes) // SUB_UNIT_BYTES)  # the first whole one after it
    # (bytes written, time, index of the first write after it) at each sub-unit boundary.
    ends: list[tuple[int, float, int]] = [(0, 0.0, 0)]
    written = 0
    for index, completion in enumerate(completions):
        written += completion.bytes
        if written >= len(ends) * SUB_UNIT_BYTES:
            ends.append((written, completion.time_ms, index + 1))
    spans = []  # (bytes, ms of the card's time, ms of uncertainty)
    for number in range(max(1, first_graded + 1), len(ends)):
        start_bytes, start_ms, first = ends[number - 1]
        end_bytes, end_ms, after = ends[number]
        stalled = [stall for stall in stalls[first:after] if stall > 0]
        took = end_ms - start_ms - sum(stalled)
        spans.append((end_bytes - start_bytes, took, _LOG_RESOLUTION_MS * (1 + len(stalled))))
    if not spans:
        return None
    rates = [_rate(size, took) for size, took, _ in spans]
    lows = sorted(_rate(size, took + error) for size, took, error in spans)
    highs = sorted(_rate(size, max(took - error, 1e-3)) for size, took, error in spans)
    # From the slowest (at its lowest) to the second slowest (at its highest): see the top.
    low, high = lows[0], highs[min(1, len(highs) - 1)]
    if exact:
        assert latencies_ns is not None
        busy = [latency / 1e6 for latency in latencies_ns[1:]]
        resolution = 0.0
    else:
        busy = [b.time_ms - a.time_ms for a, b in itertools.pairwise(completions)]
        resolution = _LOG_RESOLUTION_MS
    ranked = sorted(busy, reverse=True) or [0.0]
    longest = ranked[0]
    # From the second longest (at its shortest) to the longest (at its longest).
    busy_bounds = (max(0.0, ranked[min(1, len(ranked) - 1)] - resolution), longest + resolution)
    return SubUnitRates(
        sub_unit_bytes=SUB_UNIT_BYTES,
        from_bytes=first_graded * SUB_UNIT_BYTES,
        count=len(spans),
        min_bw_bytes=min(rates),
        min_bw_bounds=(low, high),
        median_bw_bytes=statistics.median(rates),
        max_busy_ms=longest,
        max_busy_bounds=busy_bounds,
        busy_over_limit=sum(1 for took in busy if took > WRITE_BUSY_LIMIT_MS),
        busy_limit_ms=WRITE_BUSY_LIMIT_MS,
        method=METHOD_LATENCY if exact else METHOD_COMPLETIONS,
    )


def _rate(size: int, took_ms: float) -> float:
    """Bytes per second; a span the log cannot resolve (0 ms) counts as 1 µs."""
    return size * 1000.0 / max(took_ms, 1e-3)
