"""Turn SIGINT, SIGTERM and SIGHUP into an exception, so `finally` blocks clean up.

Python turns SIGINT into KeyboardInterrupt but lets SIGTERM (what `kill`, systemd and CI send)
end the process at once, leaving a test file behind. Inside `signals_raise()` all three raise
flashmark.errors.Interrupted in the main thread instead; the runner stops fio and the target
removes its test file on the way out.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from flashmark.errors import ExitStatus, Interrupted

_HANDLED = {
    signal.SIGINT: ExitStatus.INTERRUPTED,
    signal.SIGTERM: ExitStatus.TERMINATED,
    signal.SIGHUP: ExitStatus.TERMINATED,
}


@contextmanager
def signals_raise() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        # Raise once; a second signal during cleanup must not interrupt the cleanup itself.
        for sig in _HANDLED:
            signal.signal(sig, signal.SIG_IGN)
        error = Interrupted(signal.Signals(signum).name, _HANDLED[signal.Signals(signum)])
        if _held.depth > 0:
            _held.pending = error  # raised when the held section ends (signals_held)
            return
        raise error

    previous = {sig: signal.signal(sig, handler) for sig in _HANDLED}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class _Held:
    depth = 0
    pending: Interrupted | None = None


_held = _Held()


@contextmanager
def signals_held() -> Iterator[None]:
    """A section a signal must not cut in two: starting fio and taking charge of it, creating
    the test file and arranging its removal. A signal arriving inside is raised as it ends,
    when whatever was started has an owner that will stop it. Only the main thread, where
    the handler runs, holds signals; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _held.depth += 1
    try:
        yield
    finally:
        _held.depth -= 1
        pending, _held.pending = _held.pending, None
        if pending is not None and _held.depth == 0:
            raise pending
        _held.pending = pending  # still inside an outer held section
