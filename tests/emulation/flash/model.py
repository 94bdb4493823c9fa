"""The behaviour model of an emulated flash device: its parameters, and the truth they imply.

A `FlashModel` is what a test or benchmark programs into an emulated card (device.py), and the
truth the measurements are judged against: the engine paces each request by these numbers
alone. Units are bytes, bytes per second and nanoseconds, as integers. Standard library only:
the nbdkit plugin imports it in nbdkit's embedded interpreter (the system python3).
"""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass
from typing import Any

SECTOR = 512  # the loop device's logical block: every address and size is a multiple of it
NS_PER_S = 1_000_000_000


class FakeMode(enum.StrEnum):
    """What a fake card does with addresses beyond its real capacity.

    These are the behaviours f3probe reports for counterfeit cards (docs/capacity.md):
    the controller maps the claimed addresses onto less flash, or ignores what lies beyond it.
    """

    WRAP = "wrap"  # address modulo the real capacity: beyond-the-end data overwrites the start
    ZEROS = "zeros"  # writes beyond are acknowledged and dropped; reads beyond return zeros
    ERASED = "erased"  # writes beyond are dropped; reads beyond return 0xFF (erased NAND)


@dataclass(frozen=True)
class BadRange:
    """A byte range of the claimed address space whose requests fail with EIO.

    A request that touches any byte of the range fails as a whole, as a block device request
    does (the kernel does not split a failed request to salvage the good part).
    """

    start: int
    length: int
    reads: bool = True  # reads touching the range fail (an unreadable block)
    writes: bool = False  # writes touching the range fail too (and store nothing)

    @property
    def end(self) -> int:
        return self.start + self.length

    def hits(self, offset: int, length: int, *, write: bool) -> bool:
        if not (self.writes if write else self.reads):
            return False
        return offset < self.end and self.start < offset + length


class Durability(enum.StrEnum):
    """When an acknowledged write survives a power cut (the device's volatile write cache).

    What a flush means to the host: "previously completed write requests are on non-volatile
    storage" once it completes (Linux Documentation/block/writeback_cache_control.rst).
    """

    WRITE_THROUGH = "write-through"  # no volatile cache: a completed write is durable
    HONEST = "honest"  # volatile until a flush completes (or the card writes it back itself)
    LYING = "lying"  # flushes complete at once and do nothing: durable durable_lag_ns later
    # flushes do nothing; each write becomes durable after a delay of its own, drawn in
    # [0, durable_lag_ns], so later writes are often durable before earlier ones
    OUT_OF_ORDER = "out-of-order"


class Backing(enum.StrEnum):
    """Where the real capacity lives. A sparse file only takes the space that was written."""

    FILE = "file"
    MEMORY = "memory"


@dataclass(frozen=True)
class FlashModel:
    """Parameters of an emulated flash device; None for a rate means "as fast as the host".

    Rates are paced by a running clock per device (one request at a time, like a card's single
    channel): a request of n bytes keeps the device busy for its latency plus n / rate.
    """

    claimed_bytes: int
    name: str = "emulated flash"
    real_bytes: int | None = None  # None: genuine (the real capacity is the claimed one)
    fake: FakeMode = FakeMode.WRAP  # what happens beyond real_bytes (only if it is smaller)
    read_bps: int | None = None
    read_latency_ns: int = 0  # fixed cost of every read request (sets the small-block IOPS)
    write_bps: int | None = None  # sustained write rate, once the cache is full
    write_latency_ns: int = 0
    cache_bytes: int = 0  # write cache (an SLC cache on a card): 0 = none
    cache_write_bps: int | None = None  # burst rate while the cache has room
    cache_drain_bps: int = 0  # how fast the cache empties while the device is idle
    # A gap between requests up to this long is the host's own work (kernel, FUSE, nbd, the
    # client), not device time: the request starts back to back with the one before, so that
    # work costs no rate. A longer gap is idle time, all of it (the cache drains). The
    # overhead is ~0.05 ms on an idle host, but a loaded 2-core host delays a thread by tens of
    # ms now and then: with 5 ms here, rates measured through fio came out 4-9% low at load 5;
    # with 50 ms, within 0.1%. The price: a client pausing less than this between requests
    # sees them served faster (by up to the pause), so per-request latencies with think time
    # need a smaller value. Idle periods that matter (cache recovery) last hundreds of ms; the
    # engine counts idle time exactly (FlashStats.idle_ns).
    absorb_ns: int = 50_000_000
    gc_pause_ns: int = 0  # garbage collection: the device stalls this long ...
    gc_every_bytes: int = 0  # ... each time this many more bytes have been written
    bad_ranges: tuple[BadRange, ...] = ()
    vanish_after_bytes: int | None = None  # requests fail once this many bytes moved (r + w)
    backing: Backing = Backing.FILE
    # Power cuts (docs/emulated-flash.md, "Power cuts"). The durable state is the backing
    # (file or memory); writes not yet durable live in a volatile cache of volatile_bytes,
    # which a power cut loses. The cache writes its oldest entries back when it is full.
    durability: Durability = Durability.WRITE_THROUGH
    # how long after it completes a write becomes durable on its own (honest: optional; lying
    # and out-of-order: required, their only way to durability). None: never on its own.
    durable_lag_ns: int | None = None
    volatile_bytes: int = 64 * 1024 * 1024
    # a write in service when the power goes keeps its first sectors (in proportion to the
    # service time that had passed), the sector being programmed turns to garbage, and the
    # rest of it is not stored
    torn_writes: bool = False
    reorder_seed: int = 0  # out-of-order: the delays are drawn from this seed
    # the card does not come back after its Nth power cut (None: it always does)
    dies_at_power_cut: int | None = None

    def __post_init__(self) -> None:
        problems = list(self._problems())
        if problems:
            raise ValueError(f"invalid flash model {self.name!r}: " + "; ".join(problems))

    def _problems(self) -> list[str]:
        found: list[str] = []
        if self.claimed_bytes <= 0 or self.claimed_bytes % SECTOR:
            found.append(f"claimed_bytes must be a positive multiple of {SECTOR}")
        real = self.real_capacity
        if real <= 0 or real % SECTOR or real > self.claimed_bytes:
            found.append(f"real_bytes must be a multiple of {SECTOR} in (0, claimed_bytes]")
        for name in ("read_bps", "write_bps", "cache_write_bps"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                found.append(f"{name} must be positive (None means unlimited)")
        for name in (
            "read_latency_ns",
            "write_latency_ns",
            "cache_bytes",
            "cache_drain_bps",
            "absorb_ns",
            "gc_pause_ns",
            "gc_every_bytes",
        ):
            if getattr(self, name) < 0:
                found.append(f"{name} must not be negative")
        if self.gc_pause_ns and not self.gc_every_bytes:
            found.append("gc_pause_ns needs gc_every_bytes")
        for bad in self.bad_ranges:
            if bad.length <= 0 or bad.start < 0 or bad.end > self.claimed_bytes:
                found.append(f"bad range {bad} is empty or outside the device")
        if self.vanish_after_bytes is not None and self.vanish_after_bytes < 0:
            found.append("vanish_after_bytes must not be negative")
        if self.durable_lag_ns is not None and self.durable_lag_ns < 0:
            found.append("durable_lag_ns must not be negative")
        lying = (Durability.LYING, Durability.OUT_OF_ORDER)
        if self.durability in lying and self.durable_lag_ns is None:
            found.append(f"a {self.durability} card needs durable_lag_ns (its flushes do nothing)")
        if self.volatile_bytes < SECTOR:
            found.append(f"volatile_bytes must be at least {SECTOR}")
        if self.dies_at_power_cut is not None and self.dies_at_power_cut < 1:
            found.append("dies_at_power_cut counts power cuts from 1")
        return found

    # -- capacity and addresses ---------------------------------------------------------------
    @property
    def real_capacity(self) -> int:
        return self.claimed_bytes if self.real_bytes is None else self.real_bytes

    @property
    def has_volatile_cache(self) -> bool:
        return self.durability is not Durability.WRITE_THROUGH

    @property
    def is_fake(self) -> bool:
        return self.real_capacity < self.claimed_bytes

    def locate(self, offset: int) -> int | None:
        """Where the byte at claimed `offset` is stored, or None when it is stored nowhere."""
        if not 0 <= offset < self.claimed_bytes:
            raise ValueError(f"offset {offset} outside the claimed {self.claimed_bytes} bytes")
        real = self.real_capacity
        if offset < real:
            return offset
        return offset % real if self.fake is FakeMode.WRAP else None

    def beyond_fill(self) -> int:
        """The byte a read returns where nothing is stored (zeros, or erased NAND's 0xFF)."""
        return 0xFF if self.fake is FakeMode.ERASED else 0x00

    def is_bad(self, offset: int, length: int, *, write: bool) -> bool:
        return any(bad.hits(offset, length, write=write) for bad in self.bad_ranges)

    # -- rates --------------------------------------------------------------------------------
    def read_ns(self, length: int) -> float:
        """How long one read request of `length` bytes keeps the device busy."""
        return self.read_latency_ns + _transfer_ns(length, self.read_bps)

    def write_ns(self, length: int, *, cached: int) -> float:
        """Busy time of one write of `length` bytes, `cached` of which go into the cache.

        Garbage-collection pauses are not included (they depend on the bytes written so far).
        """
        return (
            self.write_latency_ns
            + _transfer_ns(cached, self.cache_write_bps)
            + _transfer_ns(length - cached, self.write_bps)
        )

    def read_bps_at(self, request_bytes: int) -> float | None:
        """The read rate a client doing requests of this size one at a time sees."""
        return _rate(request_bytes, self.read_ns(request_bytes))

    def read_iops_at(self, request_bytes: int) -> float | None:
        busy = self.read_ns(request_bytes)
        return None if busy <= 0 else NS_PER_S / busy

    def burst_write_bps_at(self, request_bytes: int) -> float | None:
        """Write rate while the cache has room (requests of this size, GC pauses averaged in)."""
        if self.cache_bytes == 0:
            return self.sustained_write_bps_at(request_bytes)
        return _rate(request_bytes, self._write_ns_with_gc(request_bytes, cached=request_bytes))

    def sustained_write_bps_at(self, request_bytes: int) -> float | None:
        """Write rate once the cache is full (GC pauses averaged in)."""
        return _rate(request_bytes, self._write_ns_with_gc(request_bytes, cached=0))

    def _write_ns_with_gc(self, length: int, *, cached: int) -> float:
        gc = self.gc_pause_ns * length / self.gc_every_bytes if self.gc_every_bytes else 0.0
        return self.write_ns(length, cached=cached) + gc

    def gc_pauses_for(self, written_before: int, length: int) -> int:
        """How many GC pauses a write of `length` bytes after `written_before` bytes pays."""
        if not self.gc_every_bytes or not self.gc_pause_ns:
            return 0
        every = self.gc_every_bytes
        return (written_before + length) // every - written_before // every

    def cache_after_idle(self, fill_bytes: float, gap_ns: float) -> float:
        """Cache fill after a gap between requests (gaps up to absorb_ns are not idle)."""
        if gap_ns <= self.absorb_ns:
            return fill_bytes
        return max(0.0, fill_bytes - gap_ns * self.cache_drain_bps / NS_PER_S)

    # -- serialisation (the plugin reads the model from a JSON file) ---------------------------
    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> FlashModel:
        data: dict[str, Any] = json.loads(text)
        data["fake"] = FakeMode(data["fake"])
        data["backing"] = Backing(data["backing"])
        data["bad_ranges"] = tuple(BadRange(**bad) for bad in data["bad_ranges"])
        data["durability"] = Durability(data.get("durability", Durability.WRITE_THROUGH))
        return cls(**data)


def _transfer_ns(length: int, bps: int | None) -> float:
    return 0.0 if bps is None or length == 0 else length * NS_PER_S / bps


def _rate(length: int, busy_ns: float) -> float | None:
    return None if busy_ns <= 0 else length * NS_PER_S / busy_ns
