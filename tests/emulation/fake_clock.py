"""An engine on a fake clock, for the tests that check the model's arithmetic without any I/O
stack: sleeping (the engine's pacing) and the host's overhead move the clock, nothing waits."""

from __future__ import annotations

from tests.emulation.flash.engine import ControlBlock, FlashEngine, MemoryStorage
from tests.emulation.flash.model import FlashModel

MB = 1_000_000
MiB = 1 << 20
MS = 1_000_000  # ns


class FakeClock:
    """time.monotonic_ns and time.sleep for the engine: sleeping moves the clock."""

    def __init__(self) -> None:
        self.now = 10**12

    def __call__(self) -> int:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += round(seconds * 1e9)

    def host_overhead(self, ns: int) -> None:
        self.now += ns


def engine_for(
    model: FlashModel, control: ControlBlock | None = None
) -> tuple[FlashEngine, FakeClock]:
    """An engine serving `model` from memory, and its clock."""
    clock = FakeClock()
    storage = MemoryStorage(model.real_capacity)
    return FlashEngine(model, storage, control=control, clock=clock, sleep=clock.sleep), clock


def read(engine: FlashEngine, offset: int, length: int = 4096) -> bytes:
    buffer = bytearray(length)
    engine.read_into(memoryview(buffer), offset)
    return bytes(buffer)
