"""What the command-line tests measure: an empty folder, or an emulated card (root)."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.emulation.throttle import DeviceCaps, EmulatedDevice

CARD = DeviceCaps("card", read_iops=2000, write_iops=800, read_bps=50_000_000, write_bps=20_000_000)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An empty folder to measure (tmp_path/card): what a run leaves there is all it wrote."""
    card = tmp_path / "card"
    card.mkdir()
    return card


@pytest.fixture
def mounted_card() -> Iterator[EmulatedDevice]:
    """A 128 MiB emulated card (CARD) with ext4 mounted on it."""
    with EmulatedDevice(CARD, size_bytes=128 * 2**20) as device:
        yield device


@pytest.fixture
def raw_card() -> Iterator[EmulatedDevice]:
    """A 128 MiB emulated card (CARD) without a filesystem: its device node is the target."""
    with EmulatedDevice(CARD, size_bytes=128 * 2**20, filesystem=False) as device:
        yield device
