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
them (flashmark.grading.classes).
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
A write's busy time is the time between its completion and the previous one's: at queue depth
1 that is the card's busy plus the host's turn-around (microseconds; a stalled host counts
against the card, which makes the check strict, never lenient). Every write but the first
(the preparation) is checked.

Bounds: fio logs whole milliseconds, cut down, so a span between two logged times is known
to within 1 ms either way. The slowest sub-unit's rate lies between the slowest of the
sub-units' lowest possible rates and the slowest of their highest possible rates; the longest
busy likewise within 1 ms. These are the bounds the verdicts use (flashmark.grading.classes):
they are not a confidence interval of a mean, because a minimum is not an average. A measured
sub-unit below the class is a sub-unit below it, whatever the others did; what the bounds
cover is only the log's resolution.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence

from flashmark.fio.window import Completion
from flashmark.model import SubUnitRates
from flashmark.units import KiB, MiB

RECORDING_UNIT_BYTES = 512 * KiB  # RU = 512 KB (4.13.3.3, Table 4-60)
SUB_UNIT_BYTES = 4 * MiB  # "performance is measured in each 4MB sub-unit" (Table 4-60)
WRITE_BUSY_LIMIT_MS = 250.0  # "Each write busy shall be less than or equal to 250ms"
_LOG_RESOLUTION_MS = 1.0  # fio logs whole milliseconds (flashmark.fio.window)


def sub_unit_rates(completions: Sequence[Completion], from_bytes: int) -> SubUnitRates | None:
    """The rates of the whole 4 MiB sub-units that start at or after `from_bytes` (bytes
    written from the start of the pass) and the longest write busy; None when no whole
    sub-unit is there to grade. `completions` are in time order (flashmark.fio.window)."""
    if not completions:
        return None
    first_graded = -(-max(0, from_bytes) // SUB_UNIT_BYTES)  # the first whole one after it
    # (bytes written, time) at the end of each sub-unit, and at the start of the pass.
    ends: list[tuple[int, float]] = [(0, 0.0)]
    written = 0
    for completion in completions:
        written += completion.bytes
        if written >= (len(ends)) * SUB_UNIT_BYTES:
            ends.append((written, completion.time_ms))
    spans = []
    for index in range(max(1, first_graded + 1), len(ends)):
        start_bytes, start_ms = ends[index - 1]
        end_bytes, end_ms = ends[index]
        if start_bytes < first_graded * SUB_UNIT_BYTES:
            continue
        spans.append((end_bytes - start_bytes, end_ms - start_ms))
    if not spans:
        return None
    rates = [_rate(size, took) for size, took in spans]
    slowest = min(rates)
    low = min(_rate(size, took + _LOG_RESOLUTION_MS) for size, took in spans)
    high = min(_rate(size, max(took - _LOG_RESOLUTION_MS, 1e-3)) for size, took in spans)
    busy = [later.time_ms - earlier.time_ms for earlier, later in itertools.pairwise(completions)]
    longest = max(busy, default=0.0)
    return SubUnitRates(
        sub_unit_bytes=SUB_UNIT_BYTES,
        from_bytes=first_graded * SUB_UNIT_BYTES,
        count=len(spans),
        min_bw_bytes=slowest,
        min_bw_bounds=(low, high),
        median_bw_bytes=statistics.median(rates),
        max_busy_ms=longest,
        max_busy_bounds=(max(0.0, longest - _LOG_RESOLUTION_MS), longest + _LOG_RESOLUTION_MS),
        busy_over_limit=sum(1 for took in busy if took > WRITE_BUSY_LIMIT_MS),
        busy_limit_ms=WRITE_BUSY_LIMIT_MS,
    )


def _rate(size: int, took_ms: float) -> float:
    """Bytes per second; a span the log cannot resolve (0 ms) counts as 1 µs."""
    return size * 1000.0 / max(took_ms, 1e-3)
