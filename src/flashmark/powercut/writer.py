"""The writer: journal records at the device's own pace (queue depth 1, so a write is always in
flight when the power goes), a flush every `flush_every` records (with `fua`, the last written
with FUA first), each flush point recorded durably before the next write. It runs in a thread
of its own and stops at the first failed request, when the recorder fails, or before it would
overwrite one of this cycle's own records.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol

from flashmark.powercut.record import make_record
from flashmark.powercut.recorder import FlushRecorder, RecorderFailed, flush_entry, fua_entry


class RecordSink(Protocol):
    """Where records go: the raw journal (journal.py) or files (filesystem.py)."""

    record_bytes: int
    capacity: int  # records one cycle may write before it would overwrite its own

    def offset_of(self, seq: int) -> int:
        """Where the record is written: its sectors carry it (record.py)."""

    def write(self, seq: int, record: bytes, *, fua: bool) -> None:
        """Write one record; OSError when the device fails it."""

    def flush(self) -> None:
        """Make every record written so far durable; OSError when the device fails it."""


@dataclass
class WriterProgress:
    """What the writer did: written by its thread, read by the driver after it stopped."""

    first_seq: int
    submitted_through: int | None = None  # the last record whose write started
    acked_through: int | None = None  # the last record the device acknowledged
    flushed_through: int | None = None  # the last flush point recorded
    fua: list[int] = field(default_factory=list)  # records acknowledged by a FUA write
    flushes: int = 0
    started_at: float | None = None  # the first write's start (the clock's seconds)
    device_error: OSError | None = None
    recorder_error: RecorderFailed | None = None
    full: bool = False  # stopped: the next record would have overwritten this cycle's own
    unexpected: BaseException | None = None

    @property
    def records_written(self) -> int:
        return 0 if self.acked_through is None else self.acked_through - self.first_seq + 1


@dataclass
class JournalWriter:
    sink: RecordSink
    recorder: FlushRecorder
    _: KW_ONLY
    nonce: bytes
    cycle: int
    first_seq: int
    flush_every: int
    fua: bool
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self.progress = WriterProgress(self.first_seq)
        self._thread = threading.Thread(target=self._run, name="powercut-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Write no further record (the one in flight finishes or fails)."""
        self._stop.set()

    def join(self, timeout_s: float) -> bool:
        """Wait for the writer to stop; False when it is still in a request after the timeout
        (a device that neither completes nor fails it)."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            self._write_until_stopped()
        except BaseException as error:  # a bug: the driver reports it
            self.progress.unexpected = error

    def _write_until_stopped(self) -> None:
        sink, progress, first = self.sink, self.progress, self.first_seq
        seq = first
        while not self._stop.is_set():
            if seq - first >= sink.capacity:
                progress.full = True
                return
            record = make_record(
                self.nonce, self.cycle, seq, sink.offset_of(seq), sink.record_bytes
            )
            closing = (seq - first + 1) % self.flush_every == 0
            fua = self.fua and closing
            progress.submitted_through = seq
            if progress.started_at is None:
                progress.started_at = self.clock()
            try:
                sink.write(seq, record, fua=fua)
                progress.acked_through = seq
                if closing:
                    if fua:
                        self.recorder.append(fua_entry(self.cycle, seq))
                        progress.fua.append(seq)
                    sink.flush()
                    self.recorder.append(flush_entry(self.cycle, seq))
                    progress.flushed_through = seq
                    progress.flushes += 1
            except OSError as error:
                progress.device_error = error
                return
            except RecorderFailed as error:
                progress.recorder_error = error
                return
            seq += 1
