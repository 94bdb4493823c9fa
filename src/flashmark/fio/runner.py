"""The only place that runs fio. Everything else gets a FioRunner.

`FioProcessRunner` runs the real binary; `ReplayRunner` returns recorded outputs (fio JSON and
bandwidth logs from tests/data) so the whole CLI can be tested without fio or root, the way
hyperfine tests with a mock executor.

Subprocess hygiene: argv lists, LC_ALL=C, a timeout per job, fio in its own process group so
that on any exception (Ctrl-C, SIGTERM, a timeout) the whole group is stopped and reaped before
the exception goes on; stderr is kept for the error message.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from flashmark.errors import FioFailed, FioNotFound, FioTooOld
from flashmark.fio.jobs import FioJob

# Needed: JSON bw_bytes / *_ns fields (fio 3.0) and lat_percentiles honoured in JSON output
# (fixed after fio-3.10, axboe/fio issue #691).
MINIMUM_FIO_VERSION = (3, 11)

ProgressCallback = Callable[[float | None, str], None]
"""Called with (fraction done 0..1 or None when unknown, fio's status text)."""


@dataclass(frozen=True)
class FioOutput:
    job_name: str
    argv: tuple[str, ...]
    returncode: int
    json_text: str  # the content of fio's --output file ("" if fio wrote none)
    stderr: str
    bw_logs: Mapping[str, str]  # log file name -> content
    elapsed_s: float


class FioRunner(Protocol):
    def version(self) -> str: ...

    def run(self, job: FioJob, on_progress: ProgressCallback | None = None) -> FioOutput: ...


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


class FioProcessRunner:
    """Runs the fio binary with job files written into `workdir`."""

    def __init__(self, workdir: Path, executable: str = "fio") -> None:
        self.workdir = workdir
        self.executable = executable
        self._version: str | None = None

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

    def run(self, job: FioJob, on_progress: ProgressCallback | None = None) -> FioOutput:
        job_path = self.workdir / f"{job.name}.fio"
        output_path = self.workdir / f"{job.name}.json"
        job_path.write_text(job.text)
        output_path.unlink(missing_ok=True)
        for stale in self.workdir.glob(f"{job.name}_bw*.log"):
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
        process = subprocess.Popen(
            argv,
            cwd=self.workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=_fio_environment(),
            start_new_session=True,
        )
        stderr_chunks: list[bytes] = []
        readers = [
            threading.Thread(target=_follow_status, args=(process, on_progress), daemon=True),
            threading.Thread(target=_collect, args=(process.stderr, stderr_chunks), daemon=True),
        ]
        for reader in readers:
            reader.start()
        family = _FioFamily(process, str(job_path))
        try:
            returncode = family.wait(job.timeout_s)
        except BaseException:
            family.stop()
            raise
        finally:
            # fio's job processes outlive a killed main process (they are in sessions of
            # their own); end them so nothing keeps writing to the test file.
            family.kill_leftovers()
            for reader in readers:
                reader.join(timeout=5)
        elapsed = time.monotonic() - started

        logs = {
            path.name: path.read_text() for path in sorted(self.workdir.glob(f"{job.name}_bw*.log"))
        }
        return FioOutput(
            job_name=job.name,
            argv=tuple(argv),
            returncode=returncode,
            json_text=output_path.read_text() if output_path.exists() else "",
            stderr=b"".join(stderr_chunks).decode("utf-8", "replace"),
            bw_logs=logs,
            elapsed_s=elapsed,
        )


def _fio_environment() -> dict[str, str]:
    return {**os.environ, "LC_ALL": "C"}


class _FioFamily:
    """fio's main process and the job processes it forks.

    fio puts each job process in a session of its own (seen with fio 3.33: a job's process
    group differs from the main one), so signalling the main process group does not reach
    them. The family is followed through /proc/PID/task/TID/children (proc(5)) while fio
    runs, and leftovers are recognised by their command line naming this job file, so a
    reused pid is never signalled.
    """

    def __init__(self, process: subprocess.Popen[bytes], job_path: str) -> None:
        self.process = process
        self.job_path = job_path
        self.members: set[int] = set()

    def wait(self, timeout_s: float) -> int:
        deadline = time.monotonic() + timeout_s
        while True:
            self.members |= _descendants(self.process.pid)
            try:
                return self.process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    self.stop()
                    raise FioFailed(
                        f"fio did not finish within {timeout_s:.0f} s and was stopped"
                    ) from None

    def stop(self) -> None:
        """SIGTERM lets fio end its jobs and write its output; SIGKILL if it hangs."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                self.process.wait(timeout=10)
        self.kill_leftovers()

    def kill_leftovers(self) -> None:
        for pid in self.members:
            if _cmdline_names(pid, self.job_path):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    pending = [pid]
    while pending:
        current = pending.pop()
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                for child in children.read_text().split():
                    if int(child) not in found:
                        found.add(int(child))
                        pending.append(int(child))
    return found


def _cmdline_names(pid: int, job_path: str) -> bool:
    try:
        return job_path.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _collect(stream: object, chunks: list[bytes]) -> None:
    read = getattr(stream, "read", None)
    if read is None:
        return
    while True:
        chunk = read(4096)
        if not chunk:
            return
        chunks.append(chunk)


def _follow_status(process: subprocess.Popen[bytes], on_progress: ProgressCallback | None) -> None:
    """Read fio's status lines from stdout and report the percentage it prints."""
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
        if matches and on_progress is not None:
            last = matches[-1]
            status = last.group(2).replace("][", " ").strip("[]")
            on_progress(min(1.0, float(last.group(1)) / 100.0), status)
            pending = pending[last.end() :]


class ReplayRunner:
    """A FioRunner that returns recorded fio outputs instead of running fio.

    `recordings` is a folder holding, per job name, `NAME.json` (fio's JSON output), optional
    `NAME_bw.log` files, and optional `NAME.stderr` and `NAME.returncode`. A `version` file holds
    the fio version the recordings were made with.
    """

    def __init__(self, recordings: Path) -> None:
        self.recordings = recordings
        self.jobs_run: list[FioJob] = []

    def version(self) -> str:
        return check_version((self.recordings / "version").read_text())

    def run(self, job: FioJob, on_progress: ProgressCallback | None = None) -> FioOutput:
        self.jobs_run.append(job)
        base = self.recordings / job.name
        json_path = base.with_suffix(".json")
        returncode_path = base.with_suffix(".returncode")
        if not json_path.exists() and not returncode_path.exists():
            raise FioFailed(f"no recording for job {job.name!r} in {self.recordings}")
        stderr_path = base.with_suffix(".stderr")
        if on_progress is not None:
            on_progress(1.0, "replayed")
        logs = {p.name: p.read_text() for p in sorted(self.recordings.glob(f"{job.name}_bw*.log"))}
        json_text = json_path.read_text() if json_path.exists() else ""  # a killed fio writes none
        return FioOutput(
            job_name=job.name,
            argv=("fio", f"{job.name}.fio", "--output-format=json"),
            returncode=int(returncode_path.read_text()) if returncode_path.exists() else 0,
            json_text=json_text,
            stderr=stderr_path.read_text() if stderr_path.exists() else "",
            bw_logs=logs,
            elapsed_s=_recorded_elapsed(json_text),
        )


def _recorded_elapsed(json_text: str) -> float:
    try:
        return float(json.loads(json_text)["jobs"][0]["elapsed"])
    except (ValueError, KeyError, IndexError, TypeError):
        return 0.0
