"""The behaviour model and its engine against a fake clock: the truth, without any I/O stack.

These prove the arithmetic the device tests rely on (rates, the cache knee, the idle drain,
GC pauses, faults, fake addressing) exactly, in milliseconds of real time.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.emulation.fake_clock import MB, MS, MiB, engine_for, read
from tests.emulation.flash.engine import ControlBlock, DeviceFault, FileStorage, FlashEngine
from tests.emulation.flash.model import Backing, BadRange, Durability, FakeMode, FlashModel


def write(engine: FlashEngine, offset: int, data: bytes) -> None:
    engine.write(memoryview(data), offset)


def test_invalid_models_are_refused_with_every_reason():
    with pytest.raises(ValueError, match=r"claimed_bytes.*real_bytes"):
        FlashModel(claimed_bytes=1000, real_bytes=2048)
    with pytest.raises(ValueError, match="gc_pause_ns needs gc_every_bytes"):
        FlashModel(claimed_bytes=MiB, gc_pause_ns=MS)
    with pytest.raises(ValueError, match="outside the device"):
        FlashModel(claimed_bytes=MiB, bad_ranges=(BadRange(MiB - 512, 1024),))


@pytest.mark.parametrize(
    "model",
    [
        FlashModel(
            claimed_bytes=64 << 30, real_bytes=64 * MiB, fake=FakeMode.ERASED, read_bps=20 * MB,
            cache_bytes=8 * MiB, cache_write_bps=40 * MB, write_bps=10 * MB,
            bad_ranges=(BadRange(4096, 8192, writes=True),), backing=Backing.MEMORY,
        ),
        FlashModel(
            claimed_bytes=MiB, durability=Durability.OUT_OF_ORDER, durable_lag_ns=300 * MS,
            torn_writes=True, reorder_seed=7, dies_at_power_cut=3,
        ),
    ],
    ids=["rates-and-faults", "power"],
)  # fmt: skip
def test_model_survives_the_json_trip_to_the_plugin(model: FlashModel) -> None:
    assert FlashModel.from_json(model.to_json()) == model


def test_back_to_back_reads_get_the_model_rate_whatever_the_host_overhead():
    engine, clock = engine_for(FlashModel(claimed_bytes=8 * MiB, read_bps=10 * MB))
    start = clock.now
    for index in range(50):
        read(engine, index * 100_000, 100_000)  # 10 ms each at 10 MB/s
        clock.host_overhead(3 * MS)  # kernel + FUSE + nbd + fio: absorbed, not added
    # The last request's 3 ms overhead is still in the clock; the device time is exact.
    assert clock.now - 3 * MS - start == 50 * 10 * MS
    assert engine.stats().busy_ns == 50 * 10 * MS


def test_a_gap_longer_than_absorb_ns_is_idle_time_and_not_absorbed():
    model = FlashModel(claimed_bytes=8 * MiB, read_bps=10 * MB, absorb_ns=50 * MS)
    engine, clock = engine_for(model)
    start = clock.now
    for index in range(10):
        read(engine, index * 100_000, 100_000)
        clock.host_overhead(60 * MS)  # a client pausing: the device idles
    assert clock.now - start == 10 * (10 + 60) * MS
    stats = engine.stats()
    assert (stats.longest_idle_ns, stats.idle_ns) == (60 * MS, 9 * 60 * MS)


def test_read_latency_sets_small_block_iops():
    model = FlashModel(claimed_bytes=8 * MiB, read_bps=40 * MB, read_latency_ns=564_267)
    # 4096 B at 40 MB/s is 102.4 us; plus 564.267 us = 666.667 us: 1500 IOPS, A1's threshold.
    assert model.read_iops_at(4096) == pytest.approx(1500, rel=1e-6)
    engine, clock = engine_for(model)
    start = clock.now
    for index in range(1500):
        read(engine, index * 4096, 4096)
    assert clock.now - start == pytest.approx(1e9, abs=1500)  # 1 ns of rounding per request


def test_writes_fill_the_cache_at_the_burst_rate_then_go_at_the_sustained_rate():
    model = FlashModel(
        claimed_bytes=16 * MiB, cache_bytes=1 * MB, cache_write_bps=100 * MB, write_bps=10 * MB
    )
    assert model.burst_write_bps_at(MiB) == 100 * MB
    assert model.sustained_write_bps_at(MiB) == 10 * MB
    engine, clock = engine_for(model)
    start = clock.now
    finished = []
    for index in range(30):  # 3 MB in 100 kB writes
        write(engine, index * 100_000, bytes(100_000))
        finished.append(clock.now - start)
    assert finished[9] == 10 * MS  # the cache: 1 MB at 100 MB/s
    assert finished[10] == 20 * MS  # the first write past it: 100 kB at 10 MB/s
    assert finished[-1] == 10 * MS + 200 * MS
    stats = engine.stats()
    assert stats.cache_fill_bytes == 1 * MB
    assert stats.cache_full_ns - start == 10 * MS


def test_a_write_straddling_the_cache_end_pays_each_part_at_its_rate():
    model = FlashModel(
        claimed_bytes=16 * MiB, cache_bytes=150_000, cache_write_bps=100 * MB, write_bps=10 * MB
    )
    engine, clock = engine_for(model)
    start = clock.now
    write(engine, 0, bytes(100_000))
    write(engine, 100_000, bytes(100_000))  # 50 kB cached (0.5 ms) + 50 kB sustained (5 ms)
    assert clock.now - start == MS + MS // 2 + 5 * MS


# A 1 MB cache taking 100 MB/s, then 10 MB/s; idle, it empties at 2 MB/s.
DRAINING = FlashModel(
    claimed_bytes=16 * MiB, cache_bytes=1 * MB, cache_write_bps=100 * MB, write_bps=10 * MB,
    cache_drain_bps=2 * MB,
)  # fmt: skip


def test_idle_drains_the_cache_at_the_drain_rate():
    engine, clock = engine_for(DRAINING)
    write(engine, 0, bytes(MB))
    clock.host_overhead(250 * MS)  # idle: 0.25 s at 2 MB/s drains 500 kB
    assert DRAINING.cache_after_idle(MB, 250 * MS) == 500_000
    assert DRAINING.cache_after_idle(MB, DRAINING.absorb_ns) == MB  # not idle, absorbed
    start = clock.now
    write(engine, MB, bytes(500_000))
    assert clock.now - start == 5 * MS  # all of it went into the cache
    stats = engine.stats()
    assert (stats.longest_idle_ns, stats.cache_fill_after_longest_idle_bytes) == (250 * MS, 500_000)
    assert stats.cached_bytes == 1_500_000
    write(engine, 2 * MB, bytes(100_000))
    assert clock.now - start == 15 * MS  # the cache is full again: sustained rate
    assert engine.stats().cached_after_longest_idle_bytes == 500_000


def test_the_burst_after_the_longest_idle_counts_until_the_cache_is_full_again():
    engine, clock = engine_for(DRAINING)
    write(engine, 0, bytes(MB))
    clock.host_overhead(250 * MS)  # the longest idle: 500 kB of room
    write(engine, MB, bytes(300_000))
    clock.host_overhead(100 * MS)  # idle again before the cache is full: 200 kB more
    write(engine, 2 * MB, bytes(500_000))  # 400 kB fit: the cache is full
    write(engine, 3 * MB, bytes(100_000))
    assert engine.stats().cached_after_longest_idle_bytes == 300_000 + 400_000
    clock.host_overhead(100 * MS)  # after the cache was full again: not counted
    write(engine, 4 * MB, bytes(100_000))
    stats = engine.stats()
    assert (stats.cached_after_longest_idle_bytes, stats.cached_bytes) == (700_000, 1_800_000)


def test_gc_pauses_come_every_gc_every_bytes_written():
    model = FlashModel(
        claimed_bytes=16 * MiB, write_bps=100 * MB, gc_pause_ns=20 * MS, gc_every_bytes=MiB
    )
    assert model.gc_pauses_for(MiB - 4096, 8192) == 1
    engine, clock = engine_for(model)
    durations = []
    for index in range(16):  # 4 MiB in 256 KiB writes
        before = clock.now
        write(engine, index * 256 * 1024, bytes(256 * 1024))
        durations.append(clock.now - before)
    paused = [index for index, ns in enumerate(durations) if ns > 10 * MS]
    assert paused == [3, 7, 11, 15]  # the writes that complete each MiB
    assert engine.stats().gc_pauses == 4
    assert sum(durations) == pytest.approx(4 * MiB / (100 * MB) * 1e9 + 4 * 20 * MS, abs=16)


def test_bad_ranges_fail_exactly_the_requests_that_touch_them():
    model = FlashModel(claimed_bytes=MiB, bad_ranges=(BadRange(64 * 1024, 8192),))
    engine, _ = engine_for(model)
    failed = []
    for offset in range(0, 128 * 1024, 4096):
        try:
            read(engine, offset, 4096)
        except DeviceFault as fault:
            assert fault.errno == errno.EIO
            failed.append(offset)
    assert failed == [64 * 1024, 68 * 1024]
    write(engine, 64 * 1024, b"x" * 4096)  # a read-only bad range takes writes
    assert engine.stats().read_errors == 2


def test_vanish_after_bytes_serves_exactly_that_many_then_fails_everything():
    engine, _ = engine_for(FlashModel(claimed_bytes=MiB, vanish_after_bytes=40960))
    for index in range(10):
        write(engine, index * 4096, bytes(4096))
    with pytest.raises(DeviceFault):
        read(engine, 0, 512)
    with pytest.raises(DeviceFault):
        read(engine, 0, 512)  # gone stays gone
    stats = engine.stats()
    assert (stats.bytes_written, stats.vanished, stats.read_errors) == (40960, 1, 2)


@pytest.mark.parametrize(
    ("fake", "beyond"),
    [(FakeMode.ZEROS, bytes(4)), (FakeMode.ERASED, b"\xff" * 4)],
    ids=["zeros", "erased"],
)
def test_a_fake_drops_writes_beyond_its_real_capacity(fake, beyond):
    model = FlashModel(claimed_bytes=MiB, real_bytes=256 * 1024, fake=fake)
    engine, _ = engine_for(model)
    write(engine, 256 * 1024 - 2, b"ABCD")  # straddles the end of the real flash
    assert read(engine, 256 * 1024 - 2, 4) == b"AB" + beyond[:2]
    write(engine, 512 * 1024, b"WXYZ")
    assert read(engine, 512 * 1024, 4) == beyond
    assert read(engine, 0, 4) == bytes(4)  # nothing wrapped


def test_a_wrapping_fake_aliases_every_real_capacity():
    model = FlashModel(claimed_bytes=64 << 30, real_bytes=64 * MiB)
    engine, _ = engine_for(model)
    write(engine, (60 << 30) + 4096, b"SIXTYGIB")
    assert model.locate((60 << 30) + 4096) == 4096
    assert read(engine, 4096, 8) == b"SIXTYGIB"
    assert read(engine, (1 << 30) + 4096, 8) == b"SIXTYGIB"
    write(engine, 64 * MiB - 4, b"WRAPAROUND")  # one request crossing the alias boundary
    assert read(engine, 0, 6) == b"AROUND"


def test_a_sparse_backing_file_takes_only_what_was_written(tmp_path: Path):
    path = tmp_path / "backing.img"
    storage = FileStorage(path, 64 << 30)  # a genuine 64 GiB card
    storage.write(memoryview(b"x" * 4096), 32 << 30)
    buf = bytearray(4096)
    storage.read_into(memoryview(buf), 32 << 30)
    storage.close()
    assert buf == b"x" * 4096
    assert os.stat(path).st_size == 64 << 30
    assert os.stat(path).st_blocks * 512 < MiB


def test_the_host_resets_and_removes_the_device_through_the_control_block(tmp_path: Path):
    host = ControlBlock(tmp_path / "control", create=True)
    model = FlashModel(claimed_bytes=MiB, cache_bytes=8192, write_bps=MB)
    engine, _ = engine_for(model, ControlBlock(tmp_path / "control", create=False))
    write(engine, 0, bytes(8192))
    assert host.read_stats().cache_fill_bytes == 8192
    host.request_vanish()
    with pytest.raises(DeviceFault):
        read(engine, 0, 512)
    assert host.read_stats().vanished == 1
    host.request_reset()
    fresh = host.read_stats()  # before the engine's next request: already a fresh device
    assert (fresh.bytes_written, fresh.vanished, fresh.cache_fill_bytes) == (0, 0, 0)
    assert read(engine, 0, 512) == bytes(512)
    stats = host.read_stats()
    assert (stats.bytes_read, stats.read_errors, stats.vanished) == (512, 0, 0)
