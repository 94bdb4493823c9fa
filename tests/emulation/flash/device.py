"""An emulated flash card as a real block device: nbdkit + nbdfuse + a direct-I/O loop device
(docs/emulated-flash.md); everything it creates is removed on exit, whatever happened.

    with EmulatedFlash(FlashModel(claimed_bytes=1 * GiB, real_bytes=256 * MiB)) as card:
        card.path       # "/dev/loopN": give it to fio, flashmark, f3probe, ...
        card.model      # the truth; card.stats(): what the device did, by its own clock
        card.reset(); card.vanish(); card.power_off(); card.power_on()
        card.stop_answering()  # requests are held, unanswered, until card.answer_again()
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import flashmark
from tests.emulation.flash import power
from tests.emulation.flash.engine import ControlBlock, FlashStats, PowerCut
from tests.emulation.flash.model import Backing, FlashModel
from tests.emulation.throttle import (
    CGROUP_ROOT,
    DeviceCaps,
    Emulation,
    EmulationUnavailable,
    c_locale,
    command_in_group,
    create_throttle_group,
    device_number,
    run_tool,
    throttle_unavailable_reason,
    wait_for_udev,
)

PLUGIN = Path(__file__).with_name("plugin.py")
# What the plugin (inside nbdkit) and a power command (any process) import from: this checkout,
# for the tests package, and the same flashmark as this process.
_CHECKOUT = Path(__file__).resolve().parents[3]
IMPORT_PATH = os.pathsep.join(
    dict.fromkeys((str(_CHECKOUT), str(Path(flashmark.__file__).resolve().parents[1])))
)
_TOOLS = {  # command -> Debian package that provides it
    "nbdkit": "nbdkit",
    "nbdfuse": "libnbd-bin",  # Debian 12 ships nbdfuse there ("nbdfuse" is a virtual name)
    "fusermount3": "fuse3",
    "losetup": "util-linux",
}
_ENGINE_PYTHON = (3, 11)  # enum.StrEnum; flashmark's own floor (pyproject requires-python)
_START_TIMEOUT_S = 20.0
_STOP_TIMEOUT_S = 10.0


def unavailable_reason() -> str | None:
    """None when this machine can run emulated flash devices, else the reason (for skips)."""
    if os.geteuid() != 0:
        return "emulated flash needs root (FUSE mount over a loop device)"
    for tool, package in _TOOLS.items():
        if shutil.which(tool) is None:
            return f"emulated flash needs {tool} (apt-get install {package})"
    if not Path("/dev/fuse").exists():
        return "emulated flash needs FUSE (/dev/fuse is missing: modprobe fuse)"
    if not Path("/dev/loop-control").exists():
        return "emulated flash needs loop devices (/dev/loop-control is missing)"
    return _python_plugin_missing()


@functools.cache
def _python_plugin_missing() -> str | None:
    """nbdkit must have its Python plugin, built for a Python the engine runs on (3.11+)."""
    try:
        done = subprocess.run(
            ["nbdkit", "python", "--dump-plugin"],
            capture_output=True,
            text=True,
            timeout=30,
            env=c_locale(),
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"nbdkit does not run: {error}"
    if done.returncode != 0:
        return "nbdkit has no Python plugin (apt-get install nbdkit-plugin-python)"
    # --dump-plugin prints "python_version=3.11.1" (nbdkit-python-plugin(3), "Python versions")
    fields = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    version = tuple(int(part) for part in fields.get("python_version", "0").split(".")[:2])
    if version < _ENGINE_PYTHON:
        return (
            f"nbdkit's Python plugin runs Python {fields.get('python_version', '?')}; the "
            f"emulated flash engine needs {'.'.join(map(str, _ENGINE_PYTHON))} or newer"
        )
    return None


class EmulatedFlash(Emulation):
    """A block device behaving as `model` says; a context manager (see the module doc)."""

    def __init__(
        self,
        model: FlashModel,
        *,
        caps: DeviceCaps | None = None,
        workdir: Path | None = None,
        cgroup_root: Path = CGROUP_ROOT,
    ) -> None:
        self.model = model
        self.caps = caps
        self._parent_dir = workdir
        self._cgroup_root = cgroup_root
        self._stack = contextlib.ExitStack()
        self._control: ControlBlock | None = None
        self._log: Path | None = None
        self._workdir: Path | None = None
        self._first_loop = ""
        self.image: Path | None = None  # nbdfuse's file (in its FUSE mount) under the loop
        self.cgroup: Path | None = None

    # -- life cycle ---------------------------------------------------------------------------
    def _unavailable(self) -> str | None:
        reason = unavailable_reason()
        if reason is None and self.caps is not None:
            reason = throttle_unavailable_reason(self._cgroup_root)
        return reason

    def close(self) -> None:
        """Remove everything (idempotent; __exit__ calls it)."""
        # SIGINT during cleanup would leave a mount or a loop device behind: finish first.
        with _deferred_sigint():
            if self._control is not None:
                # Held requests keep their callers (and the loop device) busy: answer them.
                with contextlib.suppress(ValueError):  # the control block was closed already
                    self._control.request_silence(False)
            self._stack.close()

    def _setup(self) -> None:
        workdir = Path(tempfile.mkdtemp(prefix="flashmark-flash-", dir=self._parent_dir))
        self._stack.callback(shutil.rmtree, workdir, True)
        self._workdir = workdir

        model_file = workdir / "model.json"
        model_file.write_text(self.model.to_json())
        control_file = workdir / "control"
        self._control = ControlBlock(control_file, create=True)
        self._stack.callback(self._control.close)
        backing: Path | None = None
        if self.model.backing is Backing.FILE:
            backing = workdir / "backing.img"
            with backing.open("wb") as handle:  # sparse: truncate allocates nothing
                handle.truncate(self.model.real_capacity)

        mount = workdir / "mnt"
        mount.mkdir()
        self._log = workdir / "nbd.log"
        self._start_server(mount, model_file, control_file, backing)
        image = mount / "flash"
        self.image = image

        loop = run_tool(["losetup", "--find", "--show", "--direct-io=on", str(image)]).strip()
        self._first_loop = loop
        # Power cycles may attach the card again elsewhere: the switch's state says where.
        power.write_state(
            workdir,
            power.SwitchState(
                image=str(image),
                control=str(control_file),
                home_loop=loop,
                loop=loop,
                dies_at_power_cut=self.model.dies_at_power_cut,
            ),
        )
        self._stack.callback(self._detach_current_loop)
        if loop_direct_io(loop) != "1":
            raise EmulationUnavailable(
                f"{loop} did not switch to direct I/O on {image}: aliasing would be hidden"
                " by the page cache (the kernel's FUSE must support O_DIRECT)"
            )
        wait_for_udev()  # before the counters start, so it is not charged to the test
        if self.caps is not None:
            node = device_number(self.path)
            self.cgroup = create_throttle_group(self.caps, node, self._stack, self._cgroup_root)
        self.reset()

    def _start_server(
        self, mount: Path, model_file: Path, control_file: Path, backing: Path | None
    ) -> None:
        assert self._log is not None
        pidfile = mount.parent / "nbdfuse.pid"
        nbdkit = [
            "nbdkit",
            "-s",  # serve on stdin/stdout, as nbdfuse --command expects
            "--exit-with-parent",
            "python",
            str(PLUGIN),
            f"model={model_file}",
            f"control={control_file}",
        ]
        if backing is not None:
            nbdkit.append(f"backing={backing}")
        argv = ["nbdfuse", "-P", str(pidfile), str(mount / "flash"), "--command", *nbdkit]
        process = start_nbdfuse(argv, {**c_locale(), "PYTHONPATH": IMPORT_PATH}, self._log)
        self._stack.callback(stop_server, process, mount)
        if not mounted(process, pidfile):
            raise EmulationUnavailable(
                f"nbdfuse did not mount {mount} (exit {process.poll()}): {self.server_log()}"
            )

    @property
    def path(self) -> str:
        """The card's loop device: where it is attached now, or where it was before its power
        went off ("" before it is entered)."""
        if self._workdir is None or not (self._workdir / power.STATE_FILE).exists():
            return self._first_loop
        state = power.read_state(self._workdir)
        return state.loop or state.home_loop

    def _detach_current_loop(self) -> None:
        assert self._workdir is not None
        state = power.read_state(self._workdir)
        if state.loop is not None:
            power.detach_loop(state.loop, state.image)

    # -- use ----------------------------------------------------------------------------------
    def stats(self) -> FlashStats:
        """The device's own counters and clock since the last reset."""
        return self._require_control().read_stats()

    def reset(self) -> None:
        """Make the device fresh: empty cache, counters and clock restarted, not vanished.

        The data stays. Takes effect at the next request (the device is idle until then).
        """
        self._require_control().request_reset()

    def vanish(self) -> None:
        """From the next request on, every request fails with EIO (the card is gone).

        The loop device node stays, as it does for a card that dies in its reader; `reset()`
        brings the device back.
        """
        self._require_control().request_vanish()

    def power_off(self) -> PowerCut | None:
        """Cut the power: what was not durable is lost and the loop device is detached (see
        tests.emulation.flash.power). What the cut did, or None if it was off already."""
        return power.power_off(self._require_workdir())

    def power_on(self) -> str | None:
        """Power back on: the loop device the card came back as (the same one when it is
        free), or None when the model says it died at this cut."""
        return power.power_on(self._require_workdir())

    def power_cuts(self) -> tuple[PowerCut, ...]:
        """What each power cut did so far (also those made by `power_command`s)."""
        return power.read_state(self._require_workdir()).cuts

    @property
    def powered(self) -> bool:
        return power.read_state(self._require_workdir()).powered

    def power_command(self, action: str) -> str:
        """A shell command that switches this card "off" or "on" from any process, as a
        relay or a smart plug would (`flashmark powercut --off-command ...`)."""
        if action not in ("off", "on"):
            raise ValueError(f"power action {action!r} is not off or on")
        return shlex.join(
            [
                "env",
                f"PYTHONPATH={IMPORT_PATH}",
                sys.executable,
                "-m",
                "tests.emulation.flash.power",
                action,
                str(self._require_workdir()),
            ]
        )

    def _require_workdir(self) -> Path:
        if self._workdir is None:
            raise EmulationUnavailable("the emulated flash is not set up (use it in a with block)")
        return self._workdir

    def stop_answering(self) -> None:
        """From the next request on, the device holds every request without answering (no
        error, no data), as a card that hangs does: its callers wait in uninterruptible I/O
        (process state D) until `answer_again()`, which serves the held requests, or a power
        cut, which fails them. close() answers them too."""
        self._require_control().request_silence(True)

    def answer_again(self) -> None:
        """End `stop_answering()`: the held requests are served, in order."""
        self._require_control().request_silence(False)

    def command(self, argv: Sequence[str]) -> list[str]:
        """argv wrapped to run inside the throttle caps (only with `caps=`)."""
        if self.cgroup is None:
            raise EmulationUnavailable("this emulated flash device has no throttle caps")
        return command_in_group(self.cgroup, argv)

    def server_log(self) -> str:
        """What nbdfuse and nbdkit printed (for error messages)."""
        if self._log is None or not self._log.exists():
            return ""
        return self._log.read_text(errors="replace")[-2000:].strip()

    def _require_control(self) -> ControlBlock:
        if self._control is None:
            raise EmulationUnavailable("the emulated flash is not set up (use it in a with block)")
        return self._control


def loop_direct_io(device: str) -> str:
    dio = Path("/sys/block") / Path(device).name / "loop" / "dio"
    return dio.read_text().strip() if dio.exists() else "unknown"


def start_nbdfuse(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """nbdfuse as `argv` says, its output added to `log`. In a session of its own: a Ctrl-C
    meant for the test must not kill the device under the loop before it is detached."""
    with log.open("ab") as output:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=env,
            start_new_session=True,
        )  # fmt: skip


def mounted(process: subprocess.Popen[bytes], pidfile: Path) -> bool:
    """Whether nbdfuse mounted (wrote `pidfile`) before it exited or _START_TIMEOUT_S passed."""
    deadline = time.monotonic() + _START_TIMEOUT_S
    while not (pidfile.exists() and pidfile.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def stop_server(process: subprocess.Popen[bytes], mount: Path) -> None:
    """Unmount (nbdfuse then exits, and nbdkit with it); kill only if it does not.

    The unmount is tried even if nbdfuse already died: its mount stays until unmounted. If the
    loop device is still held open (it is then detached on last close), the plain unmount is
    refused as busy and a lazy one detaches the mount from the tree.
    """
    for argv in (["fusermount3", "-u", str(mount)], ["fusermount3", "-u", "-z", str(mount)]):
        try:
            run_tool(argv)
            break
        except (EmulationUnavailable, OSError, subprocess.TimeoutExpired):
            continue
    try:
        process.wait(timeout=_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()  # our own child, by its handle; nbdkit follows (--exit-with-parent)
        process.wait(timeout=_STOP_TIMEOUT_S)


@contextlib.contextmanager
def _deferred_sigint() -> Iterator[None]:
    """Hold back SIGINT (in the main thread) until the block ends, then deliver it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            os.kill(os.getpid(), signal.SIGINT)
