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
        raise Interrupted(signal.Signals(signum).name, _HANDLED[signal.Signals(signum)])

    previous = {sig: signal.signal(sig, handler) for sig in _HANDLED}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
