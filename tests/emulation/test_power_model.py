"""Power cuts in the engine against a fake clock: what a card keeps, by its durability model.

The truth a power-cut test is judged by (PowerCut) is checked here against hand-computed cases:
an honest card keeps what a flush covered, a lying one keeps only what its lag let through,
an out-of-order one keeps later writes while losing earlier flushed ones, and a write in
service at the cut tears exactly where the model says.
"""

from __future__ import annotations

import threading

import pytest

from tests.emulation.fake_clock import MS, FakeClock, MiB, engine_for, read
from tests.emulation.flash.engine import ControlBlock, DeviceFault, FlashEngine, MemoryStorage
from tests.emulation.flash.model import SECTOR, Durability, FlashModel

RECORD = 4096
# Writes fall due within a second of their completion, in no particular order.
OUT_OF_ORDER = FlashModel(
    claimed_bytes=MiB, durability=Durability.OUT_OF_ORDER, durable_lag_ns=1000 * MS
)


def write(engine: FlashEngine, offset: int, byte: int) -> None:
    engine.write(memoryview(bytes([byte]) * RECORD), offset)


def test_a_lying_card_without_a_lag_is_refused():
    with pytest.raises(ValueError, match="lying card needs durable_lag_ns"):
        FlashModel(claimed_bytes=MiB, durability=Durability.LYING)


def test_an_honest_card_keeps_what_a_flush_covered_and_loses_the_rest():
    engine, _ = engine_for(FlashModel(claimed_bytes=MiB, durability=Durability.HONEST))
    write(engine, 0, 1)
    write(engine, RECORD, 2)
    engine.flush()
    write(engine, 2 * RECORD, 3)
    assert read(engine, 2 * RECORD)[0] == 3  # the cache is read through while powered
    cut = engine.cut_power()
    assert (cut.lost_writes, cut.lost_bytes, cut.flushed_lost_bytes) == (1, RECORD, 0)
    with pytest.raises(DeviceFault):
        read(engine, 0)  # no power, no answers
    engine.restore_power()
    assert [read(engine, n * RECORD)[0] for n in range(3)] == [1, 2, 0]


def test_a_lying_card_acknowledges_a_flush_and_keeps_only_what_its_lag_let_through():
    model = FlashModel(claimed_bytes=MiB, durability=Durability.LYING, durable_lag_ns=100 * MS)
    engine, clock = engine_for(model)
    write(engine, 0, 1)
    clock.now += 150 * MS  # the first write fell due
    write(engine, RECORD, 2)
    engine.flush()  # acknowledged, and nothing happens
    clock.now += 50 * MS
    cut = engine.cut_power()
    assert (cut.lost_writes, cut.flushed_lost_bytes) == (1, RECORD)
    engine.restore_power()
    assert [read(engine, n * RECORD)[0] for n in range(2)] == [1, 0]


def test_an_out_of_order_card_loses_an_earlier_flushed_write_while_a_later_one_survives():
    engine, clock = engine_for(OUT_OF_ORDER)
    for number in range(64):
        write(engine, number * RECORD, number + 1)
    engine.flush()
    clock.now += 500 * MS  # about half of the writes fell due, in no particular order
    cut = engine.cut_power()
    engine.restore_power()
    kept = [read(engine, n * RECORD)[0] == n + 1 for n in range(64)]
    assert 0 < sum(kept) < 64
    first_lost = kept.index(False)
    assert any(kept[first_lost + 1 :]), "a later write survived an earlier lost one"
    assert cut.flushed_lost_bytes == (64 - sum(kept)) * RECORD


def test_a_full_volatile_cache_writes_its_oldest_entries_back():
    model = FlashModel(claimed_bytes=MiB, durability=Durability.HONEST, volatile_bytes=2 * RECORD)
    engine, _ = engine_for(model)
    for number in range(4):
        write(engine, number * RECORD, number + 1)
    assert engine.volatile_fill_bytes == 2 * RECORD
    engine.cut_power()
    engine.restore_power()
    assert [read(engine, n * RECORD)[0] for n in range(4)] == [1, 2, 0, 0]


def test_a_later_write_is_never_overwritten_by_an_older_version_of_the_same_block():
    engine, clock = engine_for(OUT_OF_ORDER)
    for version in range(1, 40):
        write(engine, 0, version)
    clock.now += 2000 * MS  # everything fell due, in the card's own order
    engine.tick()
    engine.cut_power()
    engine.restore_power()
    assert read(engine, 0)[0] == 39


@pytest.mark.parametrize("durability", [Durability.WRITE_THROUGH, Durability.HONEST])
def test_a_write_cut_in_service_keeps_its_first_sectors_and_one_garbage_sector(durability):
    """8 sectors at 8 ms each; the power goes 30 ms in: 3 new, 1 garbage, 4 old."""
    model = FlashModel(
        claimed_bytes=MiB,
        write_bps=SECTOR * 125,  # 8 ms per sector
        durability=durability,
        torn_writes=True,
    )
    clock = FakeClock()
    cuts = []
    cut_in_service = [False]

    def sleep(seconds: float) -> None:
        if not cut_in_service[0]:
            clock.sleep(seconds)
            return
        cut_in_service[0] = False
        clock.sleep(0.030)
        cuts.append(engine.cut_power())  # the power goes while the write is in service
        clock.sleep(seconds - 0.030)

    engine = FlashEngine(model, MemoryStorage(MiB), clock=clock, sleep=sleep)
    write(engine, 0, 0xAA)
    engine.flush()
    cut_in_service[0] = True
    with pytest.raises(DeviceFault, match="power went"):
        write(engine, 0, 0xBB)
    engine.restore_power()
    sectors = [read(engine, 0)[n * SECTOR : (n + 1) * SECTOR] for n in range(8)]
    assert sectors[:3] == [bytes([0xBB]) * SECTOR] * 3
    assert sectors[3] not in (bytes([0xBB]) * SECTOR, bytes([0xAA]) * SECTOR)
    assert sectors[4:] == [bytes([0xAA]) * SECTOR] * 4
    assert (cuts[0].torn_writes, cuts[0].in_flight_bytes, cuts[0].lost_writes) == (1, RECORD, 0)
    assert cuts[0].torn_kept_bytes == 3 * SECTOR


def test_a_reset_keeps_the_data_of_the_volatile_cache(tmp_path):
    """`device.reset()` promises a fresh device with its data: the cache is written back."""
    control = ControlBlock(tmp_path / "control", create=True)
    engine, _ = engine_for(FlashModel(claimed_bytes=MiB, durability=Durability.HONEST), control)
    write(engine, 0, 5)
    control.request_reset()
    read(engine, RECORD)  # the reset is carried out at the next request
    engine.cut_power()
    engine.restore_power()
    assert read(engine, 0)[0] == 5


def test_a_card_that_stopped_answering_fails_its_held_request_when_the_power_goes(tmp_path):
    """The stop-answering switch and the power request are separate words of the control
    block, and a request held by a silent card leaves the power thread free to cut it."""
    clock = FakeClock()
    host = ControlBlock(tmp_path / "control", create=True)
    model = FlashModel(claimed_bytes=MiB, durability=Durability.HONEST)
    held: list[float] = []

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        held.append(seconds)
        if len(held) == 3:  # the request has been held a while: the power goes
            host.request_power(on=False)
            ticker = threading.Thread(target=engine.tick)
            ticker.start()
            ticker.join(timeout=10)
            assert not ticker.is_alive(), "the power thread waited for the held request"

    control = ControlBlock(tmp_path / "control", create=False)
    engine = FlashEngine(model, MemoryStorage(MiB), control=control, clock=clock, sleep=sleep)
    write(engine, 0, 0xAA)
    engine.flush()
    host.request_power(on=True)  # a power request is not silence
    assert not host.silent()
    host.request_silence(True)
    assert host.read_power().powered
    with pytest.raises(DeviceFault, match="no power"):
        write(engine, RECORD, 0xBB)
    assert len(held) >= 3
    state = host.read_power()
    assert not state.powered and state.power_cuts == 1
    host.request_silence(False)
    host.request_power(on=True)
    engine.tick()
    assert read(engine, 0)[0] == 0xAA  # flushed before the silence: durable
