"""Finding the real capacity of a device that claims more than it has, in the spirit of
f3probe (AltraMayor/f3, libprobe.c) with its own layout: a survey of signature blocks over the
claimed range and a window at its end, then a search for the wrap's size or a bisection for
the first dropped write. Exact to the sector (wraps) or block (dropped writes). A fixed
CACHE_FLUSH_BYTES region is written before every read-back, so that a RAM cache cannot answer
it; the first MiB (the partition table) is never written. The method: docs/capacity.md.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from flashmark.capacity.backup import Journal
from flashmark.capacity.signature import Found, Reading, classify, signature
from flashmark.codec import written
from flashmark.errors import TargetError
from flashmark.units import MiB

BLOCK_BYTES = 4096  # a multiple of every logical block size Linux uses (512, 4096)
SECTOR_BYTES = 512
RESERVED_BYTES = 1 * MiB  # never written: partition table (f3probe: libprobe.c probe_device)
# Judgement: card controllers hold kilobytes to a few MiB of RAM (libprobe.c quotes 8 KB and
# 4 MB caches); f3probe measures the cache instead ("overwhelm_cache").
CACHE_FLUSH_BYTES = 4 * MiB
TARGET_MARKS = 2048
MIN_STEP_BYTES = 1 * MiB
# The window (2 steps) is written, backed up and restored whole: beyond 128 GiB claims the
# number of marks grows instead of the window. Judgement: random 4K writes of a cheap card
# (tens to hundreds per second) and its sequential rate (~10 MB/s) cost about the same here.
MAX_STEP_BYTES = 64 * MiB
# Reference blocks of the divisor test sit in the first step of the ruler.
MAX_CANDIDATES_PER_ROUND = 256
MAX_CANDIDATES = 65536
WINDOW_SAMPLE_BYTES = 16 * BLOCK_BYTES

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Observation:
    offset: int
    phase: str  # "survey-ruler", "survey-window", "bisect", "confirm" (a wrap size alone)
    found: Found
    origin: int | None = None
    own_sectors: int = 0  # leading sectors of the block that held their data

    @property
    @written(before="found")
    def wrote(self) -> str:
        return "signature"  # what the probe wrote to the block (capacity.signature)


@dataclass(frozen=True)
class Layout:
    claimed_bytes: int
    top: int  # claimed size rounded down to whole blocks: the probed range is [0, top)
    step: int
    marks: tuple[int, ...]
    window_start: int
    window_bytes: int
    flush_start: int
    flush_bytes: int


@dataclass(frozen=True)
class Findings:
    layout: Layout
    verdict: str  # "genuine", "fake", "uncertain"
    real_bytes: int | None
    granularity_bytes: int
    behaviour: tuple[str, ...]
    survey: tuple[Observation, ...]  # every block of the survey
    steps: tuple[Observation, ...]  # bisection and modulus tests, in order
    blocks_written: int
    blocks_read: int
    notes: tuple[str, ...]


def plan_layout(claimed_bytes: int) -> Layout:
    top = claimed_bytes // BLOCK_BYTES * BLOCK_BYTES
    first_mark = RESERVED_BYTES + CACHE_FLUSH_BYTES
    step = max(MIN_STEP_BYTES, 1 << math.ceil(math.log2(max(1, top // TARGET_MARKS))))
    step = min(step, MAX_STEP_BYTES)
    window_start = top - 2 * step
    if window_start < first_mark + step:
        raise TargetError(
            f"the device holds {claimed_bytes} bytes: too small for the capacity probe "
            f"(it needs at least {first_mark + 3 * step} bytes)"
        )
    marks = tuple(range(first_mark, window_start, step))
    return Layout(
        claimed_bytes=claimed_bytes,
        top=top,
        step=step,
        marks=marks,
        window_start=window_start,
        window_bytes=2 * step,
        flush_start=RESERVED_BYTES,
        flush_bytes=CACHE_FLUSH_BYTES,
    )


class _Prober:
    def __init__(self, journal: Journal, nonce: bytes, progress: Progress | None) -> None:
        self.journal = journal
        self.device = journal.device
        self.nonce = nonce
        self.progress = progress or (lambda step, fraction: None)
        self.written = 0
        self.read = 0
        self.before: dict[int, bytes] = {}
        self._indexed = 0
        self._flush: bytes | None = None

    def write(self, writes: Sequence[tuple[int, bytes]]) -> None:
        self.journal.write(writes)
        self.device.sync_checked()  # the batch is on the device, not in its volatile write cache
        self.written += sum(len(data) for _, data in writes) // BLOCK_BYTES

    def sign(self, offsets: Iterable[int], layout: Layout) -> None:
        """A signature block at each offset, written in one batch, then the cache flush."""
        self.write([(offset, signature(self.nonce, offset, BLOCK_BYTES)) for offset in offsets])
        self.flush(layout)

    def flush(self, layout: Layout) -> None:
        if self._flush is None:
            self._flush = signature(self.nonce, layout.flush_start, layout.flush_bytes)
        self.write([(layout.flush_start, self._flush)])

    def look(self, offset: int) -> Reading:
        data = self.device.read_bytes(offset, BLOCK_BYTES)
        self.read += 1
        before = self._before(offset)
        return classify(data, self.nonce, offset, before)

    def observe(self, offset: int, phase: str) -> Observation:
        reading = self.look(offset)
        return Observation(offset, phase, reading.found, reading.origin, reading.own_sectors)

    def _before(self, offset: int) -> bytes | None:
        """The block's content before the probe (the earliest backup of it), if backed up."""
        records = self.journal.records
        while self._indexed < len(records):
            record = records[self._indexed]
            self._indexed += 1
            for start in range(0, len(record.data), BLOCK_BYTES):
                block = record.data[start : start + BLOCK_BYTES]
                self.before.setdefault(record.offset + start, block)
        return self.before.get(offset)


def find_capacity(journal: Journal, nonce: bytes, progress: Progress | None = None) -> Findings:
    """Run the probe through `journal` (which backs up what it overwrites, unless destructive)."""
    prober = _Prober(journal, nonce, progress)
    layout = plan_layout(journal.device.size_bytes)
    survey = _survey(prober, layout)
    aliases = [o for o in survey if o.found is Found.ALIAS]
    dropped = [o for o in survey if o.found not in (Found.OWN, Found.ALIAS)]
    notes: list[str] = []
    steps: list[Observation] = []
    verdict, granularity = "genuine", BLOCK_BYTES
    real: int | None = layout.top
    if aliases or dropped:
        # writes that do not hold: whatever the real size, it is not the claim
        verdict, granularity = "fake", max(SECTOR_BYTES, journal.device.sector_bytes)
    if aliases:
        prober.progress("finding the wrap", 0.0)
        distance = math.gcd(*(abs(o.origin - o.offset) for o in aliases if o.origin is not None))
        real = _find_modulus(prober, layout, distance, steps, notes)
        if real is None:
            notes.append(
                f"addresses {distance} bytes apart share storage, but no real size that "
                "divides that distance could be confirmed"
            )
    elif dropped:
        prober.progress("bisecting", 0.0)
        real = _bisect(prober, layout, survey, steps, notes)
        own = [o.offset for o in survey if o.found is Found.OWN]
        late = [] if real is None else [offset for offset in own if offset >= real]
        if late:
            verdict = "uncertain"
            notes.append(
                f"{len(late)} block(s) beyond the last good one held their data (first "
                f"at byte {late[0]}): the device does not lose a single tail"
            )
    return Findings(
        layout=layout,
        verdict=verdict,
        real_bytes=real,
        granularity_bytes=granularity,
        behaviour=_behaviour(survey),
        survey=tuple(survey),
        steps=tuple(steps),
        blocks_written=prober.written,
        blocks_read=prober.read,
        notes=tuple(notes),
    )


_BEHAVIOUR = {
    Found.ALIAS: "wraps",
    Found.ZEROS: "zeros",
    Found.ERASED: "erased",
    Found.UNCHANGED: "drops",
    Found.OTHER: "corrupts",
}


def _behaviour(survey: Sequence[Observation]) -> tuple[str, ...]:
    seen = {o.found for o in survey}
    return tuple(name for found, name in _BEHAVIOUR.items() if found in seen)


def _survey(prober: _Prober, layout: Layout) -> list[Observation]:
    prober.progress("writing the survey", 0.0)
    window = signature(prober.nonce, layout.window_start, layout.window_bytes)
    writes = [(layout.window_start, window)]
    writes += [(mark, signature(prober.nonce, mark, BLOCK_BYTES)) for mark in layout.marks]
    prober.write(writes)
    prober.flush(layout)
    targets = [(mark, "survey-ruler") for mark in layout.marks]
    # The window is written whole (it must cover a mark's place) but read back one block in
    # 16: enough to see it wrap onto itself or stop holding; the bisection finds the rest.
    sampled = list(range(layout.window_start, layout.top, WINDOW_SAMPLE_BYTES))
    sampled.append(layout.top - BLOCK_BYTES)
    targets += [(offset, "survey-window") for offset in sorted(set(sampled))]
    order = list(range(len(targets)))
    random.Random(prober.nonce).shuffle(order)  # one block per read, no sequential pattern
    found: dict[int, Observation] = {}
    for done, index in enumerate(order):
        found[index] = prober.observe(*targets[index])
        if done % 512 == 0:
            prober.progress("reading the survey back", done / len(order))
    return [found[index] for index in range(len(targets))]


def _test_block(prober: _Prober, layout: Layout, offset: int) -> Observation:
    """A step of the bisection: the block written alone, a flush, and read back."""
    prober.sign([offset], layout)
    return prober.observe(offset, "bisect")


def _bisect(
    prober: _Prober,
    layout: Layout,
    survey: Sequence[Observation],
    steps: list[Observation],
    notes: list[str],
) -> int | None:
    """The first block that does not hold, between the last good survey block below the first
    bad one and that bad one."""
    bad = min(o.offset for o in survey if o.found not in (Found.OWN, Found.ALIAS))
    good = [o.offset for o in survey if o.found is Found.OWN and o.offset < bad]
    if good:
        low = max(good)
    else:
        # The last block of the flush region: written (and so checked) by every test.
        low = layout.flush_start + layout.flush_bytes - BLOCK_BYTES
        steps.append(_test_block(prober, layout, low))
        if steps[-1].found is not Found.OWN:
            notes.append(
                f"no block from byte {low} on holds its data: the usable capacity is "
                f"below {low + BLOCK_BYTES} bytes"
            )
            return None
    high = bad
    total = max(1, math.ceil(math.log2(max(2, (high - low) // BLOCK_BYTES))))
    while high - low > BLOCK_BYTES:
        middle = low + (high - low) // 2 // BLOCK_BYTES * BLOCK_BYTES
        steps.append(_test_block(prober, layout, middle))
        if steps[-1].found is Found.OWN:
            low = middle
        else:
            high = middle
        prober.progress("bisecting", min(1.0, len(steps) / total))
    # The first bad block may still hold its first sectors (a real size that is not a
    # multiple of the block): count them, from the last test or the survey.
    last = next((o for o in reversed(steps) if o.offset == high), None)
    own = last.own_sectors if last else next((o.own_sectors for o in survey if o.offset == high), 0)
    return high + own * SECTOR_BYTES


def divisors(number: int) -> list[int]:
    """All divisors of `number`, ascending (trial division up to its square root)."""
    small = [candidate for candidate in range(1, math.isqrt(number) + 1) if number % candidate == 0]
    return small + [number // c for c in reversed(small) if c * c != number]


def _find_modulus(
    prober: _Prober,
    layout: Layout,
    distance: int,
    steps: list[Observation],
    notes: list[str],
) -> int | None:
    """The smallest c dividing `distance` for which ref + c shares storage with ref."""
    reference = layout.marks[0] if layout.marks else layout.window_start
    # Every O_DIRECT offset must be a multiple of the logical block size (4096 on 4Kn drives).
    unit = max(SECTOR_BYTES, prober.device.sector_bytes)
    candidates = [
        c
        for c in (divisors(distance) if distance <= 1 << 62 else [])
        if c % unit == 0 and c >= BLOCK_BYTES and reference + c + BLOCK_BYTES <= layout.top
    ]
    if len(candidates) > MAX_CANDIDATES:
        notes.append(
            f"{len(candidates)} candidate sizes: only the smallest {MAX_CANDIDATES} tested"
        )
        candidates = candidates[:MAX_CANDIDATES]
    per_round = max(1, min(MAX_CANDIDATES_PER_ROUND, layout.step // BLOCK_BYTES))
    for start in range(0, len(candidates), per_round):
        chunk = candidates[start : start + per_round]
        refs = [reference + i * BLOCK_BYTES for i in range(len(chunk))]
        prober.sign(refs, layout)
        targets = [ref + c for ref, c in zip(refs, chunk, strict=True)]
        prober.sign(targets, layout)
        hits = []
        for ref, target, c in zip(refs, targets, chunk, strict=True):
            reading = prober.look(ref)
            if reading.found is Found.ALIAS and reading.origin == target:
                hits.append(c)
        prober.progress("finding the wrap", min(1.0, (start + len(chunk)) / len(candidates)))
        for c in hits:  # ascending: the smallest confirmed one is the real size
            if _confirm(prober, layout, reference, c, steps):
                return _smallest_multiple(prober, layout, reference, c, steps)
    return None


def _smallest_multiple(
    prober: _Prober, layout: Layout, reference: int, size: int, steps: list[Observation]
) -> int:
    """`size` is a multiple of the real size. In the batch, a later test block could have
    landed on the real size's reference and hidden it; so try size / p for each prime p of
    size, alone, and go down while one holds: the result is the real size itself."""
    while True:
        for prime in prime_factors(size):
            smaller = size // prime
            if smaller % prober.device.sector_bytes or smaller < BLOCK_BYTES:
                continue
            if _confirm(prober, layout, reference, smaller, steps):
                size = smaller
                break
        else:
            return size


def prime_factors(number: int) -> list[int]:
    """The distinct prime factors of `number`, ascending (trial division)."""
    factors = []
    candidate = 2
    while candidate * candidate <= number:
        if number % candidate == 0:
            factors.append(candidate)
            while number % candidate == 0:
                number //= candidate
        candidate += 1 if candidate == 2 else 2
    if number > 1:
        factors.append(number)
    return factors


def _confirm(
    prober: _Prober, layout: Layout, reference: int, candidate: int, steps: list[Observation]
) -> bool:
    """One candidate alone: a fresh reference, a flush, the block `candidate` above, a flush,
    and the reference must now read back as that block."""
    target = reference + candidate
    prober.sign([reference], layout)
    prober.sign([target], layout)
    reading = prober.look(reference)
    steps.append(Observation(target, "confirm", reading.found, reading.origin))
    return reading.found is Found.ALIAS and reading.origin == target
