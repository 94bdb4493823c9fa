"""The power switch of an emulated card, usable from any process (a test's off/on commands).

    python -m tests.emulation.flash.power off WORKDIR   # the card loses power
    python -m tests.emulation.flash.power on WORKDIR    # and gets it back

Off: the engine cuts the power by its own clock and the loop device is detached, as a card
pulled from its reader. On: the card comes back from its durable state as the same /dev/loopN
when that is free, else as another. State: WORKDIR/power.json, under a lock file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from tests.emulation.flash.engine import ControlBlock, PowerCut, PowerState
from tests.emulation.throttle import EmulationUnavailable, c_locale, wait_for_udev

STATE_FILE = "power.json"
_LOCK_FILE = "power.lock"
_ENGINE_ANSWER_S = 10.0  # the engine's thread answers within milliseconds
_LOOP_RELEASE_S = 10.0  # how long power-on waits for the old loop device to be let go


@dataclass(frozen=True)
class SwitchState:
    """Where the card is attached and what its power cuts did (their truth, in order)."""

    image: str  # the file the loop device maps (nbdfuse's file in its FUSE mount)
    control: str  # the engine's control block
    home_loop: str  # the loop device the card comes back as when it is free
    loop: str | None  # where it is attached now (None: off, or dead)
    powered: bool = True
    dies_at_power_cut: int | None = None
    dead: bool = False
    cuts: tuple[PowerCut, ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> SwitchState:
        data = json.loads(text)
        data["cuts"] = tuple(PowerCut(**cut) for cut in data["cuts"])
        return cls(**data)


def read_state(workdir: Path) -> SwitchState:
    return SwitchState.from_json((workdir / STATE_FILE).read_text())


def write_state(workdir: Path, state: SwitchState) -> None:
    temporary = workdir / f".{STATE_FILE}.tmp"
    temporary.write_text(state.to_json())
    temporary.replace(workdir / STATE_FILE)


def power_off(workdir: Path) -> PowerCut | None:
    """Cut the card's power; what the cut did, or None when it was off already."""
    with _locked(workdir):
        state = read_state(workdir)
        if not state.powered:
            return None
        cut = _ask_engine(Path(state.control), on=False).last_cut
        if state.loop is not None:
            detach_loop(state.loop, state.image)
        write_state(workdir, replace(state, powered=False, loop=None, cuts=(*state.cuts, cut)))
        return cut


def power_on(workdir: Path) -> str | None:
    """Give the card its power back; the loop device it came back as, or None when it did
    not come back (its model says it died at this cut)."""
    with _locked(workdir):
        state = read_state(workdir)
        if state.powered:
            return state.loop
        dies = state.dies_at_power_cut
        if state.dead or (dies is not None and len(state.cuts) >= dies):
            write_state(workdir, replace(state, dead=True))
            return None
        _ask_engine(Path(state.control), on=True)
        loop = _attach(state.home_loop, state.image)
        write_state(workdir, replace(state, powered=True, loop=loop))
        return loop


def detach_loop(loop: str, image: str) -> None:
    """Detach `loop` if it still maps `image` (never another program's loop device). If
    something still holds it open, the kernel detaches it when the last user closes it
    (losetup -d sets autoclear), and a FUSE unmount after it goes lazy."""
    if backing_file(loop) != image:
        return
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(
            ["losetup", "--detach", loop], capture_output=True, timeout=60, env=c_locale()
        )


def backing_file(loop: str) -> str | None:
    """The file a loop device maps (sysfs loop/backing_file, loop(4)); None when detached."""
    path = Path("/sys/block") / Path(loop).name / "loop" / "backing_file"
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _ask_engine(control_path: Path, *, on: bool) -> PowerState:
    control = ControlBlock(control_path, create=False)
    try:
        generation = control.request_power(on=on)
        deadline = time.monotonic() + _ENGINE_ANSWER_S
        while True:
            state = control.read_power()
            if state.generation >= generation:
                return state
            if time.monotonic() > deadline:
                raise EmulationUnavailable(
                    f"the emulated card's engine did not answer the power {'on' if on else 'off'}"
                    f" request within {_ENGINE_ANSWER_S:.0f} s (is nbdkit still running?)"
                )
            time.sleep(0.002)
    finally:
        control.close()


def _attach(home: str, image: str) -> str:
    deadline = time.monotonic() + _LOOP_RELEASE_S
    while backing_file(home) == image and time.monotonic() < deadline:
        time.sleep(0.02)  # still held by the program that used the card: detached on close
    argv = ["losetup", "--direct-io=on", home, image]
    if backing_file(home) is not None or _run(argv) is None:
        loop = _run(["losetup", "--find", "--show", "--direct-io=on", image])
        if loop is None:
            raise EmulationUnavailable(f"no loop device could be attached to {image}")
        home = loop.strip()
    wait_for_udev()
    return home


def _run(argv: list[str]) -> str | None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=c_locale())
    return done.stdout if done.returncode == 0 else None


@contextlib.contextmanager
def _locked(workdir: Path) -> Iterator[None]:
    with (workdir / _LOCK_FILE).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("off", "on"):
        print("usage: python -m tests.emulation.flash.power off|on WORKDIR", file=sys.stderr)
        return 2
    workdir = Path(argv[1])
    try:
        if argv[0] == "off":
            power_off(workdir)
        else:
            power_on(workdir)
    except (OSError, EmulationUnavailable) as error:
        print(f"emulated power {argv[0]}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
