"""A fake-capacity device in memory, for testing the probe's logic without root.

The same address rules as tests.emulation.flash's FlashModel (wrap: address modulo the real
size; zeros and erased: writes beyond dropped, reads give 0x00 / 0xFF), plus `drops` (writes
beyond dropped, reads give what was there before) and a read cache that serves the last
`cache_blocks` written blocks from RAM, whatever the flash did.
Sparse: 512-byte sectors in a dict, unwritten sectors read as `initial`.
"""

from __future__ import annotations

from collections import OrderedDict

SECTOR = 512


class MemoryFlash:
    def __init__(
        self,
        claimed: int,
        real: int | None = None,
        mode: str = "wrap",
        *,
        initial: bytes = bytes(SECTOR),
        cache_blocks: int = 0,
    ) -> None:
        self.claimed = claimed
        self.real = claimed if real is None else real
        self.mode = mode
        self.initial = initial
        self.sectors: dict[int, bytes] = {}
        self.beyond: dict[int, bytes] = {}  # "drops": what the addresses beyond held
        self.cache: OrderedDict[int, bytes] = OrderedDict()
        self.cache_blocks = cache_blocks
        self.writes = 0
        self.reads = 0

    @property
    def size_bytes(self) -> int:
        return self.claimed

    @property
    def sector_bytes(self) -> int:
        return SECTOR

    def _where(self, sector: int) -> int | None:
        address = sector * SECTOR
        if address < self.real:
            return sector
        if self.mode == "wrap":
            return (address % self.real) // SECTOR
        return None

    def read_bytes(self, offset: int, length: int) -> bytes:
        assert offset % SECTOR == 0 and length % SECTOR == 0
        assert offset >= 0 and offset + length <= self.claimed
        self.reads += 1
        parts = []
        for sector in range(offset // SECTOR, (offset + length) // SECTOR):
            if sector in self.cache:
                parts.append(self.cache[sector])
                continue
            where = self._where(sector)
            if where is not None:
                parts.append(self.sectors.get(where, self.initial))
            elif self.mode == "zeros":
                parts.append(bytes(SECTOR))
            elif self.mode == "erased":
                parts.append(b"\xff" * SECTOR)
            else:  # drops
                parts.append(self.beyond.get(sector, self.initial))
        return b"".join(parts)

    def write_bytes(self, offset: int, data: bytes) -> None:
        assert offset % SECTOR == 0 and len(data) % SECTOR == 0
        assert offset >= 0 and offset + len(data) <= self.claimed
        self.writes += 1
        first = offset // SECTOR
        for index in range(len(data) // SECTOR):
            chunk = data[index * SECTOR : (index + 1) * SECTOR]
            where = self._where(first + index)
            if where is not None:
                self.sectors[where] = chunk
            if self.cache_blocks:
                self.cache[first + index] = chunk
                self.cache.move_to_end(first + index)
                while len(self.cache) > self.cache_blocks:
                    self.cache.popitem(last=False)

    def sync_checked(self) -> None:
        pass

    def image(self) -> dict[int, bytes]:
        """The stored sectors that differ from a fresh device's content."""
        return {where: data for where, data in self.sectors.items() if data != self.initial}
