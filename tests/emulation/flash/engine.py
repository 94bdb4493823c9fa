"""The behaviour engine of an emulated flash device: addresses, pacing, cache, faults.

`FlashEngine` serves the claimed address space exactly as a `FlashModel` says, with an
injectable clock; plugin.py puts it behind nbdkit, so it uses the standard library only. A
request arriving within `absorb_ns` of the instant the device is free starts then, so the
host's overhead is absorbed and back-to-back requests get exactly the model's rate. The host
steers it through a shared `ControlBlock`; `tick()` lets writes fall due and power cuts happen
while no request arrives. The model and its limits: docs/emulated-flash.md.
"""

from __future__ import annotations

import errno
import mmap
import os
import random
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Protocol

from tests.emulation.flash.model import NS_PER_S, SECTOR, Backing, Durability, FlashModel
from tests.emulation.flash.volatile import Dropped, VolatileCache

# How often the plugin's thread carries out power requests and due write-backs.
POWER_POLL_S = 0.005

_SILENT_POLL_S = 0.01  # how often a held request looks whether the device may answer again


class DeviceFault(Exception):
    """A request the device fails; `errno` is what the client sees (EIO through loop)."""

    def __init__(self, error: int, message: str) -> None:
        super().__init__(message)
        self.errno = error


@dataclass(frozen=True)
class FlashStats:
    """What the engine did since the last reset, by its own clock (time.monotonic_ns).

    CLOCK_MONOTONIC is system-wide, so the host can compare these instants with its own.
    """

    generation: int = 0  # the reset these counters belong to
    bytes_read: int = 0
    bytes_written: int = 0
    read_requests: int = 0
    write_requests: int = 0
    read_errors: int = 0
    write_errors: int = 0
    cache_fill_bytes: int = 0
    gc_pauses: int = 0
    vanished: int = 0  # 1 once the device has vanished
    busy_ns: int = 0  # total service time charged (what the rates are made of)
    idle_ns: int = 0  # total idle time (gaps longer than the model's absorb_ns)
    first_request_ns: int = 0  # arrival of the first request after the reset (0: none yet)
    cache_full_ns: int = 0  # when the cache first became full (0: not yet)
    cached_bytes: int = 0  # bytes written into the cache (at the burst rate)
    longest_idle_ns: int = 0  # the longest idle gap
    cache_fill_after_longest_idle_bytes: int = 0  # cache fill right after it (drain applied)
    # bytes written into the cache from the longest idle gap on, until the cache was full
    # again: the burst a client sees after it (more than the room the gap made when the device
    # was idle again before the cache filled)
    cached_after_longest_idle_bytes: int = 0


_STATS_FIELDS = len(fields(FlashStats))
# What the engine counts (the other fields are its state: FlashEngine._publish).
_COUNTERS = tuple(
    field.name
    for field in fields(FlashStats)
    if field.name not in ("generation", "bytes_written", "cache_fill_bytes", "vanished")
)


@dataclass(frozen=True)
class PowerCut:
    """What one power cut did, by the engine's clock: the truth a power-cut test is judged by.

    Counts are of write requests as the engine received them (a record written with one
    pwrite(2) of 4 KiB through the loop device is one)."""

    cut_ns: int = 0  # the instant the power went (CLOCK_MONOTONIC, like FlashStats)
    lost_writes: int = 0  # completed writes that were not durable yet, dropped
    lost_bytes: int = 0
    flushed_lost_bytes: int = 0  # of those, bytes a completed flush had covered (the card lied)
    torn_writes: int = 0  # a write in service at the cut that left a torn remnant (0 or 1)
    in_flight_bytes: int = 0  # the write (or read) in service at the cut, which failed
    torn_kept_bytes: int = 0  # of the torn write, the bytes stored new (its first sectors)


@dataclass(frozen=True)
class PowerState:
    """The engine's answer to the host's last power request."""

    generation: int = 0  # the host request this answers
    powered: bool = True
    power_cuts: int = 0
    last_cut: PowerCut = PowerCut()


_CUT_FIELDS = len(fields(PowerCut))


class ControlBlock:
    """A page shared by the host and the engine (a file both map).

    Host area: magic, vanish request, reset generation, power request (generation, wanted),
    stop-answering request. Engine area: a sequence number and the FlashStats fields, published
    after every request. The sequence number is odd while the engine writes, so a reader
    retries instead of seeing a half-written set (a seqlock). The engine's power state has a
    place of its own, its generation written last (the host waits for it to match its request).
    """

    SIZE = 4096
    _MAGIC = 0x31_48_53_41_4C_46_4D_46  # b"FMFLASH1" little-endian
    _HOST = struct.Struct("<QQQ")  # magic, vanish requested, reset generation
    _SEQ = struct.Struct("<Q")
    _SEQ_AT = 64
    _STATS = struct.Struct("<" + "Q" * _STATS_FIELDS)
    _STATS_AT = 72
    _POWER_REQUEST = struct.Struct("<QQ")  # generation, wanted (1 on, 0 off)
    _POWER_REQUEST_AT = 24
    _SILENT = struct.Struct("<Q")  # 1 while the device is asked not to answer
    _SILENT_AT = 40  # after the power request
    _POWER_SEEN = struct.Struct("<Q")
    _POWER_SEEN_AT = 1024
    _POWER_STATE = struct.Struct("<QQ" + "Q" * _CUT_FIELDS)  # powered, cuts, last cut
    _POWER_STATE_AT = 1032

    def __init__(self, path: Path, *, create: bool) -> None:
        flags = os.O_RDWR | os.O_CLOEXEC | (os.O_CREAT if create else 0)
        fd = os.open(path, flags, 0o600)
        try:
            if create:
                os.ftruncate(fd, self.SIZE)
            self._map = mmap.mmap(fd, self.SIZE)
        finally:
            os.close(fd)
        if create:
            self._HOST.pack_into(self._map, 0, self._MAGIC, 0, 0)
            self._POWER_REQUEST.pack_into(self._map, self._POWER_REQUEST_AT, 0, 1)
        elif self._HOST.unpack_from(self._map, 0)[0] != self._MAGIC:
            raise ValueError(f"{path} is not a flashmark emulated-flash control block")

    # host side
    def request_vanish(self) -> None:
        _, _, generation = self._HOST.unpack_from(self._map, 0)
        self._HOST.pack_into(self._map, 0, self._MAGIC, 1, generation)

    def request_silence(self, silent: bool) -> None:
        self._SILENT.pack_into(self._map, self._SILENT_AT, int(silent))

    def request_reset(self) -> int:
        _, _, generation = self._HOST.unpack_from(self._map, 0)
        self._HOST.pack_into(self._map, 0, self._MAGIC, 0, generation + 1)
        return int(generation + 1)

    def read_stats(self) -> FlashStats:
        """The latest published counters; zeros if the engine has not seen the last reset."""
        _, vanish, generation = self._HOST.unpack_from(self._map, 0)
        for _ in range(10_000):
            before = self._SEQ.unpack_from(self._map, self._SEQ_AT)[0]
            if before % 2:
                continue
            values = self._STATS.unpack_from(self._map, self._STATS_AT)
            if self._SEQ.unpack_from(self._map, self._SEQ_AT)[0] == before:
                break
        else:  # pragma: no cover - the engine would have to die mid-publish
            raise RuntimeError("emulated flash counters kept changing while being read")
        stats = FlashStats(*values)
        if stats.generation != generation:
            # The engine applies a reset at its next request; until then it is a fresh device.
            return FlashStats(generation=generation, vanished=vanish)
        return stats

    def request_power(self, *, on: bool) -> int:
        """Ask for the power to go on or off; the generation `read_power` will answer."""
        generation, _ = self._POWER_REQUEST.unpack_from(self._map, self._POWER_REQUEST_AT)
        self._POWER_REQUEST.pack_into(self._map, self._POWER_REQUEST_AT, generation + 1, int(on))
        return int(generation + 1)

    def read_power(self) -> PowerState:
        generation = self._POWER_SEEN.unpack_from(self._map, self._POWER_SEEN_AT)[0]
        powered, cuts, *cut = self._POWER_STATE.unpack_from(self._map, self._POWER_STATE_AT)
        return PowerState(int(generation), bool(powered), int(cuts), PowerCut(*cut))

    # engine side
    def poll_power(self) -> tuple[int, bool]:
        """(power request generation, wanted on)."""
        generation, wanted = self._POWER_REQUEST.unpack_from(self._map, self._POWER_REQUEST_AT)
        return int(generation), bool(wanted)

    def publish_power(self, state: PowerState) -> None:
        self._POWER_STATE.pack_into(
            self._map,
            self._POWER_STATE_AT,
            int(state.powered),
            state.power_cuts,
            *astuple(state.last_cut),
        )
        self._POWER_SEEN.pack_into(self._map, self._POWER_SEEN_AT, state.generation)

    def poll(self) -> tuple[bool, int]:
        """(vanish requested, reset generation)."""
        _, vanish, generation = self._HOST.unpack_from(self._map, 0)
        return bool(vanish), int(generation)

    def silent(self) -> bool:
        """True while the host asks the device not to answer (`EmulatedFlash.stop_answering`)."""
        return bool(self._SILENT.unpack_from(self._map, self._SILENT_AT)[0])

    def publish(self, stats: FlashStats) -> None:
        sequence = self._SEQ.unpack_from(self._map, self._SEQ_AT)[0]
        self._SEQ.pack_into(self._map, self._SEQ_AT, sequence + 1)
        self._STATS.pack_into(self._map, self._STATS_AT, *astuple(stats))
        self._SEQ.pack_into(self._map, self._SEQ_AT, sequence + 2)

    def close(self) -> None:
        self._map.close()


class Storage(Protocol):
    """The real capacity: `real_bytes` of storage addressed from 0."""

    def read_into(self, view: memoryview, offset: int) -> None: ...

    def write(self, data: memoryview, offset: int) -> None: ...

    def close(self) -> None: ...


class FileStorage:
    """A sparse file: only written blocks take disk space, so a genuine 64 GiB model is cheap
    until it is filled."""

    def __init__(self, path: Path, size: int) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if os.fstat(self._fd).st_size != size:
            os.ftruncate(self._fd, size)

    def read_into(self, view: memoryview, offset: int) -> None:
        done = 0
        while done < len(view):
            got = os.preadv(self._fd, [view[done:]], offset + done)
            if got <= 0:
                raise DeviceFault(errno.EIO, f"backing file ended at {offset + done}")
            done += got

    def write(self, data: memoryview, offset: int) -> None:
        done = 0
        while done < len(data):
            done += os.pwrite(self._fd, data[done:], offset + done)

    def close(self) -> None:
        os.close(self._fd)


class MemoryStorage:
    """The real capacity in RAM (nbdkit's process): for small devices, no disk involved."""

    def __init__(self, size: int) -> None:
        self._memory = bytearray(size)

    def read_into(self, view: memoryview, offset: int) -> None:
        view[:] = self._memory[offset : offset + len(view)]

    def write(self, data: memoryview, offset: int) -> None:
        self._memory[offset : offset + len(data)] = data

    def close(self) -> None:
        self._memory = bytearray()


def open_storage(model: FlashModel, path: Path | None) -> Storage:
    if model.backing is Backing.MEMORY:
        return MemoryStorage(model.real_capacity)
    if path is None:
        raise ValueError("a file-backed model needs a backing path")
    return FileStorage(path, model.real_capacity)


@dataclass(frozen=True)
class _InFlight:
    """The write in service: what a power cut tears (pieces and old data only when it can)."""

    seq: int
    length: int
    start_ns: float
    end_ns: float
    pieces: tuple[tuple[int, bytes], ...] = ()  # (real offset, data) in the write's order
    old: tuple[bytes, ...] | None = None  # write-through: what the pieces replaced


class FlashEngine:
    """Serves one device's requests as its model says. One request at a time (plugin.py asks
    nbdkit to serialise them), like the single channel of a card's controller. A lock keeps
    the plugin's ticking thread out while a request changes the state; the pacing sleep runs
    outside it, so a power cut can land while a request is in service."""

    def __init__(
        self,
        model: FlashModel,
        storage: Storage,
        *,
        control: ControlBlock | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self._storage = storage
        self._control = control
        self._clock = clock
        self._sleep = sleep
        self._generation = 0
        self._lock = threading.Lock()
        self._volatile = (
            VolatileCache(model.volatile_bytes, self._write_durable)
            if model.has_volatile_cache
            else None
        )
        self._rng = random.Random(model.reorder_seed)
        self._seq = 0  # write requests admitted, ever: the volatile cache's order
        self._in_flight: _InFlight | None = None
        self._powered = True
        self._power_epoch = 0  # one more at every power cut
        self._power_cuts = 0
        self._last_cut = PowerCut()
        # A power request posted before this engine started is not one for it to carry out.
        self._power_seen = control.poll_power()[0] if control is not None else 0
        self._reset_state()
        if control is not None:
            control.publish_power(self._power_state())

    def _reset_state(self) -> None:
        self._free_at: float | None = None  # end of the device's current work (ns)
        self._fill = 0  # bytes in the write cache
        self._written = 0  # bytes written since the reset (GC pauses count these)
        self._moved = 0  # bytes read + written since the reset (the vanish budget)
        self._vanished = False
        self._stats = FlashStats(generation=self._generation)
        # The counters of FlashStats, by its field names (those above are the engine's state).
        self._counts: dict[str, float] = dict.fromkeys(_COUNTERS, 0)
        self._filling_after_longest_idle = False

    # -- the requests -------------------------------------------------------------------------
    def read_into(self, buf: memoryview, offset: int) -> None:
        length = len(buf)
        self._hold_while_silent()
        with self._lock:
            epoch = self._power_epoch
            _, end, _ = self._admit(offset, length, write=False)
            for position, size, real in self._segments(offset, length):
                part = buf[position : position + size]
                if real is None:
                    part[:] = bytes([self.model.beyond_fill()]) * size
                else:
                    self._storage.read_into(part, real)
                    if self._volatile is not None:
                        self._volatile.overlay(part, real)
            self._moved += length
            self._counts["bytes_read"] += length
            self._counts["read_requests"] += 1
            self._publish()
        self._wait_for(end, epoch)

    def write(self, data: memoryview, offset: int) -> None:
        length = len(data)
        self._hold_while_silent()
        with self._lock:
            epoch = self._power_epoch
            start, end, cached = self._admit(offset, length, write=True)
            # None: beyond a fake's real capacity, that part of the write is dropped
            pieces = [
                (real, data[position : position + size])
                for position, size, real in self._segments(offset, length)
                if real is not None
            ]
            self._seq += 1
            self._in_flight = self._flight(self._seq, length, start, end, pieces)
            if self._volatile is None:
                for real, piece in pieces:
                    self._storage.write(piece, real)
            else:
                self._volatile.add(self._seq, pieces, self._due_after(end))
            self._fill += cached
            self._counts["cached_bytes"] += cached
            if self._filling_after_longest_idle:
                self._counts["cached_after_longest_idle_bytes"] += cached
                self._filling_after_longest_idle = self._fill < self.model.cache_bytes
            full = self._fill >= self.model.cache_bytes
            if cached and full and not self._counts["cache_full_ns"]:
                self._counts["cache_full_ns"] = round(end)
            self._written += length
            self._moved += length
            self._counts["write_requests"] += 1
            self._publish()
            seq = self._seq
        try:
            self._wait_for(end, epoch)
        finally:
            with self._lock:
                if self._in_flight is not None and self._in_flight.seq == seq:
                    self._in_flight = None

    def flush(self) -> None:
        """A cache flush: an honest card makes every completed write durable; the others
        acknowledge it and do nothing (the writes count as flushed for the truth)."""
        self._hold_while_silent()
        with self._lock:
            if not self._powered:
                raise DeviceFault(errno.EIO, "the device has no power")
            if self._volatile is not None:
                self._volatile.make_due_durable(self._clock())
                self._volatile.flush(honest=self.model.durability is Durability.HONEST)

    def tick(self) -> None:
        """Carry out a pending power request and write back what fell due (the plugin's
        thread calls this every POWER_POLL_S). Only here: the instant a power request takes
        effect then falls at a random point of the device's work, in service as often as the
        device is busy, as a real cut does (requests would see it only between requests)."""
        with self._lock:
            self._poll_power()
            if self._volatile is not None and self._powered:
                self._volatile.make_due_durable(self._clock())

    def cut_power(self) -> PowerCut:
        """The power goes now (what a host power request does; tests call it directly)."""
        with self._lock:
            if self._powered:
                self._cut_power()
            return self._last_cut

    def restore_power(self) -> None:
        with self._lock:
            if not self._powered:
                self._restore_power()

    def stats(self) -> FlashStats:
        return self._stats

    @property
    def volatile_fill_bytes(self) -> int:
        return 0 if self._volatile is None else self._volatile.fill_bytes

    def close(self) -> None:
        self._storage.close()
        if self._control is not None:
            self._control.close()

    # -- steps --------------------------------------------------------------------------------
    def _admit(self, offset: int, length: int, *, write: bool) -> tuple[float, float, int]:
        """Check the request may run and charge its time on the device clock.

        Returns the instants it starts and ends and, for a write, how many of its bytes go to
        the (speed model's) cache.
        """
        self._poll_control()
        error_key = "write_errors" if write else "read_errors"
        if not self._powered:
            self._fail(error_key)
            raise DeviceFault(errno.EIO, "the device has no power")
        if offset < 0 or offset + length > self.model.claimed_bytes:
            self._fail(error_key)
            raise DeviceFault(errno.EINVAL, f"request {offset}+{length} beyond the device")
        if not self._vanished:
            budget = self.model.vanish_after_bytes
            self._vanished = budget is not None and self._moved + length > budget
        if self._vanished:
            self._fail(error_key)
            raise DeviceFault(errno.EIO, "the device has vanished")
        start = self._start_time()  # applies the idle drain, so the cache room is known after it
        if self._volatile is not None:
            self._volatile.make_due_durable(round(start))
        cached = 0
        if write:
            cached = min(length, max(0, self.model.cache_bytes - self._fill))
            pauses = self.model.gc_pauses_for(self._written, length)
            busy = self.model.write_ns(length, cached=cached) + pauses * self.model.gc_pause_ns
        else:
            pauses = 0
            busy = self.model.read_ns(length)
        end = start + busy
        self._free_at = end
        self._counts["busy_ns"] += busy
        if self.model.is_bad(offset, length, write=write):
            # The device spent the time on the request and then reported it uncorrectable.
            self._fail(error_key)
            self._sleep_until(end)
            raise DeviceFault(errno.EIO, f"bad block in {offset}+{length}")
        self._counts["gc_pauses"] += pauses
        return start, end, cached

    def _flight(
        self, seq: int, length: int, start: float, end: float, pieces: list[tuple[int, memoryview]]
    ) -> _InFlight:
        if not self.model.torn_writes:
            return _InFlight(seq, length, start, end)
        old = None
        if self._volatile is None:  # write-through: the tear must put back what it replaced
            saved = []
            for real, piece in pieces:
                before = bytearray(len(piece))
                self._storage.read_into(memoryview(before), real)
                saved.append(bytes(before))
            old = tuple(saved)
        return _InFlight(
            seq, length, start, end, tuple((real, bytes(piece)) for real, piece in pieces), old
        )

    def _due_after(self, end: float) -> int | None:
        """When a write completing at `end` becomes durable on its own."""
        lag = self.model.durable_lag_ns
        if lag is None:
            return None
        if self.model.durability is Durability.OUT_OF_ORDER:
            return round(end + self._rng.uniform(0, lag))
        return round(end + lag)

    def _wait_for(self, end: float, epoch: int) -> None:
        """Sleep until the request's end (one sleep, as pacing wants); it fails if the power
        went before that instant (the ticking thread cut it meanwhile)."""
        self._sleep_until(end)
        if self._power_epoch != epoch and end > self._last_cut.cut_ns:
            raise DeviceFault(errno.EIO, "the power went while the request was served")

    def _poll_power(self) -> None:
        if self._control is None:
            return
        generation, wanted = self._control.poll_power()
        if generation == self._power_seen:
            return
        self._power_seen = generation
        if wanted and not self._powered:
            self._restore_power()
        elif not wanted and self._powered:
            self._cut_power()
        self._control.publish_power(self._power_state())

    def _cut_power(self) -> None:
        cut = self._clock()
        torn = in_flight_bytes = kept = 0
        if self._volatile is not None:
            self._volatile.make_due_durable(cut)
        flight = self._in_flight
        if flight is not None and flight.end_ns > cut:
            in_flight_bytes = flight.length
            if self._volatile is not None:
                self._volatile.forget(flight.seq)  # never completed: not a lost completed write
            if self.model.torn_writes and flight.pieces:
                kept = self._tear(flight, cut)
                torn = 1
        dropped = self._volatile.drop() if self._volatile is not None else Dropped()
        self._in_flight = None
        self._powered = False
        self._power_epoch += 1
        self._power_cuts += 1
        self._last_cut = PowerCut(
            cut_ns=cut,
            lost_writes=dropped.writes,
            lost_bytes=dropped.bytes,
            flushed_lost_bytes=dropped.flushed_bytes,
            torn_writes=torn,
            in_flight_bytes=in_flight_bytes,
            torn_kept_bytes=kept,
        )

    def _tear(self, flight: _InFlight, cut: int) -> int:
        """The write's first sectors (the share of its service time that had passed) are
        stored, the sector being programmed turns to garbage, the rest keeps its old data.
        Returns the bytes stored new."""
        total = sum(len(data) for _, data in flight.pieces) // SECTOR
        span = flight.end_ns - flight.start_ns
        share = 1.0 if span <= 0 else min(1.0, max(0.0, (cut - flight.start_ns) / span))
        done = min(total, int(share * total))
        index = 0
        for number, (real, data) in enumerate(flight.pieces):
            for sector in range(len(data) // SECTOR):
                at = real + sector * SECTOR
                if index < done:
                    new = data[sector * SECTOR : (sector + 1) * SECTOR]
                    self._storage.write(memoryview(new), at)
                elif index == done:
                    self._storage.write(memoryview(self._rng.randbytes(SECTOR)), at)
                elif flight.old is not None:
                    old = flight.old[number][sector * SECTOR : (sector + 1) * SECTOR]
                    self._storage.write(memoryview(old), at)
                index += 1
        return done * SECTOR

    def _restore_power(self) -> None:
        """A card starting up: powered, its clock, speed cache and counters fresh."""
        self._powered = True
        self._reset_state()

    def _power_state(self) -> PowerState:
        return PowerState(self._power_seen, self._powered, self._power_cuts, self._last_cut)

    def _write_durable(self, real: int, data: bytes) -> None:
        self._storage.write(memoryview(data), real)

    def _start_time(self) -> float:
        now = self._clock()
        if self._free_at is None:
            self._counts["first_request_ns"] = now
            return float(now)
        gap = now - self._free_at
        if gap <= self.model.absorb_ns:
            return self._free_at  # back to back: the gap was the host's overhead, absorbed
        # Idle: the whole gap (a head start of absorb_ns after every idle period would let a
        # client that pauses do up to absorb_ns of extra work per pause).
        self._fill = round(self.model.cache_after_idle(self._fill, gap))
        self._counts["idle_ns"] += gap
        if gap > self._counts["longest_idle_ns"]:
            self._counts["longest_idle_ns"] = round(gap)
            self._counts["cache_fill_after_longest_idle_bytes"] = self._fill
            self._counts["cached_after_longest_idle_bytes"] = 0
            self._filling_after_longest_idle = True
        return float(now)

    def _fail(self, key: str) -> None:
        self._counts[key] += 1
        self._publish()

    def _sleep_until(self, end: float) -> None:
        remaining = (end - self._clock()) / NS_PER_S
        if remaining > 0:
            self._sleep(remaining)

    def _hold_while_silent(self) -> None:
        """A card that stopped answering: the request is held, not failed, until the host lets
        the device answer again (the client sees no error, only silence) or its power goes
        (then it fails as any request without power does). nbdkit serialises requests
        (plugin.py), so every later one waits behind it. Held outside the lock, so that the
        power thread (`tick`) can still cut the power meanwhile."""
        while self._control is not None and self._control.silent() and self._powered:
            self._sleep(_SILENT_POLL_S)

    def _poll_control(self) -> None:
        if self._control is None:
            return
        vanish, generation = self._control.poll()
        if generation != self._generation:
            self._generation = generation
            if self._volatile is not None:
                self._volatile.make_all_durable()  # a reset keeps the data (see device.reset)
            self._reset_state()
        if vanish:
            self._vanished = True

    def _publish(self) -> None:
        self._stats = FlashStats(
            generation=self._generation,
            bytes_written=self._written,
            cache_fill_bytes=self._fill,
            vanished=int(self._vanished),
            **{name: round(count) for name, count in self._counts.items()},
        )
        if self._control is not None:
            self._control.publish(self._stats)

    def _segments(self, offset: int, length: int) -> Iterator[tuple[int, int, int | None]]:
        """(position in the request, size, real offset or None) pieces of a request."""
        real = self.model.real_capacity
        position = 0
        while position < length:
            located = self.model.locate(offset + position)
            # Beyond a fake's real capacity (None), the rest of the request lies beyond it too.
            rest = length - position
            size = rest if located is None else min(rest, real - located)
            yield position, size, located
            position += size
