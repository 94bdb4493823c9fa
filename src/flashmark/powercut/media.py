"""Where the records live between two cuts: a session on the device, held safely. The raw
medium claims the device (device_safety.claim_for_writing) and writes the journal; the
filesystem medium (filesystem.py) mounts a filesystem and writes files. Between sessions the
device is released, so that its power can go, and claimed again as whatever node it came back as.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from flashmark.errors import DeviceFailed
from flashmark.powercut.journal import JournalLayout, RawJournal
from flashmark.powercut.result import RAW, FsCheck
from flashmark.powercut.writer import RecordSink
from flashmark.system.block_device import open_direct
from flashmark.system.device_safety import claim_for_writing
from flashmark.system.sysroot import SystemRoots


class Journal(RecordSink, Protocol):
    """A RecordSink that also reads its records back: the raw journal or the files."""

    def read(self, first_seq: int, count: int) -> Iterator[bytes | None]:
        """The records as they read back (None: nothing there); DeviceFailed when the device
        cannot be read."""

    def forget(self, first_seq: int, count: int) -> None:
        """The records were checked: their room may be used again."""


class FilesystemUnusable(DeviceFailed):
    """After a cut the filesystem could not be mounted, even after fsck."""


@dataclass(frozen=True)
class Session:
    """Access to the records until the session ends: `journal` is None when the session can
    only look (a filesystem that could not be mounted, so none of its files can be found);
    `fsck` is the filesystem check it began with (after a cut), if any."""

    journal: Journal | None
    fsck: FsCheck | None = None

    @property
    def sink(self) -> RecordSink:
        """Where the cycle's records go."""
        if self.journal is None:
            raise FilesystemUnusable("the filesystem could not be repaired: nothing can be written")
        return self.journal

    @property
    def usable(self) -> bool:
        return self.journal is not None

    def offset_of(self, seq: int) -> int:
        return 0 if self.journal is None else self.journal.offset_of(seq)

    def read(self, first_seq: int, count: int) -> Iterator[bytes | None]:
        if self.journal is None:
            return iter([None] * count)
        return self.journal.read(first_seq, count)

    def forget(self, first_seq: int, count: int) -> None:
        if self.journal is not None:
            self.journal.forget(first_seq, count)


class Medium(Protocol):
    mode: str  # result.RAW, or the filesystem's name
    record_bytes: int
    capacity: int  # records one cycle may write

    def prepare(self, node: str) -> None:
        """Once, before the first cycle (a fresh filesystem)."""

    def session(self, node: str, *, after_cut: bool) -> contextlib.AbstractContextManager[Session]:
        """Access to the device at `node` until the block ends; `after_cut` when its power went
        since the last session (a filesystem is checked first)."""


class RawMedium:
    """The journal written to the device's own blocks (journal.py)."""

    mode = RAW

    def __init__(self, layout: JournalLayout, roots: SystemRoots) -> None:
        self.layout = layout
        self.record_bytes = layout.record_bytes
        self.capacity = layout.slots
        self._roots = roots

    def prepare(self, node: str) -> None:
        return None

    @contextlib.contextmanager
    def session(self, node: str, *, after_cut: bool) -> Iterator[Session]:
        with (
            claim_for_writing(node, self._roots),
            open_direct(node, write=True, needs_root="a power-cut test") as device,
        ):
            journal = RawJournal(device, self.layout)
            try:
                yield Session(journal)
            finally:
                journal.close()
