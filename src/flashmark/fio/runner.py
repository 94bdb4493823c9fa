"""The only place that runs fio. Everything else gets a FioRunner: `FioProcessRunner` runs the
binary, `ReplayRunner` returns recorded outputs so the whole CLI is testable without fio.

Nothing fio starts outlives a run (`_Supervisor`): jobs run as threads of one process
(`thread=1`: fio 3.33 forks job processes into sessions of their own) in a session signalled
as a whole; `setpriv --pdeathsig KILL` (setpriv(1); preexec_fn is unsafe with threads) kills
fio with flashmark; every exit path stops and reaps it before the test file is removed. In a
folder, fio runs in it through its descriptor on a relative name that no rename can redirect.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import psutil

from flashmark.errors import (
    EnvironmentProblem,
    FioFailed,
    FioNotFound,
    FioTooOld,
    Interrupted,
    add_outcome,
)
from flashmark.fio.job import FioJob, is_fio_literal_folder
from flashmark.system.signals import signals_held
from flashmark.system.watchdog import DeviceHung, StallWatch

# Needed: JSON bw_bytes / *_ns fields (fio 3.0) and lat_percentiles honoured in JSON output
# (fixed after fio-3.10, axboe/fio issue #691).
MINIMUM_FIO_VERSION = (3, 11)
# fio ends its jobs and writes its output on SIGTERM; after this long it gets SIGKILL.
_TERMINATE_GRACE_S = 10.0
# SIGKILL cannot be caught, but a process in uninterruptible I/O (a device that stopped
# answering) only dies when that I/O returns.
_KILL_GRACE_S = 30.0
# After the device stopped answering: how long a killed fio is waited for before it is
# reported as stuck in uninterruptible I/O and left (flashmark.system.watchdog).
_HUNG_GRACE_S = 3.0
_POLL_S = 0.1
_FAMILY_POLL_S = 1.0
# Temporary folders tried, in order, when TMPDIR's path is not literal to fio's parser.
_FALLBACK_TEMP_FOLDERS = ("/tmp", "/var/tmp")

ProgressCallback = Callable[[float | None, str], None]
"""Called with (fraction done 0..1 or None when unknown, fio's status text)."""


@dataclass(frozen=True)
class FioOutput:
    job_name: str
    argv: tuple[str, ...]
    returncode: int
    json_text: str  # the content of fio's --output file ("" if fio wrote none)
    stderr: str
    logs: Mapping[str, str]  # fio log file name (NAME_iops.1.log) -> content
    elapsed_s: float
    # fio's per-I/O total-latency logs (NAME_lat.1.log -> content), for jobs that write them
    # (write_lat_log: the sustained write); empty otherwise and in older recordings.
    latency_logs: Mapping[str, str] = field(default_factory=dict)


class FioRunner(Protocol):
    @property
    def log_folder(self) -> str:
        """Where fio writes its per-I/O logs: the folder jobs name in write_iops_log."""
        ...

    def version(self) -> str: ...

    def run(
        self,
        job: FioJob,
        on_progress: ProgressCallback | None = None,
        *,
        folder_fd: int | None = None,
        stall: StallWatch | None = None,
    ) -> FioOutput:
        """Run one job; with `folder_fd`, fio's working directory is that open folder; with
        `stall`, DeviceHung when the device stops answering (flashmark.system.watchdog)."""
        ...


class DelegatingRunner:
    """A FioRunner that hands everything to `runner`: the base of wrappers that add to a run by
    overriding `watch` (the stall watch a job runs under) or `ran` (each output, as it returns)."""

    def __init__(self, runner: FioRunner) -> None:
        self.runner = runner

    @property
    def log_folder(self) -> str:
        return self.runner.log_folder

    def version(self) -> str:
        return self.runner.version()

    def run(
        self,
        job: FioJob,
        on_progress: ProgressCallback | None = None,
        *,
        folder_fd: int | None = None,
        stall: StallWatch | None = None,
    ) -> FioOutput:
        stall = self.watch(job, stall)
        output = self.runner.run(job, on_progress, folder_fd=folder_fd, stall=stall)
        self.ran(output)
        return output

    def watch(self, job: FioJob, stall: StallWatch | None) -> StallWatch | None:
        return stall

    def ran(self, output: FioOutput) -> None:
        pass


_VERSION_RE = re.compile(r"fio-(\d+)\.(\d+)")


def check_version(version_text: str) -> str:
    """Return the version string if fio is new enough, else raise FioTooOld."""
    match = _VERSION_RE.search(version_text)
    if match is None:
        raise FioTooOld(
            f"cannot read fio's version from {version_text!r}; flashmark needs "
            f"fio >= {'.'.join(map(str, MINIMUM_FIO_VERSION))}"
        )
    found = (int(match.group(1)), int(match.group(2)))
    if found < MINIMUM_FIO_VERSION:
        wanted = ".".join(map(str, MINIMUM_FIO_VERSION))
        raise FioTooOld(
            f"fio {match.group(0)} is too old: flashmark needs fio >= {wanted} "
            "(upgrade it, e.g. `sudo apt-get install fio` on a newer release)"
        )
    return match.group(0)


# fio's status line, e.g. "Jobs: 1 (f=1): [r(1)][45.0%][r=6006KiB/s][r=1501 IOPS][eta 00m:03s]".
# Only used to move a progress bar; results never come from it.
_ETA_RE = re.compile(r"\]\[(\d+(?:\.\d+)?)%\]((?:\[[^\]]*\])*?)\[eta [^\]]*\]")


def fio_work_parent(tmpdir: str | None = None) -> str:
    """A folder to create fio's work folder in: the temporary folder (TMPDIR), else the first
    of /tmp, /var/tmp, that fio's job parser reads literally (write_iops_log names it,
    fio/jobs.py: a TMPDIR like `/tmp/a#b` would be cut at the '#') and that no other user can
    change (`owned_by_us_or_root`): fio writes its logs and output there by path, and a TMPDIR
    in another user's home (`sudo -E`) would let that user swap the work folder for a link to
    a file of root's. Returned without symlinks (os.path.realpath), as checked."""
    chosen = tmpdir if tmpdir is not None else tempfile.gettempdir()
    for candidate in (chosen, *_FALLBACK_TEMP_FOLDERS):
        real = os.path.realpath(candidate)
        if (
            is_fio_literal_folder(real)
            and os.path.isdir(real)
            and os.access(real, os.W_OK | os.X_OK)
            and owned_by_us_or_root(real)
        ):
            return real
    raise EnvironmentProblem(
        f"no temporary folder fio can use: {chosen!r} holds characters fio's job files "
        "interpret or can be changed by another user, and neither /tmp nor /var/tmp is "
        "usable; set TMPDIR to a writable folder of yours named with letters, digits and "
        ". _ + - only"
    )


def owned_by_us_or_root(path: str) -> bool:
    """True when no user but root and this process's effective user can rename or replace
    anything on the way to `path` (an absolute path without symlinks): each folder from / down
    is owned by one of them and writable by no one else, or sticky (sticky folders let only an
    entry's owner rename or remove it, chmod(2) "S_ISVTX"), as /tmp is."""
    trusted = {0, os.geteuid()}
    parts = Path(path).relative_to("/").parts
    for depth in range(len(parts) + 1):
        current = Path("/", *parts[:depth])
        try:
            status = os.lstat(current)
        except OSError:
            return False
        if not stat.S_ISDIR(status.st_mode) or status.st_uid not in trusted:
            return False
        if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not status.st_mode & stat.S_ISVTX:
            return False
    return True


class FioProcessRunner:
    """Runs the fio binary with its job files, output and logs in `workdir`."""

    def __init__(self, workdir: Path, executable: str = "fio") -> None:
        if not is_fio_literal_folder(str(workdir)):
            raise EnvironmentProblem(
                f"fio's work folder {str(workdir)!r} holds characters fio's job files "
                "interpret; create it under fio_work_parent() (set TMPDIR to a plain path)"
            )
        self.workdir = workdir
        self.executable = executable
        self._version: str | None = None

    @property
    def log_folder(self) -> str:
        return str(self.workdir)

    def _resolve(self) -> str:
        path = shutil.which(self.executable)
        if path is None:
            raise FioNotFound(
                f"fio not found (looked for {self.executable!r} on PATH): install it with "
                "`sudo apt-get install fio` (Debian, Ubuntu, Raspberry Pi OS, Armbian)"
            )
        return path

    def version(self) -> str:
        if self._version is None:
            completed = subprocess.run(
                [self._resolve(), "--version"],
                capture_output=True,
                text=True,
                timeout=30,
                env=_fio_environment(),
            )
            self._version = check_version(completed.stdout + completed.stderr)
        return self._version

    def run(
        self,
        job: FioJob,
        on_progress: ProgressCallback | None = None,
        *,
        folder_fd: int | None = None,
        stall: StallWatch | None = None,
    ) -> FioOutput:
        # Job names are flashmark's test names, so these are generated paths in the work folder.
        job_path = self.workdir / f"{job.name}.fio"
        output_path = self.workdir / f"{job.name}.json"
        job_path.write_text(job.text)
        output_path.unlink(missing_ok=True)
        for stale in self.workdir.glob(f"{job.name}_*.log"):
            stale.unlink()
        argv = [
            self._resolve(),
            str(job_path),
            "--output-format=json",
            f"--output={output_path}",
            "--eta=always",
            "--eta-newline=1",
        ]
        if job.readonly:
            argv.append("--readonly")

        started = time.monotonic()
        supervisor: _Supervisor | None = None
        readers: list[threading.Thread] = []
        stderr_chunks: list[bytes] = []
        try:
            # A signal between starting fio and handing it to the supervisor would leave fio
            # without an owner: it is raised once the supervisor has it and its readers run.
            with signals_held():
                # The forked child changes into its copy of the descriptor before it runs fio:
                # the folder that was opened and checked, whatever its path names now (proc(5),
                # /proc/[pid]/fd). pass_fds keeps the descriptor open in the child until then.
                process = subprocess.Popen(
                    [*parent_death_prefix(), *argv],
                    cwd=f"/proc/self/fd/{folder_fd}" if folder_fd is not None else self.workdir,
                    pass_fds=(folder_fd,) if folder_fd is not None else (),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    stdin=subprocess.DEVNULL,
                    env=_fio_environment(),
                    start_new_session=True,
                )
                supervisor = _Supervisor(process)
                # Held too: the `finally` joins every reader, and a thread cut off before it
                # started cannot be joined (RuntimeError).
                readers = [
                    threading.Thread(
                        target=_follow_status, args=(process, on_progress, stall), daemon=True
                    ),
                    threading.Thread(
                        target=_collect, args=(process.stderr, stderr_chunks), daemon=True
                    ),
                ]
                for reader in readers:
                    reader.start()
            supervisor.wait(job.timeout_s, stall)
        except DeviceHung as hung:
            # Killed at once, not waited for: a process in uninterruptible I/O ends only when
            # the device answers (flashmark.system.watchdog).
            assert supervisor is not None
            add_outcome(hung, supervisor.end(hung=True))
            raise
        finally:
            if supervisor is not None:
                supervisor.end()
            for reader in readers:
                reader.join(timeout=0.1 if supervisor and supervisor.stuck else 5)
        elapsed = time.monotonic() - started
        returncode = process.returncode
        assert returncode is not None  # reaped by supervisor.end()

        logs = {
            path.name: path.read_text()
            for path in sorted(self.workdir.glob(f"{job.name}_iops*.log"))
        }
        latency_logs = {
            path.name: path.read_text()
            for path in sorted(self.workdir.glob(f"{job.name}_lat.*.log"))
        }
        # Read, they are not needed on disk: the temporary folder holds one job's logs at a
        # time (flashmark.bench.preflight checks room for that much).
        for path in self.workdir.glob(f"{job.name}_*.log"):
            path.unlink(missing_ok=True)
        return FioOutput(
            job_name=job.name,
            argv=tuple(argv),
            returncode=returncode,
            json_text=output_path.read_text() if output_path.exists() else "",
            stderr=b"".join(stderr_chunks).decode("utf-8", "replace"),
            logs=logs,
            elapsed_s=elapsed,
            latency_logs=latency_logs,
        )


def _fio_environment() -> dict[str, str]:
    return {**os.environ, "LC_ALL": "C"}


@functools.cache
def parent_death_prefix() -> tuple[str, ...]:
    """`setpriv --pdeathsig KILL --` when this setpriv has the option (util-linux >= 2.33):
    the kernel then sends fio SIGKILL when the thread that started it dies (prctl(2),
    PR_SET_PDEATHSIG; kept across execve). fio is started and waited for by the same thread,
    which so outlives it. (A flashmark killed in the millisecond before setpriv sets the signal
    leaves fio to die of SIGPIPE at its next status line, on pipes nobody reads.) Without
    setpriv fio runs bare, and that SIGPIPE is what stops it."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return ()
    prefix = (setpriv, "--pdeathsig", "KILL", "--")
    try:
        works = subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        works = False
    return prefix if works else ()


class _Supervisor:
    """Waits for fio, and ends it on every path: nothing of it outlives `end()`.

    fio's exit is watched with waitid(WNOWAIT) (waitid(2)), which leaves it unreaped: while the
    exited leader is a zombie, its process group id cannot be taken by a new process, so
    signalling the group afterwards can only reach what fio left in it. Anything fio forked
    that left the group (fio 3.33 gives forked jobs their own sessions; with thread=1 there
    should be none) is followed with psutil while fio runs.
    """

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.family: dict[int, psutil.Process] = {}
        self._family_seen = 0.0
        self.stuck: list[int] = []  # pids left in uninterruptible I/O after a hang
        # Readable once fio exits, without reaping it: the wait returns then, not at its next
        # poll (50 ms a test on average). None where the kernel has no pidfd (before 5.3).
        self._exit_fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self._exit_fd = os.pidfd_open(process.pid)

    def wait(self, timeout_s: float, stall: StallWatch | None = None) -> None:
        """Until fio exits (left unreaped); FioFailed after `timeout_s`, DeviceHung when
        `stall` sees no progress for its bound (end() stops it)."""
        deadline = time.monotonic() + timeout_s
        while not self._exited():
            now = time.monotonic()
            if now > deadline:
                raise FioFailed(f"fio did not finish within {timeout_s:.0f} s and was stopped")
            if stall is not None:
                stall.check()
            if now - self._family_seen >= _FAMILY_POLL_S:
                self._note_family()
                self._family_seen = now
            self._pause()

    def _pause(self) -> None:
        """_POLL_S, or less when fio exits meanwhile."""
        if self._exit_fd is None:
            time.sleep(_POLL_S)
        else:
            select.select([self._exit_fd], [], [], _POLL_S)

    def end(self, *, hung: bool = False) -> str:
        """Stop fio if it still runs, kill what is left of it, and reap it; what became of it, for
        the message. `hung`: the device stopped answering, so fio is given only `_HUNG_GRACE_S`;
        what is still in uninterruptible I/O then is reported with its pid and left to the kernel.
        A signal arriving meanwhile restarts the cleanup, and the first one is raised after it."""
        try:
            return self._end(hung=hung)
        finally:
            if self._exit_fd is not None:
                os.close(self._exit_fd)
                self._exit_fd = None

    def _end(self, *, hung: bool) -> str:
        if hung:
            return self._abandon()
        pending: BaseException | None = None
        for _attempt in range(5):
            try:
                self._end_once()
                break
            except (Interrupted, KeyboardInterrupt) as error:
                if pending is None:
                    pending = error
        if pending is not None:
            raise pending
        return "fio was stopped"

    def _abandon(self) -> str:
        if self.process.returncode is not None or self.stuck:
            return "fio was stopped"
        self._note_family()
        self._signal_group(signal.SIGKILL)
        _kill_all(self.family.values(), wait_s=0)
        if self._await_exit(_HUNG_GRACE_S):
            self._signal_group(signal.SIGKILL)
            self.process.wait()
            return "fio was stopped"
        self.stuck = [self.process.pid, *self.family]
        stuck = ", ".join(f"pid {pid}" for pid in self.stuck)
        return (
            f"fio ({stuck}) is stuck in uninterruptible I/O on the device (state D) and was "
            "left to end when the device answers or is removed"
        )

    def _end_once(self) -> None:
        if self.process.returncode is not None or self.stuck:
            return  # reaped: done before; or left in uninterruptible I/O
        if not self._exited():
            self._note_family()
            self._signal_group(signal.SIGTERM)
            if not self._await_exit(_TERMINATE_GRACE_S):
                self._signal_group(signal.SIGKILL)
                if not self._await_exit(_KILL_GRACE_S):
                    raise FioFailed(
                        f"fio (pid {self.process.pid}) did not end {_KILL_GRACE_S:.0f} s after "
                        "SIGKILL: it is stuck in I/O on the device"
                    )
        # The leader has exited and is not reaped yet: its group id still names fio's group,
        # so this reaches whatever fio left in it, and nothing else.
        self._signal_group(signal.SIGKILL)
        _kill_all(self.family.values())
        self.process.wait()

    def _exited(self) -> bool:
        if self.process.returncode is not None:
            return True
        try:
            status = os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # already reaped elsewhere
            return True
        return status is not None

    def _await_exit(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not self._exited():
            if time.monotonic() > deadline:
                return False
            self._pause()
        return True

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def _note_family(self) -> None:
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.process.pid).children(recursive=True):
                self.family.setdefault(child.pid, child)


def _kill_all(processes: Iterable[psutil.Process], wait_s: float = _TERMINATE_GRACE_S) -> None:
    """SIGKILL each process that still runs and wait for it up to `wait_s`; psutil refuses to
    signal a pid that now names another process (it compares creation times)."""
    alive = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()
            alive.append(process)
    if alive and wait_s > 0:
        psutil.wait_procs(alive, timeout=wait_s)


def _collect(stream: object, chunks: list[bytes]) -> None:
    read = getattr(stream, "read", None)
    if read is None:
        return
    while True:
        chunk = read(4096)
        if not chunk:
            return
        chunks.append(chunk)


def _follow_status(
    process: subprocess.Popen[bytes],
    on_progress: ProgressCallback | None,
    stall: StallWatch | None = None,
) -> None:
    """Read fio's status lines from stdout and report the percentage it prints; a non-zero
    rate in one is progress for `stall`."""
    stream = process.stdout
    if stream is None:
        return
    pending = ""
    while True:
        chunk = stream.read1(4096) if hasattr(stream, "read1") else stream.read(4096)
        if not chunk:
            return
        pending = (pending + chunk.decode("utf-8", "replace"))[-2048:]
        matches = list(_ETA_RE.finditer(pending))
        if matches:
            last = matches[-1]
            status = last.group(2).replace("][", " ").strip("[]")
            if stall is not None and any(_moving(m.group(2)) for m in matches):
                stall.moved()
            if on_progress is not None:
                on_progress(min(1.0, float(last.group(1)) / 100.0), status)
            pending = pending[last.end() :]


# A rate in fio's status line, e.g. "r=6006KiB/s" or "w=1501 IOPS" or "r=15.0k IOPS".
_RATE_RE = re.compile(r"[rwt]=(\d+(?:\.\d+)?)")


def _moving(status: str) -> bool:
    """True when fio's status brackets show a non-zero rate: something completed."""
    return any(float(value) > 0 for value in _RATE_RE.findall(status))


class ReplayRunner:
    """A FioRunner that returns recorded fio outputs instead of running fio.

    `recordings` is a folder holding, per job name, `NAME.json` (fio's JSON output), optional
    `NAME_iops.1.log` files (fio's per-I/O logs), and optional `NAME.stderr` and
    `NAME.returncode`. A `version` file holds the fio version the recordings were made with.
    """

    # Replayed jobs write nothing; their job text names this folder for the per-I/O logs,
    # the same wherever the recordings are, so replayed documents do not depend on the checkout.
    log_folder = "/replayed"

    def __init__(self, recordings: Path) -> None:
        self.recordings = recordings
        self.jobs_run: list[FioJob] = []

    def version(self) -> str:
        return check_version((self.recordings / "version").read_text())

    def run(
        self,
        job: FioJob,
        on_progress: ProgressCallback | None = None,
        *,
        folder_fd: int | None = None,
        stall: StallWatch | None = None,
    ) -> FioOutput:
        self.jobs_run.append(job)
        base = self.recordings / job.name
        json_path = base.with_suffix(".json")
        returncode_path = base.with_suffix(".returncode")
        if not json_path.exists() and not returncode_path.exists():
            raise FioFailed(f"no recording for job {job.name!r} in {self.recordings}")
        stderr_path = base.with_suffix(".stderr")
        if on_progress is not None:
            on_progress(1.0, "replayed")
        logs = {
            p.name: p.read_text() for p in sorted(self.recordings.glob(f"{job.name}_iops*.log"))
        }
        latency_logs = {
            p.name: p.read_text() for p in sorted(self.recordings.glob(f"{job.name}_lat.*.log"))
        }
        json_text = json_path.read_text() if json_path.exists() else ""  # a killed fio writes none
        return FioOutput(
            job_name=job.name,
            argv=("fio", f"{job.name}.fio", "--output-format=json"),
            returncode=int(returncode_path.read_text()) if returncode_path.exists() else 0,
            json_text=json_text,
            stderr=stderr_path.read_text() if stderr_path.exists() else "",
            logs=logs,
            elapsed_s=_recorded_elapsed(json_text),
            latency_logs=latency_logs,
        )


def _recorded_elapsed(json_text: str) -> float:
    try:
        return float(json.loads(json_text)["jobs"][0]["elapsed"])
    except (ValueError, KeyError, IndexError, TypeError):
        return 0.0


def temp_folder() -> Path:
    """Where runs make their fio work folders: the temp folder, or /tmp or /var/tmp when
    TMPDIR's path holds characters fio's job files would misread (fio_work_parent)."""
    try:
        return Path(fio_work_parent())
    except EnvironmentProblem:  # no run could have made one either
        return Path(tempfile.gettempdir())


# For tests and bug reports: a folder of recorded fio outputs (ReplayRunner) replaces fio, so
# a whole command runs without fio or root. Never set in normal use.
REPLAY_ENV = "FLASHMARK_FIO_REPLAY"


def runner_from_environment(workdir: Path) -> FioRunner:
    """The fio runner a command uses: fio itself, working in `workdir`; or, with
    FLASHMARK_FIO_REPLAY set, the recorded outputs in that folder."""
    replay = os.environ.get(REPLAY_ENV)
    return ReplayRunner(Path(replay)) if replay else FioProcessRunner(workdir)
