"""A surface scan's I/O process: every read, write and flush of the device, in a process of its
own, so that a device that stops answering cannot hang flashmark (a thread in state D keeps
its process from exiting, SIGKILL or not). It dies with flashmark (setpriv --pdeathsig).

    python -m flashmark.surface.worker CONFIG-JSON

Requests (_REQUEST) come in order on a pipe, each done into or from its slot of a shared memfd
(memfd_create(2)) and timed with CLOCK_MONOTONIC; replies are _REPLY records.
"""

from __future__ import annotations

import contextlib
import errno
import json
import mmap
import os
import select
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import flashmark
from flashmark.errors import FlashmarkError, NotEnoughSpace, add_outcome
from flashmark.fio.runner import parent_death_prefix
from flashmark.surface.medium import FolderMedium, folder_full
from flashmark.surface.pipeline import BUFFERS, READ, SYNC, WRITE, Reply, perform, wait_within
from flashmark.system.block_device import BlockDevice
from flashmark.system.watchdog import Watchdog

_REQUEST = struct.Struct("<QBIQQ")  # seq, op, slot, offset, length
_REPLY = struct.Struct("<QiQQ")  # seq, errno, started_ns, done_ns
_OPS = {READ: 1, WRITE: 2, SYNC: 3}
_OP_NAMES = {code: name for name, code in _OPS.items()}
_KILLED_GRACE_S = 3.0  # a killed process not gone by then waits in uninterruptible I/O
_END_TIMEOUT_S = 30.0
_MODULE = "flashmark.surface.worker"


@dataclass
class ProcessExecutor:
    """The flashmark side of the I/O process: buffers, requests, replies (pipeline.Executor)."""

    process: subprocess.Popen[bytes]
    shared: mmap.mmap  # the slots, `slot_bytes` each
    slot_bytes: int
    requests: int  # the pipe requests go to
    replies: int  # the pipe replies come on
    folder: Path | None  # a folder scan's: a full filesystem there is NotEnoughSpace
    _seq: int = 0
    _ops: dict[int, str] = field(default_factory=dict)  # each request's op, until its reply
    _stash: dict[int, Reply] = field(default_factory=dict)  # replies not waited for yet
    _pending: bytearray = field(default_factory=bytearray)  # a reply record's first bytes

    def __post_init__(self) -> None:
        self._view = memoryview(self.shared)

    def buffer(self, slot: int) -> memoryview:
        return self._view[slot * self.slot_bytes : (slot + 1) * self.slot_bytes]

    def submit(self, op: str, slot: int, offset: int, length: int) -> int:
        self._seq += 1
        self._ops[self._seq] = op
        record = _REQUEST.pack(self._seq, _OPS[op], slot, offset, length)
        written = os.write(self.requests, record)  # under PIPE_BUF: written whole (pipe(7))
        assert written == len(record)
        return self._seq

    def wait(self, seq: int, timeout_s: float) -> Reply | None:
        """The reply to `seq`; replies to other requests that come first are kept for their
        own wait. None when no reply at all came for `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while seq not in self._stash:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.replies], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.replies, 4096)
            if not chunk:
                code = self.process.poll()
                raise FlashmarkError(
                    f"the surface scan's I/O process ended unexpectedly (exit {code})"
                )
            self._pending += chunk
            for number, error, started, done in _complete_records(self._pending, _REPLY):
                self._stash[number] = self._reply(number, error, started, done)
                deadline = time.monotonic() + timeout_s  # a completion is progress
        return self._stash.pop(seq)

    def close(self) -> None:
        # Views of it may still be held (a pass's last result, in a traceback): then it is
        # unmapped when the last of them goes.
        with contextlib.suppress(BufferError):
            self._view.release()
            self.shared.close()

    def _reply(self, seq: int, error: int, started: int, done: int) -> Reply:
        op = self._ops.pop(seq, READ)
        if self.folder is not None and op == WRITE and error in (errno.ENOSPC, errno.EDQUOT):
            return Reply(seq, 0, started, done, raised=NotEnoughSpace(folder_full(self.folder)))
        return Reply(seq, error, started, done, os.strerror(error) if error else "")


@dataclass
class WorkerMedium:
    """A Medium whose requests the I/O process makes (pipeline.Medium), each within the
    watchdog's bound; `executor` lets a pass queue its requests to the same process. Its own
    requests use the slot after the passes' buffers (BUFFERS)."""

    executor: ProcessExecutor
    size_bytes: int
    sector_bytes: int
    block_bytes: int
    watchdog: Watchdog
    place: str

    def read(self, buffer: memoryview, offset: int) -> None:
        self._request(READ, offset, len(buffer))
        buffer[:] = self.executor.buffer(BUFFERS)[: len(buffer)]

    def write(self, buffer: memoryview, offset: int) -> None:
        self.executor.buffer(BUFFERS)[: len(buffer)] = buffer
        self._request(WRITE, offset, len(buffer))

    def sync(self) -> None:
        self._request(SYNC, 0, 0)

    def _request(self, op: str, offset: int, length: int) -> None:
        seq = self.executor.submit(op, BUFFERS, offset, length)
        # A flush waits for what the device still holds: bounded like a block of the pass.
        bound = length or self.block_bytes
        reply = wait_within(self.executor, seq, self.watchdog, bound, self.place)
        if reply.errno:
            raise OSError(reply.errno, reply.strerror)


@dataclass(frozen=True)
class _Config:
    """What the I/O process is given (as JSON on its command line)."""

    fds: list[int]  # the folder's files in order, or the device: one file of `size`
    file_bytes: int
    size: int
    sector: int
    shared: int  # the shared memory file: `slots` buffers of `slot_bytes`
    slot_bytes: int
    slots: int
    requests: int  # the pipe requests come on
    replies: int  # the pipe replies go to


@contextlib.contextmanager
def io_process(
    medium: BlockDevice | FolderMedium, block_bytes: int, watchdog: Watchdog, place: str
) -> Iterator[WorkerMedium]:
    """`medium`'s requests made by an I/O process of their own (module doc), for the block.

    On the way out the process ends: at once (SIGKILL) when the block failed, for then a
    request may be stuck; one that does not end within seconds is reported on the error, with
    its pid, and left behind."""
    fds = [medium.fd] if isinstance(medium, BlockDevice) else list(medium.fds)
    slots = BUFFERS + 1  # the passes' buffers and one for single requests
    shared_fd = os.memfd_create("flashmark-surface", os.MFD_CLOEXEC)
    requests_read, requests_write = os.pipe2(os.O_CLOEXEC)
    replies_read, replies_write = os.pipe2(os.O_CLOEXEC)
    config = _Config(
        fds=fds,
        file_bytes=medium.file_bytes if isinstance(medium, FolderMedium) else medium.size_bytes,
        size=medium.size_bytes,
        sector=medium.sector_bytes,
        shared=shared_fd,
        slot_bytes=block_bytes,
        slots=slots,
        requests=requests_read,
        replies=replies_write,
    )
    try:
        os.ftruncate(shared_fd, block_bytes * slots)
        shared = mmap.mmap(shared_fd, block_bytes * slots)
        process = subprocess.Popen(
            [*parent_death_prefix(), sys.executable, "-m", _MODULE, json.dumps(asdict(config))],
            pass_fds=(*fds, shared_fd, requests_read, replies_write),
            # Not flashmark's own output: a process left stuck would keep a pipe that flashmark
            # writes to (`flashmark surface ... | tee`) open, and its reader waiting.
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_environment(),
            start_new_session=True,
        )
    except BaseException:
        os.close(requests_write)
        os.close(replies_read)
        raise
    finally:
        for descriptor in (shared_fd, requests_read, replies_write):
            os.close(descriptor)
    folder = medium.folder if isinstance(medium, FolderMedium) else None
    executor = ProcessExecutor(process, shared, block_bytes, requests_write, replies_read, folder)
    failed: BaseException | None = None
    try:
        yield WorkerMedium(
            executor, medium.size_bytes, medium.sector_bytes, block_bytes, watchdog, place
        )
    except BaseException as error:
        failed = error
        raise
    finally:
        os.close(requests_write)  # the process ends at the end of its requests
        note = _end(process, killed=failed is not None)
        if note is not None and failed is not None:
            add_outcome(getattr(failed, "cause", failed), note)
        os.close(replies_read)
        executor.close()


def _environment() -> dict[str, str]:
    """This environment, with the folder holding the flashmark package this process runs
    first on PYTHONPATH, so that the I/O process runs the same code."""
    package_parent = str(Path(flashmark.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": package_parent + (os.pathsep + path if path else "")}


def _end(process: subprocess.Popen[bytes], *, killed: bool) -> str | None:
    """Stop the process and reap it; a note when it could not be stopped."""
    if not killed:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=_END_TIMEOUT_S)  # it ends at the end of its requests
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=_KILLED_GRACE_S)
    if process.poll() is not None:
        return None
    return (
        f"the scan's I/O process (pid {process.pid}) is stuck in uninterruptible I/O on the "
        "device (state D) and was left to end when the device answers or is removed"
    )


# -- the I/O process ------------------------------------------------------------------------
def _serve(config: _Config) -> None:
    # The same requests on files as on a device, which is one file of its size.
    medium = FolderMedium(Path("."), config.size, config.sector, config.file_bytes, config.fds)
    shared = mmap.mmap(config.shared, config.slot_bytes * config.slots)
    view = memoryview(shared)
    requests, replies, slot_bytes = config.requests, config.replies, config.slot_bytes
    pending = bytearray()
    while chunk := os.read(requests, 4096):  # until flashmark closes the pipe
        pending += chunk
        for seq, op, slot, offset, length in _complete_records(pending, _REQUEST):
            buffer = view[slot * slot_bytes : slot * slot_bytes + length]
            error = 0
            started = time.monotonic_ns()
            try:
                perform(medium, _OP_NAMES[op], buffer, offset)
            except OSError as failed:
                error = failed.errno or errno.EIO
            done = time.monotonic_ns()
            os.write(replies, _REPLY.pack(seq, error, started, done))


def _complete_records(pending: bytearray, layout: struct.Struct) -> Iterator[tuple[int, ...]]:
    """The whole records at the start of `pending`, each taken out of it as it is read (a
    record's first bytes stay for the next read of the pipe)."""
    while len(pending) >= layout.size:
        record = layout.unpack_from(pending)
        del pending[: layout.size]
        yield record


if __name__ == "__main__":
    _serve(_Config(**json.loads(sys.argv[1])))
