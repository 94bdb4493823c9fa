"""The emulated-flash engine as a scan medium, on a virtual clock: exact truth, no root, no time.

The engine (tests.emulation.flash.engine) is the same code the nbdkit plugin runs; here it is
driven directly, its sleeps advancing a virtual clock that the scan reads too. Rates, the cache
and the error map then come out exact, in milliseconds of real time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from tests.emulation.flash.engine import DeviceFault, FlashEngine, MemoryStorage
from tests.emulation.flash.model import FlashModel


@dataclass
class VirtualClock:
    now: int = 1_000_000_000
    host_ns: int = 0  # host work charged to every clock reading (overhead between requests)

    def __call__(self) -> int:
        self.now += self.host_ns
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += round(seconds * 1e9)


@dataclass
class EngineMedium:
    model: FlashModel
    sector_bytes: int = 512
    clock: VirtualClock = field(default_factory=VirtualClock)

    def __post_init__(self) -> None:
        self.size_bytes = self.model.claimed_bytes
        self.engine = FlashEngine(
            self.model,
            MemoryStorage(self.model.real_capacity),
            clock=self.clock,
            sleep=self.clock.sleep,
        )
        self.syncs = 0
        # The scan's I/O thread and its own thread may both call in; nbdkit serialises
        # requests for the real device (plugin.py), this lock does it here.
        self.lock = threading.Lock()

    def read(self, buffer: memoryview, offset: int) -> None:
        try:
            with self.lock:
                self.engine.read_into(buffer, offset)
        except DeviceFault as fault:
            raise OSError(fault.errno, str(fault)) from None

    def write(self, buffer: memoryview, offset: int) -> None:
        try:
            with self.lock:
                self.engine.write(buffer, offset)
        except DeviceFault as fault:
            raise OSError(fault.errno, str(fault)) from None

    def sync(self) -> None:
        self.syncs += 1
