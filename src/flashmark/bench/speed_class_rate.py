"""The sustained write measured as the SD speed classes are specified: the rate of every 4 MB
sub-unit after the write cache and the busy time of every 512 KB write. Pure.

What the SD Physical Layer Simplified Specification (Version 4.10, 2013) defines:
- 4.13.1.3 "Write Performance": the Performance Write Pw is "a minimum average write
  performance over an AU", the average of all sequential recording-unit (RU) writes to one
  complete, free allocation unit (AU). A class is met when Pw is at least its figure (Table
  4-59, SDXC: Class 10, Pw min. 10 MB/sec).
- 4.13.2.2.1 and Figure 4-52 "Measurement of Pw (AU size is larger than 4MB)", and 4.13.3.3
  Table 4-60 "Speed Grade Measurement Conditions for UHS-I and UHS-II": RU = 512 KB; "If AU
  size is larger than 4MB, performance is measured in each 4MB sub-unit"; "Each write busy
  shall be less than or equal to 250ms" (a directory-entry write of an SDXC card up to 500 ms:
  flashmark writes no directory entries in this test).
- 4.13.3.4: at the start of a recording the card may be busy up to 1 second preparing; that
  time need not be in Pw of the first AU.
The spec's KB and MB are binary here (RU sizes are multiples of 16 KByte, AU sizes 16 KB ..
64 MB in Table 4-46 are powers of two): a 512 KB RU is 512 KiB, a 4 MB sub-unit is 4 MiB.
Its MB/sec figures are graded in MB = 10^6 bytes, as the SD Association's own pages state
them (flashmark.bench.grading.classes).
The Video Speed Class (V30) is in later versions of the specification, whose measurement
conditions were not found in the public sources read; flashmark measures V30 the same way.

How flashmark applies it to the `sustained-write` test's per-I/O log (512 KiB writes at queue
depth 1, sequential from the start of the area): the writes are taken 8 at a time, each group
a 4 MiB sub-unit counted from the start of the area (on a whole device, aligned to the card's
4 MiB boundaries; in a file, wherever the filesystem put it). A sub-unit's rate is its bytes
over the time from the completion of the write before it to the completion of its last write.
Only whole sub-units after the write cache are graded (after the fall-off that
flashmark.surface.cache finds; with no fall-off, all but the first, the preparation), and the
figure graded is the slowest of them: Pw is a minimum over AUs, each sub-unit must meet it.
Host stalls: at queue depth 1 the time between two completions is the card's busy plus the
host's turn-around before it issued the next write. fio's latency log (write_lat_log) gives
each write's time from its issue to its completion, so the turn-around is known: a gap over
HOST_STALL_MS is a stalled host (the card sat idle) and is left out of the sub-unit's time;
shorter gaps count against the card. A write's busy time is its latency. Every write but the
first (the preparation) is checked against the 250 ms limit. Without a latency log (results
recorded before it) both come from the times between completions, stalls included.

The interval of a minimum (what the verdicts use, flashmark.bench.grading.classes): a minimum is
not a mean, and has no sampling error to average away; what it has is outliers. On a busy
host a single sub-unit can be slowed by a delay outside the card that the latency log does not
see (the kernel's or, on the emulated cards, the FUSE and nbdkit threads' scheduling). So the
interval of the slowest sub-unit runs from the slowest (at its lowest) to the second slowest
(at its highest): the card passes when even the slowest meets the class, fails when at least
two sub-units fall short, and one sub-unit alone below the class is "uncertain" (run again on
an idle host). Likewise the longest busy: from the second longest to the longest, so one write
over 250 ms is uncertain and two fail. Within that, fio logs whole milliseconds, cut down: a
span between two logged times is known to within 1 ms either way (1 ms more per stall left
out); latencies are logged in ns (without the latency log, within 1 ms). It is not a
confidence interval of a mean, and a pass covers only the sub-units the test wrote.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence

from flashmark.bench.model import SubUnitRates
from flashmark.fio.window import Completion
from flashmark.units import KiB, MiB

RECORDING_UNIT_BYTES = 512 * KiB  # RU = 512 KB (4.13.3.3, Table 4-60)
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
    `latencies_ns`, each write's total latency from fio's latency log in the same order, make
    the busy times exact and let host stalls be told from the card's time (see the top)."""
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
