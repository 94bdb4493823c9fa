"""Turn SIGINT, SIGTERM and SIGHUP into an exception, so `finally` blocks clean up.

Python lets SIGTERM (what `kill`, systemd and CI send) end the process at once. Inside
`signals_raise()` all three raise flashmark.errors.Interrupted in the main thread; inside
`signals_held()` a signal waits until a section that must not be cut in two is done. Outside
them the entry point's handler stops flashmark at once. Exit statuses are 128 + the signal's
number; a signal ignored at start stays ignored (`nohup flashmark run`).
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from flashmark.errors import ExitStatus, Interrupted

_HANDLED = {
    signal.SIGINT: ExitStatus.INTERRUPTED,
    signal.SIGTERM: ExitStatus.TERMINATED,
    signal.SIGHUP: ExitStatus.HANGUP,
}

_Handler = Callable[[int, FrameType | None], Any]


@contextmanager
def _handlers(handler: _Handler) -> Iterator[None]:
    """`handler` for the handled signals that are not ignored, then the previous ones back."""
    previous = {
        sig: signal.signal(sig, handler)
        for sig in _HANDLED
        if signal.getsignal(sig) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


_RESEND_DELAY_S = 0.01  # long enough for the main thread to leave the finalizer


def _send_later(signum: int) -> None:
    time.sleep(_RESEND_DELAY_S)
    os.kill(os.getpid(), signum)


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

    previous_hook = sys.unraisablehook

    def unraisable(report: Any) -> None:
        # A handler runs between any two bytecodes of the main thread, also inside a finalizer
        # (__del__, a weakref callback), where Python cannot raise: it would print "Exception
        # ignored in ..." with a traceback and the run would go on with signals ignored. Send
        # the signal again instead, to be raised once the finalizer is done: a little later
        # and from another thread, as os.kill in this one would run the handler here, at once.
        # (If it lands in a finalizer again, this hook sends it again.)
        if not isinstance(report.exc_value, Interrupted):
            previous_hook(report)
            return
        signum = signal.Signals[report.exc_value.signal_name]
        signal.signal(signum, handler)
        _thread.start_new_thread(_send_later, (signum,))

    sys.unraisablehook = unraisable
    try:
        with _handlers(handler):
            yield
    finally:
        sys.unraisablehook = previous_hook


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


def signal_of(error: BaseException) -> str | None:
    """The signal that stopped a command with `error` ("SIGTERM"), None when none did: an
    Interrupted names its signal, and Ctrl-C outside signals_raise is a KeyboardInterrupt."""
    name = getattr(error, "signal_name", None)
    if name:
        return str(name)
    return "SIGINT" if isinstance(error, KeyboardInterrupt) else None
