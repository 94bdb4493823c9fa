"""Runs the fault-injection cases of cases.py against the real CLI and judges what happened.

Each case runs `sys.executable -m flashmark ...` (so PYTHONPATH decides which flashmark is
tested) with a private TMPDIR, FLASHMARK_DB, XDG_DATA_HOME and target folder, and an
environment marker (FLASHMARK_FAULT_CASE) that every process it starts inherits: that is how
leftover processes are found, and how everything is killed afterwards whatever happened.

Folder targets live on emulated devices (tests.emulation.throttle: ext4 on a throttled loop
device, 4 MB/s write), one per worker, so runs are slow and predictable enough for a signal to land
mid-test. Every device, loop, mount, cgroup, swap area and process a case creates is removed
when the case or the lab ends.

`Outcome.problems` lists what did not hold, each as one sentence; an empty list means held.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from flashmark.system.lock_files import LOCK_DIR_ENV
from tests.cli.faults import cases as c
from tests.cli_runner import fio_jobs_of
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

MARKER_ENV = "FLASHMARK_FAULT_CASE"
# The emulated card: slow enough that preparing 4 MiB takes a second and a signal has
# something to interrupt; IOPS caps are multiples of 10 (the throttle works in 100 ms slices).
CARD = DeviceCaps(
    "fault-lab card", read_iops=1000, write_iops=500, read_bps=20_000_000, write_bps=4_000_000
)
DEVICE_BYTES = 256 * 2**20
# Cases run at once, each on its own emulated device. Most of a case is waiting (fio's timed
# tests, a throttled device): six cases use about half a CPU core together.
DEFAULT_WORKERS = 6
EXIT_FOR = {"INT": 130, "TERM": 143, "HUP": 129}
SIGNAL_NUMBER = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "HUP": signal.SIGHUP}
HISTORY_EXIT = 6  # database errors get their own documented exit code
LEFTOVER_PATTERNS = (".flashmark-*", "flashmark-workload-*")
WORKDIR_PATTERN = "flashmark-fio-*"
_POLL_S = 0.03
_CASE_TIMEOUT_S = 120.0
# click's usage boilerplate around its one "Error: ..." line.
_BOILERPLATE = re.compile(r"^(Usage: .*|Try '.*' for help\.|\s*)$")
_ERROR_LINE = re.compile(r"^(Error: |flashmark: (\w+ )?error)")


@dataclass
class Outcome:
    case_id: str
    category: str
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""  # what happened, for the table (e.g. "exit 143", "finished before SIGINT")

    @property
    def held(self) -> bool:
        return not self.problems

    def report(self) -> str:
        lines = [f"{self.case_id}: {self.note}"] + [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


def flashmark(*args: str) -> list[str]:
    return [sys.executable, "-m", "flashmark", *args]


def unavailable_reason() -> str | None:
    from tests.emulation.throttle import unavailable_reason as emulation_reason

    if shutil.which("fio") is None:
        return "fio is not installed (apt-get install fio)"
    for tool in ("sfdisk", "partx", "mkswap", "swapon", "chattr"):
        if shutil.which(tool) is None:
            return f"the fault tier needs {tool} (util-linux, e2fsprogs)"
    return emulation_reason()


# -- processes ----------------------------------------------------------------------------------
def case_processes(marker: str) -> list[psutil.Process]:
    """Live processes started for this case (they carry its marker in their environment)."""
    found = []
    needle = f"{MARKER_ENV}={marker}".encode()
    for pid in psutil.pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if needle not in handle.read().split(b"\0"):
                    continue
            process = psutil.Process(pid)
            if process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except (OSError, psutil.Error):
            continue
    return found


def describe(processes: Sequence[psutil.Process]) -> str:
    names = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            names.append(f"{process.name()}[{process.pid}]")
    return ", ".join(names) or "(gone)"


def wait_for_no_processes(
    marker: str, timeout_s: float, names: set[str] | None = None
) -> list[psutil.Process]:
    """Poll until no case process (of these names) is left; return those still there."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = [p for p in case_processes(marker) if names is None or _name(p) in names]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill_case_processes(marker: str) -> None:
    for _ in range(3):
        left = case_processes(marker)
        if not left:
            return
        for process in left:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(left, timeout=2)


def _name(process: psutil.Process) -> str:
    try:
        name = process.name()
        if name.startswith("python"):
            return "flashmark"
        return name
    except psutil.Error:
        return ""


def fio_mains(fios: Sequence[psutil.Process]) -> list[psutil.Process]:
    """The fio processes flashmark started (their parent is not fio): one per job file."""
    mains = []
    for process in fios:
        try:
            parent = process.parent()
            if parent is None or parent.name() != "fio":
                mains.append(process)
        except psutil.Error:
            continue
    return mains


# -- files --------------------------------------------------------------------------------------
def snapshot(root: Path) -> dict[str, str]:
    """Every entry under root: relative name -> content digest (files), 'dir' or link target."""
    entries: dict[str, str] = {}
    if not root.exists():
        return entries
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                entries[key] = f"link:{os.readlink(path)}"
            elif path.is_dir():
                entries[key] = "dir"
            else:
                try:
                    entries[key] = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError as error:
                    entries[key] = f"unreadable:{error.strerror}"
    return entries


def snapshot_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    changes = []
    for key in sorted(before.keys() | after.keys()):
        if key not in after:
            changes.append(f"removed {key!r}")
        elif key not in before:
            changes.append(f"created {key!r}")
        elif before[key] != after[key]:
            changes.append(f"changed {key!r}")
    return changes


def write_sentinel(path: Path, rng: random.Random) -> None:
    path.write_bytes(rng.randbytes(rng.randint(1, 8192)))


def leftovers(target: Path, tmpdir: Path) -> list[str]:
    found = []
    for pattern in LEFTOVER_PATTERNS:
        found += [str(p) for p in target.glob(pattern)]
    found += [str(p) for p in tmpdir.glob(WORKDIR_PATTERN)]
    return sorted(found)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if _ERROR_LINE.match(line)]


def one_error_line(stderr: str, what: str) -> list[str]:
    """The documented shape of a refusal: exactly one error line, the last thing printed (click
    usage boilerplate around it allowed), and no traceback."""
    problems = []
    if "Traceback" in stderr:
        problems.append(f"{what}: printed a traceback: {_tail(stderr)}")
    errors = error_lines(stderr)
    meaningful = [line for line in stderr.splitlines() if not _BOILERPLATE.match(line)]
    if len(errors) != 1:
        problems.append(f"{what}: expected one error line, got {len(errors)}: {_tail(stderr)}")
    elif not meaningful or meaningful[-1] != errors[0]:
        problems.append(f"{what}: the error is not the last line: {_tail(stderr)}")
    return problems


def _tail(text: str, limit: int = 400) -> str:
    text = text.strip()
    return repr(text if len(text) <= limit else "..." + text[-limit:])


# -- the lab ------------------------------------------------------------------------------------
class Lab:
    """Emulated devices (one per worker, made on first use) and a scratch folder.

    Use as a context manager: everything is removed on exit.
    """

    def __init__(self, workers: int = DEFAULT_WORKERS, seed: int = c.DEFAULT_SEED) -> None:
        self.workers = workers
        self.seed = seed
        self._stack = contextlib.ExitStack()
        self._devices: queue.Queue[EmulatedDevice] = queue.Queue()
        self._made = 0
        self._lock = threading.Lock()
        self._resources: dict[str, Any] = {}
        self.scratch = Path()

    def __enter__(self) -> Lab:
        self.scratch = Path(tempfile.mkdtemp(prefix="flashmark-faultlab-"))
        self._stack.callback(shutil.rmtree, self.scratch, True)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def resource(self, key: str, make: Callable[[], contextlib.AbstractContextManager[Any]]) -> Any:
        """What `make()` gives, made on first use and shared by the lab's cases, taken down
        when the lab closes (e.g. a user the race cases attack as)."""
        with self._lock:
            if key not in self._resources:
                self._resources[key] = self._stack.enter_context(make())
            return self._resources[key]

    @contextlib.contextmanager
    def device(self) -> Iterator[EmulatedDevice]:
        """An emulated device for one case at a time."""
        try:
            device = self._devices.get_nowait()
        except queue.Empty:
            with self._lock:
                device = self._stack.enter_context(EmulatedDevice(CARD, size_bytes=DEVICE_BYTES))
                self._made += 1
        try:
            yield device
        finally:
            self._devices.put(device)

    def run(
        self, selected: Sequence[c.Case], on_done: Callable[[Outcome], None] | None = None
    ) -> dict[str, Outcome]:
        """Run the cases, `workers` at a time; outcomes by case id."""
        outcomes: dict[str, Outcome] = {}

        def one(case: c.Case) -> Outcome:
            outcome = self.run_case(case)
            if on_done is not None:
                on_done(outcome)
            return outcome

        longest_first = sorted(selected, key=c.expected_seconds, reverse=True)
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            for outcome in pool.map(one, longest_first):
                outcomes[outcome.case_id] = outcome
        return outcomes

    def run_case(self, case: c.Case) -> Outcome:
        outcome = Outcome(case.id, case.category)
        started = time.monotonic()
        marker = uuid.uuid4().hex
        try:
            if isinstance(case, c.SignalCase):
                run_signal_case(self, case, marker, outcome)
            elif isinstance(case, c.StackCase):
                run_stack_case(self, case, marker, outcome)
            elif isinstance(case, c.DatabaseCase):
                run_database_case(self, case, marker, outcome)
            elif isinstance(case, c.PathCase):
                run_path_case(self, case, marker, outcome)
            elif hasattr(case, "run_in"):  # categories in files of their own (cases.py)
                case.run_in(self, marker, outcome)
            elif hasattr(case, "run"):  # the categories in modules of their own run themselves
                case.run(self, marker, outcome)
            else:
                raise TypeError(f"no way to run {case!r}")
        except Exception as error:  # the harness itself failed: say so, never hide it
            outcome.problems.append(f"harness error: {type(error).__name__}: {error}")
        finally:
            kill_case_processes(marker)
        outcome.seconds = time.monotonic() - started
        return outcome


class CaseFolder:
    """A case's private world on a device: PARENT/target (measured), PARENT sentinels, TMPDIR,
    XDG_DATA_HOME, a history path and a device lock folder among the harness's own logs (cases
    side by side whose targets share a disk, e.g. small filesystems on files under /tmp, must
    not refuse each other; any user may lock in it); removed afterwards."""

    def __init__(self, root: Path, marker: str, target_name: str = "target") -> None:
        self.root = root / f"case-{marker[:12]}"
        self.parent = self.root / "parent"
        self.target = self.parent / target_name
        self.tmpdir = self.root / "tmp"
        self.db = self.root / "db" / "history.sqlite3"
        self.logs = self.root / "logs"
        self.marker = marker
        self.locks = self.logs / "locks"
        for folder in (self.target, self.tmpdir, self.db.parent, self.locks, self.root / "xdg"):
            folder.mkdir(parents=True, exist_ok=True)
        self.locks.chmod(0o1777)

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            **os.environ,
            "TMPDIR": str(self.tmpdir),
            "FLASHMARK_DB": str(self.db),
            "XDG_DATA_HOME": str(self.root / "xdg"),
            LOCK_DIR_ENV: str(self.locks),
            MARKER_ENV: self.marker,
            "LC_ALL": "C.UTF-8",
        }
        env.pop("FLASHMARK_DEBUG", None)
        env.update(extra)
        return env

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)


def _start(argv: list[str], env: dict[str, str], logs: Path, cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=(logs / "stdout").open("wb"),
        stderr=(logs / "stderr").open("wb"),
    )


def _read(logs: Path, name: str) -> str:
    return (logs / name).read_bytes().decode("utf-8", "replace")


# -- signals ------------------------------------------------------------------------------------
def _signal_argv(case: c.SignalCase, folder: CaseFolder, device: EmulatedDevice) -> list[str]:
    json_flag = ["--json"] if case.as_json else []
    if case.command == "run":
        return flashmark(
            "run", str(folder.target), "--profile", case.profile, "--size", case.run_size,
            "--runtime", str(case.runtime_s), "--ramp", str(c.RUN_RAMP_S), *json_flag,
        )  # fmt: skip
    if case.command == "workload":
        return flashmark(
            "workload", "pkg-install", str(folder.target), "--scale", c.WORKLOAD_SCALE, *json_flag
        )
    return flashmark(
        "monitor", Path(device.device).name, *json_flag, "--", "sleep", str(c.MONITOR_SLEEP_S)
    )


class _Watcher:
    """Follows one flashmark process: which fio jobs it started, in order."""

    def __init__(self, process: subprocess.Popen[bytes], folder: CaseFolder) -> None:
        self.process = process
        self.folder = folder
        self.started = time.monotonic()
        self.fio_seen: list[int] = []
        self.fio_alive = False

    def poll(self) -> bool:
        """Update; False once the process has exited."""
        if self.process.poll() is not None:
            return False
        jobs = fio_mains(fio_jobs_of(self.process.pid))
        self.fio_alive = bool(jobs)
        for job in jobs:
            if job.pid not in self.fio_seen:
                self.fio_seen.append(job.pid)
        return True

    def anchored(self, case: c.SignalCase) -> bool:
        if case.phase == "startup":
            return True
        if case.phase == "prepare":
            return len(self.fio_seen) >= 1
        if case.phase.startswith("test-"):
            return len(self.fio_seen) >= 1 + int(case.phase.split("-")[1])
        if case.phase == "saving":
            return len(self.fio_seen) >= 1 + c.TESTS_IN_PROFILE[case.profile] and not (
                self.fio_alive
            )
        if case.command == "workload":
            return any(self.folder.target.glob("flashmark-workload-*"))
        # monitor: the monitored command runs
        try:
            children = psutil.Process(self.process.pid).children()
        except psutil.Error:
            return False
        return any(_name(child) == "sleep" for child in children)


def _deliver(case: c.SignalCase, process: subprocess.Popen[bytes]) -> str | None:
    """Send the case's signal now; the name of what was hit, or None if nothing was."""
    if process.poll() is not None:
        return None
    if case.signal == "KILL-fio":
        jobs = fio_jobs_of(process.pid)
        main = fio_mains(jobs)
        victims = {"main": main, "jobs": [p for p in jobs if p not in main], "all": jobs}[
            case.fio_victim
        ] or jobs
        hit = []
        for victim in victims:
            with contextlib.suppress(psutil.Error):
                if victim.status() != psutil.STATUS_ZOMBIE:
                    victim.send_signal(signal.SIGKILL)
                    hit.append(f"fio[{victim.pid}]")
        return ", ".join(hit) or None
    number = signal.SIGKILL if case.signal == "KILL" else SIGNAL_NUMBER[case.signal]
    try:
        os.kill(process.pid, number)
    except ProcessLookupError:
        return None
    return "flashmark"


def run_signal_case(lab: Lab, case: c.SignalCase, marker: str, outcome: Outcome) -> None:
    rng = random.Random(f"{lab.seed}/{case.id}")
    with lab.device() as device:
        assert device.mount_point is not None
        folder = CaseFolder(device.mount_point / "cases", marker)
        try:
            _signal_case_in(case, device, folder, rng, outcome)
        finally:
            kill_case_processes(marker)
            folder.remove()


def _signal_case_in(
    case: c.SignalCase,
    device: EmulatedDevice,
    folder: CaseFolder,
    rng: random.Random,
    outcome: Outcome,
) -> None:
    sentinels = {
        folder.target / "photo.jpg": None,
        folder.target / ".hidden": None,
        folder.parent / "notes": None,
    }
    for path in sentinels:
        write_sentinel(path, rng)
    before = {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in sentinels}
    env = folder.env()
    process = _start(device.command(_signal_argv(case, folder, device)), env, folder.logs,
                     folder.root)  # fmt: skip
    watcher = _Watcher(process, folder)
    fire_at: float | None = None
    hit: str | None = None
    deadline = watcher.started + _CASE_TIMEOUT_S
    while watcher.poll() and time.monotonic() < deadline:
        if fire_at is None and watcher.anchored(case):
            fire_at = time.monotonic() + case.delay_s
        if fire_at is not None and time.monotonic() >= fire_at:
            hit = _deliver(case, process)
            if hit is None and case.signal == "KILL-fio" and time.monotonic() < fire_at + 1:
                time.sleep(_POLL_S)  # between two fio jobs: the next one is about to start
                continue
            break
        time.sleep(_POLL_S)
    signalled_at = time.monotonic() - watcher.started
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        outcome.problems.append(
            f"still running 60 s after {case.signal} (to {hit}): killed; "
            f"{_tail(_read(folder.logs, 'stderr'))}"
        )
        kill_case_processes(folder.marker)
        process.wait(timeout=10)
    code = process.returncode
    stdout, stderr = _read(folder.logs, "stdout"), _read(folder.logs, "stderr")
    outcome.note = (
        f"exit {code}; {case.signal} to {hit} at {signalled_at:.2f} s"
        if hit
        else f"exit {code}; finished before the signal ({signalled_at:.2f} s)"
    )
    # Python's own start-up (site, .pth files) runs with its default SIGINT handler: no
    # flashmark code has run yet, so there is nothing flashmark could do or undo.
    in_python_startup = case.signal == "INT" and hit and interrupted_in_python_startup(stderr)
    if in_python_startup:
        outcome.note += " (in Python's start-up, before any flashmark code)"
        if code not in (1, -signal.SIGINT):
            outcome.problems.append(f"interrupted in Python's start-up, yet exit {code}")
    elif "Traceback" in stderr:
        outcome.problems.append(f"traceback on stderr: {_tail(stderr)}")
    if in_python_startup:
        pass  # judged above
    elif hit is None:
        if code != 0:
            outcome.problems.append(f"no signal was sent, yet exit {code}: {_tail(stderr)}")
    elif case.signal == "KILL":
        _after_kill(case, device, folder, outcome)
    elif case.signal == "KILL-fio":
        _judge_fio_killed(code, stderr, outcome)
    else:
        _judge_handled(case, code, stdout, stderr, outcome)

    if case.signal != "KILL" or hit is None:
        left = wait_for_no_processes(folder.marker, 2.0)
        if left:
            outcome.problems.append(f"processes left running after exit: {describe(left)}")
    found = leftovers(folder.target, folder.tmpdir)
    if found:
        outcome.problems.append(f"left behind: {', '.join(found)}")
    extra = sorted(p.name for p in folder.target.iterdir() if p not in sentinels)
    if extra:
        outcome.problems.append(f"new entries in the target folder: {extra}")
    for path in sentinels:
        if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != before[str(path)]:
            outcome.problems.append(f"sentinel {path.name} was changed or removed")


_FLASHMARK_FRAME = re.compile(r'File "[^"]*/flashmark/')


def interrupted_in_python_startup(stderr: str) -> bool:
    """A KeyboardInterrupt traceback without a single frame of flashmark's code: the signal
    landed while the interpreter was still starting (site, .pth files), before `flashmark`'s
    package was imported, where only Python's default handler exists."""
    return (
        "KeyboardInterrupt" in stderr
        and "Traceback" in stderr
        and not _FLASHMARK_FRAME.search(stderr)
    )


def _judge_handled(
    case: c.SignalCase, code: int, stdout: str, stderr: str, outcome: Outcome
) -> None:
    wanted = EXIT_FOR[case.signal]
    if code == wanted:
        lines = [line for line in stderr.splitlines() if line.strip()]
        if not lines or not lines[-1].startswith("flashmark:"):
            outcome.problems.append(
                f"exit {code} but the last stderr line is not flashmark's one-line message: "
                f"{_tail(stderr)}"
            )
        return
    if code == -SIGNAL_NUMBER[case.signal] and not stderr.strip():
        return  # landed before Python installed its handlers: nothing had been done yet
    if code == 0 and _complete_output(case, stdout):
        return  # the signal lost the race against the end of the command
    outcome.problems.append(f"SIG{case.signal} gave exit {code}, not {wanted}: {_tail(stderr)}")


def _complete_output(case: c.SignalCase, stdout: str) -> bool:
    if not stdout.strip():
        return False
    if case.as_json:
        try:
            json.loads(stdout)
        except ValueError:
            return False
    return True


def _judge_fio_killed(code: int, stderr: str, outcome: Outcome) -> None:
    if code not in (1, 5):
        outcome.problems.append(f"fio killed: exit {code}, not 1 or 5: {_tail(stderr)}")
        return
    errors = error_lines(stderr)
    if len(errors) != 1 or "fio" not in errors[0]:
        outcome.problems.append(f"fio killed: expected one 'fio failed' line: {_tail(stderr)}")
    elif "internal error" in errors[0]:
        outcome.problems.append(f"fio killed: reported as an internal error: {errors[0]!r}")


def _after_kill(
    case: c.SignalCase, device: EmulatedDevice, folder: CaseFolder, outcome: Outcome
) -> None:
    """SIGKILL cannot be handled: fio must die with flashmark, and `flashmark clean` must find
    and remove what the dead run left."""
    fio_left = wait_for_no_processes(folder.marker, 3.0, names={"fio"})
    if fio_left:
        outcome.problems.append(
            f"fio still running 3 s after flashmark was killed: {describe(fio_left)}"
        )
    others = wait_for_no_processes(folder.marker, 0.0, names={"flashmark"})
    if others:
        outcome.problems.append(f"flashmark processes left after SIGKILL: {describe(others)}")
    kill_case_processes(folder.marker)  # e.g. monitor's `sleep`, which is not ours to judge
    clean = subprocess.run(
        device.command(flashmark("clean", str(folder.target))),
        env=folder.env(),
        cwd=folder.root,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    if clean.returncode != 0 or "Traceback" in clean.stderr:
        outcome.problems.append(
            f"`flashmark clean TARGET` after SIGKILL: exit {clean.returncode}: "
            f"{_tail(clean.stderr)}"
        )
    outcome.note += f"; clean exit {clean.returncode}"


# -- stacked devices ----------------------------------------------------------------------------
class _Stack:
    """Loop devices, mounts and swap for one case; always taken down in reverse order."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.exit = contextlib.ExitStack()
        self.loops: list[str] = []
        self.mounts: list[Path] = []

    def file(self, name: str, size: int = 64 * 2**20) -> Path:
        path = self.scratch / name
        with path.open("wb") as handle:
            handle.truncate(size)
        return path

    def loop(self, backing: Path | str, partitions: bool = False) -> str:
        scan = ["--partscan"] if partitions else []
        argv = ["losetup", "--find", "--show", *scan, str(backing)]
        node = _sh(argv).strip()
        self.exit.callback(_sh_quiet, ["losetup", "--detach", node])
        self.loops.append(node)
        return node

    def ext4_mounted(self, node: str, rng: random.Random) -> Path:
        # No lazy initialisation: ext4lazyinit writing inode tables in the background would
        # change the device while the case compares its bytes.
        _sh(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", node])
        mount_point = self.scratch / f"mnt{len(self.mounts)}"
        mount_point.mkdir()
        # noatime: reading the sentinels back must not dirty inodes (a journal commit would
        # then change the device's bytes that the case compares).
        _sh(["mount", "-o", "noatime", node, str(mount_point)])
        self.exit.callback(_umount, mount_point)
        self.mounts.append(mount_point)
        for number in range(3):
            write_sentinel(mount_point / f"sentinel-{number}", rng)
        _sh(["sync"])
        return mount_point

    def swap(self, node: str) -> None:
        _sh(["mkswap", node])
        _sh(["swapon", node])
        self.exit.callback(_sh_quiet, ["swapoff", node])

    def state(self) -> dict[str, str]:
        """Digests of the mounted files and of the first 8 MiB of every loop device."""
        state = {}
        for mount_point in self.mounts:
            for key, digest in snapshot(mount_point).items():
                state[f"{mount_point.name}/{key}"] = digest
        for node in self.loops:
            with open(node, "rb") as handle:
                state[node] = hashlib.sha256(handle.read(8 * 2**20)).hexdigest()
        return state


def _sh(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def _sh_quiet(argv: list[str]) -> None:
    with contextlib.suppress(RuntimeError, OSError, subprocess.TimeoutExpired):
        _sh(argv)


def _umount(mount_point: Path) -> None:
    try:
        _sh(["umount", str(mount_point)])
    except RuntimeError:
        _sh_quiet(["umount", "--lazy", str(mount_point)])


def _build_stack(name: str, stack: _Stack, rng: random.Random) -> str:
    """Build the named stack; return the device node to run on."""
    if name == "loop-backed-by-a-mounted-loop":
        below = stack.loop(stack.file("a.img"))
        stack.ext4_mounted(below, rng)
        return stack.loop(below)
    if name == "loop-backed-by-a-loop-whose-partition-is-mounted":
        image = stack.file("a.img")
        _sh_input(["sfdisk", "--quiet", str(image)], "label: dos\n2048,,L\n")
        below = stack.loop(image, partitions=True)
        partition = f"{below}p1"
        for attempt in range(50):  # the kernel adds the partition's node asynchronously
            if Path(partition).exists():
                break
            if attempt == 10:  # some kernels ignore --partscan on loops (max_part=0)
                _sh(["partx", "--add", below])
            time.sleep(0.1)
        stack.ext4_mounted(partition, rng)
        return stack.loop(below)
    if name == "loop-sharing-its-backing-file-with-a-mounted-loop":
        image = stack.file("a.img")
        stack.ext4_mounted(stack.loop(image), rng)
        return stack.loop(image)
    if name == "loop-backed-by-a-loop-with-swap-on-it":
        below = stack.loop(stack.file("a.img"))
        stack.swap(below)
        return stack.loop(below)
    if name == "loop-two-levels-above-a-mounted-loop":
        bottom = stack.loop(stack.file("a.img"))
        stack.ext4_mounted(bottom, rng)
        middle = stack.loop(bottom)
        return stack.loop(middle)
    if name == "loop-under-a-mounted-loop":
        target = stack.loop(stack.file("a.img"))
        above = stack.loop(target)
        stack.ext4_mounted(above, rng)
        return target
    if name == "free-loop-is-accepted":
        return stack.loop(stack.file("a.img"))
    raise ValueError(f"unknown stack {name!r}")


def _sh_input(argv: list[str], text: str) -> None:
    done = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")


def run_stack_case(lab: Lab, case: c.StackCase, marker: str, outcome: Outcome) -> None:
    rng = random.Random(f"{lab.seed}/{case.id}")
    scratch = Path(tempfile.mkdtemp(prefix="stack-", dir=lab.scratch))
    folder = CaseFolder(scratch, marker)
    stack = _Stack(scratch)
    with stack.exit:
        stack.exit.callback(shutil.rmtree, scratch, True)
        stack.exit.callback(kill_case_processes, marker)
        node = _build_stack(case.name, stack, rng)
        before = stack.state()
        argv = flashmark(
            "run", node, "--destructive", "--yes", "--no-save", "--profile", "a1",
            "--size", c.RUN_SIZE, "--runtime", str(c.RUN_RUNTIME_S), "--ramp", str(c.RUN_RAMP_S),
        )  # fmt: skip
        done = subprocess.run(
            argv,
            env=folder.env(),
            cwd=folder.root,
            capture_output=True,
            text=True,
            timeout=_CASE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        outcome.note = f"exit {done.returncode}"
        if case.refused:
            if done.returncode != 4:
                outcome.problems.append(
                    f"--destructive on {node} ({case.name}) gave exit {done.returncode}, "
                    f"not 4 (refused): {_tail(done.stderr)}"
                )
            else:
                outcome.problems += one_error_line(done.stderr, "refusal")
                if len([line for line in done.stderr.splitlines() if line.strip()]) != 1:
                    outcome.problems.append(f"refusal is not one line: {_tail(done.stderr)}")
            changes = snapshot_changes(before, stack.state())
            if changes:
                outcome.problems.append(f"data below or beside {node} changed: {changes}")
        elif done.returncode != 0 or "Traceback" in done.stderr:
            outcome.problems.append(
                f"a free loop device was not measured: exit {done.returncode}: {_tail(done.stderr)}"
            )
        left = wait_for_no_processes(marker, 2.0)
        if left:
            outcome.problems.append(f"processes left running: {describe(left)}")


# -- database faults ----------------------------------------------------------------------------
_FIO_SPY = """#!/bin/sh
# Records every fio start (the fault tier checks none happens before the history is checked).
printf '%s\\n' "$*" >> "$FLASHMARK_FAULT_FIO_LOG"
exec {fio} "$@"
"""


def _root_device_name() -> str:
    device = os.stat("/").st_dev
    path = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
    return path.resolve().name if path.exists() else "loop0"


def _valid_history(path: Path, env: dict[str, str]) -> None:
    """A history made by the flashmark under test through its CLI: a saved monitor recording."""
    argv = flashmark("monitor", _root_device_name(), "--db", str(path), "--", "true")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0 or not path.exists():
        raise RuntimeError(f"could not make a history with {argv[3:]}: {_tail(done.stderr)}")


@contextlib.contextmanager
def _database_fault(name: str, folder: CaseFolder, env: dict[str, str]) -> Iterator[Path]:
    """Make the named fault; yield the --db path to use; undo everything afterwards."""
    db = folder.db
    with contextlib.ExitStack() as undo:
        if name == "garbage-file":
            db.write_bytes(b"this is not a database\n" + bytes(range(256)) * 16)
        elif name == "locked-by-another-connection":
            _valid_history(db, env)
            holder = subprocess.Popen(
                [sys.executable, "-c",
                 "import sqlite3, sys, time\n"
                 "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                 "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(600)",
                 str(db)],
                env=env, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            undo.callback(holder.wait, 10)
            undo.callback(holder.kill)
            assert holder.stdout is not None
            if holder.stdout.readline().strip() != "locked":
                raise RuntimeError("could not lock the history")
        elif name == "read-only-immutable-file":
            _valid_history(db, env)
            _sh(["chattr", "+i", str(db)])
            undo.callback(_sh_quiet, ["chattr", "-i", str(db)])
        elif name == "read-only-bind-mount":
            _valid_history(db, env)
            _sh(["mount", "--bind", str(db.parent), str(db.parent)])
            undo.callback(_umount, db.parent)
            _sh(["mount", "-o", "remount,bind,ro", str(db.parent)])
        elif name == "newer-schema":
            _valid_history(db, env)
            with contextlib.closing(sqlite3.connect(db)) as connection, connection:
                connection.execute(
                    "INSERT INTO schema_migrations (name) VALUES ('9999_from_a_newer_flashmark')"
                )
        elif name == "missing-folder-for-explicit-db":
            db = folder.root / "no" / "such" / "folder" / "history.sqlite3"
        else:
            raise ValueError(f"unknown database fault {name!r}")
        yield db


def run_database_case(lab: Lab, case: c.DatabaseCase, marker: str, outcome: Outcome) -> None:
    if case.command != "run":
        _read_only_command_case(lab, case, marker, outcome)
        return
    with lab.device() as device:
        assert device.mount_point is not None
        folder = CaseFolder(device.mount_point / "cases", marker)
        try:
            _database_run(case, device, folder, outcome)
        finally:
            kill_case_processes(marker)
            folder.remove()


def _database_run(
    case: c.DatabaseCase, device: EmulatedDevice, folder: CaseFolder, outcome: Outcome
) -> None:
    spy_dir = folder.root / "bin"
    spy_dir.mkdir()
    fio = shutil.which("fio")
    assert fio is not None
    (spy_dir / "fio").write_text(_FIO_SPY.format(fio=fio))
    (spy_dir / "fio").chmod(0o755)
    fio_log = folder.logs / "fio-starts"
    env = folder.env(
        PATH=f"{spy_dir}:{os.environ.get('PATH', '')}", FLASHMARK_FAULT_FIO_LOG=str(fio_log)
    )
    with _database_fault(case.name, folder, env) as db:
        db_before = snapshot(folder.db.parent)
        target_before = folder.target.stat().st_mtime_ns
        argv = flashmark(
            "run", str(folder.target), "--db", str(db), "--profile", "a1", "--size", c.RUN_SIZE,
            "--runtime", str(c.RUN_RUNTIME_S), "--ramp", str(c.RUN_RAMP_S),
        )  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(
            device.command(argv),
            env=env,
            cwd=folder.root,
            capture_output=True,
            text=True,
            timeout=_CASE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        outcome.note = f"exit {done.returncode} after {time.monotonic() - started:.1f} s"
        starts = fio_log.read_text().splitlines() if fio_log.exists() else []
        measured = [line for line in starts if "--version" not in line]
        if done.returncode != HISTORY_EXIT:
            outcome.problems.append(
                f"exit {done.returncode}, not {HISTORY_EXIT} (history error): {_tail(done.stderr)}"
            )
        else:
            outcome.problems += one_error_line(done.stderr, "history error")
        if measured:
            outcome.problems.append(
                f"fio ran {len(measured)} job(s) before the history was found unusable "
                "(the measurement was thrown away)"
            )
        if folder.target.stat().st_mtime_ns != target_before or any(folder.target.iterdir()):
            outcome.problems.append("a test file was created in the target before the check")
        changes = snapshot_changes(db_before, snapshot(folder.db.parent))
        if changes:
            outcome.problems.append(f"the history folder changed: {changes}")
        if case.name == "missing-folder-for-explicit-db" and (folder.root / "no").exists():
            outcome.problems.append("folders were created for the missing --db path")


def _read_only_command_case(lab: Lab, case: c.DatabaseCase, marker: str, outcome: Outcome) -> None:
    folder = CaseFolder(lab.scratch, marker)
    try:
        missing = folder.root / "missing" / "history.sqlite3"
        env = folder.env()
        if case.command == "history":
            argv = flashmark("history", "--db", str(missing))
        elif case.command == "show":
            argv = flashmark("show", "1")
            env["FLASHMARK_DB"] = str(missing)
        else:  # the default place: $XDG_DATA_HOME/flashmark/history.sqlite3
            argv = flashmark("history")
            env.pop("FLASHMARK_DB")
        before = snapshot(folder.root)
        done = subprocess.run(argv, env=env, cwd=folder.root, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
        outcome.note = f"exit {done.returncode}"
        changes = snapshot_changes(before, snapshot(folder.root))
        # the logs folder is the harness's own
        changes = [change for change in changes if "'logs/" not in change]
        if changes:
            outcome.problems.append(f"`{' '.join(argv[3:])}` created: {changes}")
        if done.returncode not in (0, 2, HISTORY_EXIT):
            outcome.problems.append(f"exit {done.returncode}: {_tail(done.stderr)}")
        elif done.returncode != 0:
            outcome.problems += one_error_line(done.stderr, "missing history")
        elif "Traceback" in done.stderr:
            outcome.problems.append(f"traceback: {_tail(done.stderr)}")
    finally:
        folder.remove()


# -- hostile paths ------------------------------------------------------------------------------
def run_path_case(lab: Lab, case: c.PathCase, marker: str, outcome: Outcome) -> None:
    rng = random.Random(f"{lab.seed}/{case.id}")
    with lab.device() as device:
        assert device.mount_point is not None
        folder = CaseFolder(device.mount_point / "cases", marker, target_name=case.name)
        try:
            _path_case_in(case, device, folder, rng, outcome)
        finally:
            kill_case_processes(marker)
            folder.remove()


def _path_case_in(
    case: c.PathCase,
    device: EmulatedDevice,
    folder: CaseFolder,
    rng: random.Random,
    outcome: Outcome,
) -> None:
    for decoy in case.decoys:
        write_sentinel(folder.parent / decoy, rng)
    write_sentinel(folder.target / "inside", rng)
    write_sentinel(folder.root / "above", rng)
    before = snapshot(folder.root)
    env = folder.env(X="victim")
    argv = flashmark(
        "run", str(folder.target), "--profile", "a1", "--size", c.RUN_SIZE, "--runtime",
        str(c.RUN_RUNTIME_S), "--ramp", str(c.RUN_RAMP_S),
    )  # fmt: skip
    done = subprocess.run(device.command(argv), env=env, cwd=folder.root, capture_output=True,
                          timeout=_CASE_TIMEOUT_S, stdin=subprocess.DEVNULL)  # fmt: skip
    stderr = done.stderr.decode("utf-8", "replace")
    outcome.note = f"exit {done.returncode}"
    if done.returncode in (2, 4):  # a clear refusal of a name it cannot support
        outcome.problems += one_error_line(stderr, "refusal")
        outcome.note += " (refused)"
    elif done.returncode != 0:
        outcome.problems.append(f"run {case.name!r}: exit {done.returncode}: {_tail(stderr)}")
    elif "Traceback" in stderr:
        outcome.problems.append(f"traceback: {_tail(stderr)}")
    left = wait_for_no_processes(folder.marker, 2.0)
    if left:
        outcome.problems.append(f"processes left running: {describe(left)}")
    after = snapshot(folder.root)
    changes = [
        change
        for change in snapshot_changes(before, after)
        # the harness's own logs and the history this run saved are expected
        if not re.search(r"'(logs|db|xdg)(/|')", change)
    ]
    if changes:
        outcome.problems.append(f"files beside, above or in the target changed: {changes}")
    found = leftovers(folder.target, folder.tmpdir)
    if found:
        outcome.problems.append(f"left behind: {', '.join(found)}")


def as_table(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """Per category: tried, held, and the failures."""
    rows = []
    for category in c.CATEGORIES:
        mine = [o for o in outcomes if o.category == category]
        if not mine:
            continue
        rows.append(
            {
                "category": category,
                "tried": len(mine),
                "held": sum(o.held for o in mine),
                "failures": [o for o in mine if not o.held],
                "seconds": sum(o.seconds for o in mine),
            }
        )
    return rows
