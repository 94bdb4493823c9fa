"""nbdkit plugin: serves a FlashEngine as an NBD export. Runs inside nbdkit, never imported.

    nbdkit python .../tests/emulation/flash/plugin.py model=MODEL.json control=CONTROL \
        [backing=FILE]

nbdkit's Python plugin (nbdkit-python-plugin(3), nbdkit 1.32) calls the top-level functions
below by name (`open`, `get_size` and `pread` required). device.py sets PYTHONPATH so that the
engine is the host's own code. A callback raises after `nbdkit.set_error(errno)`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import nbdkit  # provided by nbdkit-plugin-python inside nbdkit only

from tests.emulation.flash.engine import (
    POWER_POLL_S,
    ControlBlock,
    DeviceFault,
    FlashEngine,
    open_storage,
)
from tests.emulation.flash.model import FlashModel

API_VERSION = 2

_settings: dict[str, str] = {}
_engines: list[FlashEngine] = []
_stop_ticking = threading.Event()


def config(key: str, value: str) -> None:
    if key not in ("model", "control", "backing"):
        raise ValueError(f"unknown parameter {key}= (expected model=, control=, backing=)")
    _settings[key] = value


def config_complete() -> None:
    for key in ("model", "control"):
        if key not in _settings:
            raise ValueError(f"missing parameter {key}=")
    model = FlashModel.from_json(Path(_settings["model"]).read_text())
    backing = _settings.get("backing")
    storage = open_storage(model, Path(backing) if backing else None)
    control = ControlBlock(Path(_settings["control"]), create=False)
    engine = FlashEngine(model, storage, control=control)
    _engines.append(engine)
    # Power requests and due write-backs happen on time also while no request arrives. The
    # embedded interpreter runs this thread between nbdkit's calls (checked with nbdkit 1.32).
    threading.Thread(target=_tick, args=(engine,), name="flash-power", daemon=True).start()


def _tick(engine: FlashEngine) -> None:
    while not _stop_ticking.wait(POWER_POLL_S):
        engine.tick()


def thread_model() -> int:
    # One request at a time: the engine's clock models a card's single channel, and its state
    # is not locked (nbdkit-python-plugin(3), "Threads": this is also the default).
    return int(nbdkit.THREAD_MODEL_SERIALIZE_ALL_REQUESTS)


def _engine() -> FlashEngine:
    return _engines[0]


def open(readonly: bool) -> int:
    return 1  # one device; the handle carries nothing


def get_size(h: int) -> int:
    return _engine().model.claimed_bytes


def is_rotational(h: int) -> bool:
    return False


def can_write(h: int) -> bool:
    return True


def can_flush(h: int) -> bool:
    # fio's end_fsync, fsync(2) and filesystems send flushes. A model without a volatile cache
    # has nothing to write back (its speed cache's data is already stored): free. FUA is left
    # to nbdkit, which emulates it with a flush after the write when the plugin defines no
    # can_fua (nbdkit-python-plugin(3), "can_fua").
    return True


def can_trim(h: int) -> bool:
    # No discard: the loop device then reports "not supported" (mkfs carries on) instead of
    # the model having to define what a discarded block of a fake reads back.
    return False


def can_multi_conn(h: int) -> bool:
    return False


def pread(h: int, buf: bytearray, offset: int, flags: int) -> None:
    _serve(lambda engine: engine.read_into(memoryview(buf), offset))


def pwrite(h: int, buf: bytes, offset: int, flags: int) -> None:
    _serve(lambda engine: engine.write(memoryview(buf), offset))


def flush(h: int, flags: int) -> None:
    _serve(FlashEngine.flush)


def _serve(request: Callable[[FlashEngine], None]) -> None:
    """Serve a request; a fault of the device is the errno nbdkit gives the client."""
    try:
        request(_engine())
    except DeviceFault as fault:
        nbdkit.set_error(fault.errno)
        raise


def cleanup() -> None:
    _stop_ticking.set()
    for engine in _engines:
        engine.close()
