"""The write pass's durable steps through the pipeline's executor (surface/pipeline.py): a flush
is queued behind the writes already queued, and its Flushed marker says up to where the device
holds everything, on the emulated-flash engine's virtual clock (tests/surface/engine_medium.py)."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field

from flashmark.surface.pattern import Pattern
from flashmark.surface.pipeline import Done, Flushed, Pipeline
from tests.emulation.flash.model import Backing, FlashModel
from tests.surface.engine_medium import EngineMedium

KiB, MiB = 1 << 10, 1 << 20
MB = 10**6
BLOCK = 256 * KiB
STEP_NS = 100_000_000  # a flush after every 100 ms of writing: 13 ms per block at 20 MB/s


@dataclass
class RecordingMedium:
    """EngineMedium, with every request it is given in the order the device sees them."""

    inner: EngineMedium
    fail_sync: bool = False
    log: list[tuple[str, int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.size_bytes = self.inner.size_bytes
        self.sector_bytes = self.inner.sector_bytes

    def read(self, buffer: memoryview, offset: int) -> None:
        self.inner.read(buffer, offset)

    def write(self, buffer: memoryview, offset: int) -> None:
        self.inner.write(buffer, offset)
        self.log.append(("write", offset, len(buffer)))

    def sync(self) -> None:
        self.log.append(("sync", 0, 0))
        if self.fail_sync:
            raise OSError(errno.EIO, "Input/output error")
        self.inner.sync()


def card() -> FlashModel:
    return FlashModel(
        claimed_bytes=8 * MiB,
        write_bps=20 * MB,
        read_bps=80 * MB,
        cache_bytes=0,
        backing=Backing.MEMORY,
    )


def write_pass(medium: RecordingMedium) -> list[Done | Flushed]:
    pipeline = Pipeline(
        medium,
        write=True,
        start=0,
        size=medium.size_bytes,
        block=BLOCK,
        clock=medium.inner.clock,
        pattern=Pattern(0x5EED),
        flush_every_ns=STEP_NS,
    )
    handed: list[Done | Flushed] = []
    with pipeline:
        for item in pipeline.results():
            handed.append(item)
            if isinstance(item, Done):
                pipeline.release(item)
    return handed


def test_a_write_pass_flushes_in_steps_each_marker_after_the_writes_the_device_then_holds():
    medium = RecordingMedium(EngineMedium(card()))
    handed = write_pass(medium)
    markers = [item for item in handed if isinstance(item, Flushed)]
    # 8 MiB at 20 MB/s is 420 ms of writing: steps of 100 ms, then the pass's end
    assert 4 <= len(markers) <= 6
    assert isinstance(handed[-1], Flushed) and handed[-1].upto == medium.size_bytes
    assert all(marker.error is None and marker.ns >= 0 for marker in markers)
    ends = [item.offset + item.length for item in handed if isinstance(item, Done)]
    assert ends == list(range(BLOCK, medium.size_bytes + 1, BLOCK))  # every block, in order
    written_to = 0
    for item in handed:  # a marker covers exactly the writes handed back before it
        if isinstance(item, Done):
            written_to = item.offset + item.length
        else:
            assert item.upto == written_to
    # The device saw each flush after every write before its marker and before any after it.
    syncs = [index for index, (op, _, _) in enumerate(medium.log) if op == "sync"]
    assert len(syncs) == len(markers)
    for at, marker in zip(syncs, markers, strict=True):
        before = [offset + length for op, offset, length in medium.log[:at] if op == "write"]
        after = [offset for op, offset, _ in medium.log[at:] if op == "write"]
        assert max(before) == marker.upto
        assert all(offset >= marker.upto for offset in after)


def test_a_flush_that_fails_ends_the_pass_with_its_error_and_nothing_counted_after_it():
    medium = RecordingMedium(EngineMedium(card()), fail_sync=True)
    handed = write_pass(medium)
    assert isinstance(handed[-1], Flushed)
    failed = handed[-1]
    assert failed.error is not None and failed.error.errno == errno.EIO
    assert failed.upto < medium.size_bytes  # the first step's flush, not the pass's end
    assert sum(isinstance(item, Flushed) for item in handed) == 1
