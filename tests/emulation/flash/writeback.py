"""An emulated card with a volatile write cache (nbdkit's cache filter, `cache=writeback`, holds
writes until a flush: nbdkit-cache-filter(1)), and power cuts that lose what it held.

    with VolatileFlash(FlashModel(claimed_bytes=64 * MiB)) as card:
        card.path           # "/dev/loopN"
        card.power_cut()    # writes not flushed yet are lost; the device is gone
        card.power_on()     # back at the same /dev/loopN, holding what was flushed
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from tests.emulation.flash.device import (
    IMPORT_PATH,
    PLUGIN,
    loop_direct_io,
    mounted,
    start_nbdfuse,
    stop_server,
    unavailable_reason,
)
from tests.emulation.flash.engine import ControlBlock, FlashStats
from tests.emulation.flash.model import Backing, FlashModel
from tests.emulation.flash.power import backing_file
from tests.emulation.throttle import (
    Emulation,
    EmulationUnavailable,
    c_locale,
    run_tool,
    wait_for_udev,
)

_START_TIMEOUT_S = 20.0
# loop(4): /dev/loop-control's ioctls that add and remove a loop device of a given number
_LOOP_CTL_ADD, _LOOP_CTL_REMOVE = 0x4C80, 0x4C81
_FIRST_OWN_LOOP = 200  # far above the devices `losetup --find` hands out first
_STOP_TIMEOUT_S = 10.0


class VolatileFlash(Emulation):
    """A card whose unflushed writes a power cut loses; a context manager (module doc)."""

    def __init__(
        self,
        model: FlashModel,
        *,
        write_delay_ms: int = 0,
        read_delay_ms: int = 0,
        workdir: Path | None = None,
    ) -> None:
        if model.backing is not Backing.FILE:
            raise ValueError("a power cut keeps only what a file-backed card stored (Backing.FILE)")
        self.model = model
        self.write_delay_ms = write_delay_ms
        self.read_delay_ms = read_delay_ms
        self.path = ""  # /dev/loopN once powered on (kept across power cuts)
        self._loop_number: int | None = None  # the loop device made for this card
        self._parent_dir = workdir
        self._workdir: Path | None = None
        self._control: ControlBlock | None = None
        self._server: subprocess.Popen[bytes] | None = None

    # -- life cycle ---------------------------------------------------------------------------
    def _unavailable(self) -> str | None:
        reason = unavailable_reason()
        if reason is None and shutil.which("nbdkit") is not None:
            reason = _cache_filter_missing()
        return reason

    def _setup(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="flashmark-flash-", dir=self._parent_dir))
        (self._workdir / "model.json").write_text(self.model.to_json())
        self._control = ControlBlock(self._workdir / "control", create=True)
        with (self._workdir / "backing.img").open("wb") as handle:
            handle.truncate(self.model.real_capacity)  # sparse
        self.power_on()

    def close(self) -> None:
        """Remove everything (idempotent). Writes not flushed are lost, as at a power cut."""
        self._power_off(cut=True)
        if self._loop_number is not None:
            _loop_control(_LOOP_CTL_REMOVE, self._loop_number)
            self._loop_number = None
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    # -- power --------------------------------------------------------------------------------
    def power_on(self) -> None:
        """Start the card on its durable state and attach it (at the same /dev/loopN)."""
        if self._server is not None:
            raise EmulationUnavailable("the card is already on")
        workdir = self._require_workdir()
        mount = workdir / "mnt"
        mount.mkdir(exist_ok=True)
        pidfile = workdir / "nbdfuse.pid"
        pidfile.unlink(missing_ok=True)
        argv = [
            "nbdfuse", "-P", str(pidfile), str(mount / "flash"), "--command",
            # The first filter is the client's side: the delay, then the volatile cache.
            "nbdkit", "-s", "--exit-with-parent", "--filter=delay", "--filter=cache",
            "python", str(PLUGIN),
            f"model={workdir / 'model.json'}", f"control={workdir / 'control'}",
            f"backing={workdir / 'backing.img'}", "cache=writeback",
            f"delay-write={self.write_delay_ms}ms",
            f"delay-read={self.read_delay_ms}ms",
        ]  # fmt: skip
        # TMPDIR: where the cache filter keeps its file, the volatile cache
        env = {**c_locale(), "TMPDIR": str(workdir), "PYTHONPATH": IMPORT_PATH}
        self._server = start_nbdfuse(argv, env, workdir / "nbd.log")
        if not mounted(self._server, pidfile):
            self._power_off(cut=True)
            raise EmulationUnavailable(f"nbdfuse did not mount {mount}: {self.server_log()}")
        self._attach(mount / "flash")

    def power_cut(self) -> None:
        """Cut the power: nbdkit dies at once with its cache (writes not flushed are lost),
        and the device is removed. `power_on` brings it back."""
        self._power_off(cut=True)

    def _attach(self, image: Path) -> None:
        if not self.path:
            self._loop_number = _own_loop_device()
            self.path = f"/dev/loop{self._loop_number}"
        deadline = time.monotonic() + _STOP_TIMEOUT_S
        while backing_file(self.path) is not None:  # after a cut: detached on its last close
            if time.monotonic() > deadline:
                self._power_off(cut=True)
                raise EmulationUnavailable(f"{self.path} is still held after the power cut")
            time.sleep(0.05)
        run_tool(["losetup", "--direct-io=on", self.path, str(image)])
        if loop_direct_io(self.path) != "1":
            self._power_off(cut=True)
            raise EmulationUnavailable(f"{self.path} did not switch to direct I/O on {image}")
        wait_for_udev()

    def _power_off(self, *, cut: bool) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        if cut:
            for pid in _children(server.pid):  # nbdkit: nbdfuse's child
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if self.path:
            with contextlib.suppress(EmulationUnavailable, OSError, subprocess.TimeoutExpired):
                run_tool(["losetup", "--detach", self.path])
        stop_server(server, self._require_workdir() / "mnt")

    # -- looking at it ------------------------------------------------------------------------
    def stats(self) -> FlashStats:
        """The engine's counters since it was last powered on (what reached durable state)."""
        if self._control is None:
            raise EmulationUnavailable("the card is not set up (use it in a with block)")
        return self._control.read_stats()

    def durable(self, offset: int, length: int) -> bytes:
        """What the card's durable state holds at `offset` (its backing file; the card must
        be a genuine one, whose addresses are the file's)."""
        with (self._require_workdir() / "backing.img").open("rb") as handle:
            handle.seek(offset)
            return handle.read(length)

    def server_log(self) -> str:
        log = self._require_workdir() / "nbd.log"
        return log.read_text(errors="replace")[-2000:].strip() if log.exists() else ""

    def _require_workdir(self) -> Path:
        if self._workdir is None:
            raise EmulationUnavailable("the card is not set up (use it in a with block)")
        return self._workdir


def _cache_filter_missing() -> str | None:
    try:
        done = subprocess.run(
            ["nbdkit", "--filter=delay", "--filter=cache", "null", "--dump-plugin"],
            capture_output=True,
            timeout=30,
            env=c_locale(),
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"nbdkit does not run: {error}"
    if done.returncode != 0:
        return "nbdkit has no cache or delay filter (apt-get install nbdkit)"
    return None


def _own_loop_device() -> int:
    """A new loop device's number, from _FIRST_OWN_LOOP up (its node appears in /dev)."""
    for number in range(_FIRST_OWN_LOOP, _FIRST_OWN_LOOP + 800):
        try:
            made = _loop_control(_LOOP_CTL_ADD, number, strict=True)
        except FileExistsError:
            continue
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not Path(f"/dev/loop{made}").exists():  # devtmpfs makes it
            if time.monotonic() > deadline:
                raise EmulationUnavailable(f"/dev/loop{made} did not appear")
            time.sleep(0.01)
        return made
    raise EmulationUnavailable("no loop device number free from 200 to 999")


def _loop_control(request: int, number: int, *, strict: bool = False) -> int:
    """LOOP_CTL_ADD or LOOP_CTL_REMOVE of loop device `number`; errors raised only when
    `strict` (a removal that fails leaves a spare, unbound loop device)."""
    try:
        fd = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
        try:
            return int(fcntl.ioctl(fd, request, number))
        finally:
            os.close(fd)
    except OSError:
        if strict:
            raise
        return -1


def _children(pid: int) -> list[int]:
    """The children of `pid` (proc(5), /proc/PID/task/TID/children)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(child) for child in (task / "children").read_text().split()]
    return found
