"""A fleet of boards on this machine, for tests/fleet and benchmarks/fleet.py.

Each board is an Ansible host with `ansible_connection: local`, its own emulated card of known
speed (a throttled loop device with ext4: tests.emulation.throttle), its own history database
and its inventory name as its label. Its flashmark runs inside its card's throttling cgroup
(its `flashmark_command` joins the group first), so it measures its own card's speed. Two
boards can be special:

- a failing card: its file system is shut down (EXT4_IOC_SHUTDOWN, as xfs_io -c shutdown and
  fstests do) as soon as fio starts a given test on it, so the run stops mid-way (exit 5) with
  the tests measured before it kept;
- another fio: the board's PATH finds a `fio` that reports another version first, so its job
  hash differs and the playbook refuses it before any board measures;
- a fresh board: its flashmark command (`installed/bin/flashmark` in the lab) is not there
  until the playbook installs it, from the wheel `flashmark fleet run` makes of the running
  flashmark, into a new venv in the lab instead of /opt/flashmark (flashmark_prefix) and
  with no link on the PATH (flashmark_link): a test must not touch /opt/flashmark. Its
  dependencies come from PyPI.

The results service is a real `flashmark serve` on a throwaway PostgreSQL (or an SQLite file),
on loopback, with one upload token. Everything is removed on exit; nothing is left running.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import flashmark
from flashmark.system.lock_files import LOCK_DIR_ENV
from tests.emulation.throttle import DeviceCaps, EmulatedDevice, command_in_group

SOURCE = Path(flashmark.__file__).resolve().parents[1]
REPOSITORY = SOURCE.parent
# The flashmark the lab runs (its service, its boards, `fleet run`): this source tree's, with
# this Python and the tree on PYTHONPATH; or, where FLASHMARK_LAB_PYTHON names the Python of an
# installed flashmark (a venv holding only the built wheel), that one as a user has it, with
# no PYTHONPATH, so the release itself is what a campaign runs.
LAB_PYTHON_ENV = "FLASHMARK_LAB_PYTHON"
INSTALLED_PYTHON = os.environ.get(LAB_PYTHON_ENV) or None
PYTHON = INSTALLED_PYTHON or sys.executable
# What `env` is given before a board's command: the source tree on PYTHONPATH, or no PYTHONPATH.
SOURCE_ENV = ["-u", "PYTHONPATH"] if INSTALLED_PYTHON else [f"PYTHONPATH={SOURCE}"]
# linux fs/ext4/ext4.h: EXT4_IOC_SHUTDOWN _IOR('X', 125, __u32), EXT4_GOING_FLAGS_NOLOGFLUSH 2;
# _IOR(type, nr, size) = (2 << 30) | (size << 16) | (type << 8) | nr (asm-generic/ioctl.h).
EXT4_IOC_SHUTDOWN = (2 << 30) | (4 << 16) | (ord("X") << 8) | 125
EXT4_GOING_FLAGS_NOLOGFLUSH = 0x2


def ansible_playbook() -> str | None:
    beside = Path(PYTHON).parent / "ansible-playbook"
    return str(beside) if beside.is_file() else shutil.which("ansible-playbook")


@dataclass(frozen=True)
class Board:
    """One board of the fleet: its label, its card's true speed, and how it misbehaves."""

    label: str
    caps: DeviceCaps
    fails_at: str | None = None  # the test during which its card's file system is shut down
    fio_version: str | None = None  # another fio version than this machine's (refused)
    fresh: bool = False  # flashmark not installed: the playbook installs it


@dataclass
class LabBoard:
    board: Board
    target: Path
    history: Path
    command: list[str]
    device: EmulatedDevice | None = None


@dataclass
class Service:
    url: str
    token: str
    database: str
    process: subprocess.Popen[bytes]
    log: Path


@dataclass
class FleetLab:
    """`with FleetLab(boards, postgres) as lab:` then `lab.fleet(...)`."""

    boards: Sequence[Board]
    postgres: Any = None  # tests.server.throwaway_pg.ThrowawayPostgres, or None: SQLite
    size_bytes: int = 160 * 2**20  # each card
    folder: Path = field(init=False)
    service: Service = field(init=False)
    members: dict[str, LabBoard] = field(init=False, default_factory=dict)
    installed: Path | None = field(init=False, default=None)  # a fresh board's venv
    _stack: contextlib.ExitStack = field(init=False, default_factory=contextlib.ExitStack)

    def __enter__(self) -> FleetLab:
        try:
            self.folder = Path(tempfile.mkdtemp(prefix="flashmark-fleet-lab-"))
            self._stack.callback(shutil.rmtree, self.folder, True)
            self.service = self._serve()
            for board in self.boards:
                self.members[board.label] = self._board(board)
            self.write_inventory()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    # -- the service ------------------------------------------------------------------------
    def _serve(self) -> Service:
        if self.postgres is not None:
            database = self.postgres.create(f"fleet_{os.getpid()}_{int(time.time() * 1000)}")
        else:
            database = str(self.folder / "server.sqlite3")
        made = self.flashmark("token", "create", "fleet", "--database", database)
        token = made.stdout.strip()
        port = _free_port()
        log = self.folder / "serve.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [PYTHON, "-m", "flashmark", "serve", "--database", database,
                 "--host", "127.0.0.1", "--port", str(port)],
                stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
                env=self.environment(),
            )  # fmt: skip
        self._stack.callback(_stop, process)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v1", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the service did not start: {log.read_text()}") from None
                time.sleep(0.1)
        return Service(url, token, database, process, log)

    # -- the boards -------------------------------------------------------------------------
    def _board(self, board: Board) -> LabBoard:
        home = self.folder / board.label
        home.mkdir()
        history = home / "history.sqlite3"
        environment = [*SOURCE_ENV, _own_locks(board.label, self.folder)]
        if board.fio_version is not None:
            environment.append(
                f"PATH={self._other_fio(home, board.fio_version)}:{os.environ['PATH']}"
            )
        flashmark_argv = [PYTHON, "-m", "flashmark"]
        if board.fio_version is not None:  # refused before it measures: no card needed
            target = home / "card"
            target.mkdir()
            return LabBoard(board, target, history, ["env", *environment, *flashmark_argv])
        device = self._stack.enter_context(EmulatedDevice(board.caps, size_bytes=self.size_bytes))
        assert device.mount_point is not None and device.cgroup is not None
        command = ["env", *environment, *command_in_group(device.cgroup, flashmark_argv)]
        if board.fresh:  # the venv's flashmark, not this source tree's
            self.installed = self.folder / "installed"
            program = str(self.installed / "bin" / "flashmark")
            command = ["env", "-u", "PYTHONPATH", *command_in_group(device.cgroup, [program])]
        if board.fails_at is not None:
            self._stack.enter_context(_fails_at(device.mount_point, board.fails_at))
        return LabBoard(board, device.mount_point, history, command, device)

    def _other_fio(self, home: Path, version: str) -> Path:
        folder = home / "bin"
        folder.mkdir()
        real = shutil.which("fio")
        script = folder / "fio"
        script.write_text(
            f'#!/bin/sh\n[ "$1" = --version ] && {{ echo {version}; exit 0; }}\nexec {real} "$@"\n'
        )
        script.chmod(0o755)
        return folder

    def replace_card(self, label: str, caps: DeviceCaps | None = None) -> None:
        """A new card for a board (its old one failed): another emulated device, the board's
        history kept; the inventory is written again."""
        member = self.members[label]
        device = self._stack.enter_context(
            EmulatedDevice(caps or member.board.caps, size_bytes=self.size_bytes)
        )
        assert device.mount_point is not None and device.cgroup is not None
        environment = [*SOURCE_ENV, _own_locks(label, self.folder)]
        command = [
            "env",
            *environment,
            *command_in_group(device.cgroup, [PYTHON, "-m", "flashmark"]),
        ]
        self.members[label] = LabBoard(
            member.board, device.mount_point, member.history, command, device
        )
        self.write_inventory()

    @property
    def inventory(self) -> Path:
        return self.folder / "inventory.yml"

    def write_inventory(self) -> None:
        """The inventory, in YAML (a board's command is a list): each board a local host."""
        hosts = {
            label: {
                "flashmark_target": str(member.target),
                "flashmark_db": str(member.history),
                "flashmark_command": member.command,
            }
            for label, member in self.members.items()
        }
        inventory = {
            "all": {
                "vars": {
                    "ansible_connection": "local",
                    "ansible_python_interpreter": PYTHON,
                },
                "hosts": hosts,
            }
        }
        # JSON is YAML: Ansible's YAML inventory reads it as it is.
        self.inventory.write_text(json.dumps(inventory, indent=1))

    # -- running ----------------------------------------------------------------------------
    def environment(self, **extra: str) -> dict[str, str]:
        inherited = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        source = {} if INSTALLED_PYTHON else {"PYTHONPATH": str(SOURCE)}
        return {
            **inherited,
            **source,
            "HOME": str(self.folder),
            "TMPDIR": str(self.folder),
            **extra,
        }

    def flashmark(
        self, *args: str, timeout: float = 120, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PYTHON, "-m", "flashmark", *args],
            capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
            env=self.environment(**env),
        )  # fmt: skip

    def fleet(
        self, campaign: str, *options: str, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        """`flashmark fleet run` on the lab's inventory and service."""
        prefix = f"flashmark_prefix={self.installed}"
        install = ("-e", prefix, "-e", "flashmark_link=") if self.installed else ()
        return self.flashmark(
            "fleet", "run", str(self.inventory), "--campaign", campaign,
            "--server", self.service.url, *install, *options,
            timeout=timeout, FLASHMARK_TOKEN=self.service.token,
        )  # fmt: skip

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.service.url + path, timeout=30) as answer:
            body = answer.read()
        return json.loads(body) if path.startswith("/api/") and not path.endswith(".csv") else body


def _own_locks(label: str, folder: Path) -> str:
    """The environment entry that gives a board its own device lock folder: boards are
    machines of their own, each with its /run/lock, even where the lab's share a disk."""
    return f"{LOCK_DIR_ENV}={folder / label / 'locks'}"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextlib.contextmanager
def _fails_at(mount_point: Path, test: str) -> Iterator[threading.Event]:
    """Shut the file system at `mount_point` down as soon as fio runs `test` in it (fio runs a
    folder's jobs inside flashmark's private folder there: its working directory says whose
    job it is)."""
    import psutil

    done = threading.Event()
    stop = threading.Event()
    marker = f"{test}.fio"

    def watch() -> None:
        while not stop.is_set():
            for process in psutil.process_iter(["name"]):
                if process.info["name"] != "fio":
                    continue
                with contextlib.suppress(psutil.Error):
                    if Path(process.cwd()).is_relative_to(mount_point) and any(
                        marker in part for part in process.cmdline()
                    ):
                        shut_down(mount_point)
                        done.set()
                        return
            time.sleep(0.02)

    thread = threading.Thread(target=watch, name=f"fails-at-{test}", daemon=True)
    thread.start()
    try:
        yield done
    finally:
        stop.set()
        thread.join(timeout=5)


def shut_down(mount_point: Path) -> None:
    descriptor = os.open(mount_point, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(descriptor, EXT4_IOC_SHUTDOWN, struct.pack("I", EXT4_GOING_FLAGS_NOLOGFLUSH))
    finally:
        os.close(descriptor)
