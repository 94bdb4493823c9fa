"""Runs the cases of hung_cases.py: an emulated card stops answering mid-operation.

Each case makes its own emulated card (tests.emulation.flash: nbdkit + nbdfuse + a direct-I/O
loop device; an ext4 filesystem on it for folder targets), starts the command, tells the card to
stop answering at the case's moment (`EmulatedFlash.stop_answering`: requests are held, not
failed), and judges how the command ended. The card then answers again (always, also when the
case fails), and the case checks that nothing it started is left and that `flashmark clean`
removes what it left in a folder. The card, its filesystem and everything else are removed.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from tests.cli.faults import harness
from tests.cli.faults.hung_cases import GRACE_S, STALL_TIMEOUT_S, HungCase
from tests.cli_runner import fio_jobs_of
from tests.emulation.flash.device import EmulatedFlash, unavailable_reason
from tests.emulation.flash.model import FlashModel

MiB = 2**20
# A slow card, so that a test, the preparation or a pass is under way when it stops answering.
CARD = FlashModel(claimed_bytes=256 * MiB, read_bps=20_000_000, write_bps=8_000_000)
_START_TIMEOUT_S = 90.0
_STUCK_PID = re.compile(r"\(pid (\d+)\) is stuck")


def run_hung_case(lab: harness.Lab, case: HungCase, marker: str, outcome: harness.Outcome) -> None:
    reason = unavailable_reason()
    if reason is not None:
        outcome.problems.append(f"cannot run: {reason}")
        return
    scratch = Path(tempfile.mkdtemp(prefix="hung-", dir=lab.scratch))
    folder = harness.CaseFolder(scratch, marker)
    try:
        with EmulatedFlash(CARD) as card, _target(case, card) as target:
            try:
                _hang_in(case, card, target, folder, outcome)
            finally:
                card.answer_again()
                harness.kill_case_processes(marker)
    finally:
        folder.remove()


@contextlib.contextmanager
def _target(case: HungCase, card: EmulatedFlash) -> Iterator[str]:
    if case.on == "device":
        yield card.path
        return
    mount_point = Path(tempfile.mkdtemp(prefix="hung-mnt-"))
    harness._sh(
        ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", card.path]
    )
    harness._sh(["mount", "-o", "noatime", card.path, str(mount_point)])
    try:
        yield str(mount_point)
    finally:
        card.answer_again()  # an unmount flushes: the card must answer it
        harness._umount(mount_point)
        mount_point.rmdir()


def _argv(case: HungCase, target: str) -> list[str]:
    return harness.flashmark(case.command, target, *case.argv, "--json")


def _wait_for_moment(case: HungCase, process: subprocess.Popen[bytes]) -> str | None:
    """Sleep until the case's moment; what is going on then, or None if the command ended."""
    started = time.monotonic()
    if case.when.startswith("after-"):
        time.sleep(float(case.when.removeprefix("after-")))
        return None if process.poll() is not None else f"{case.when.removeprefix('after-')} s in"
    if case.when.startswith("scan+"):
        # S s after the scan's I/O process started: the scan is under way whatever the load
        # (a fixed time after start may still fall in the start-up, which is not watched).
        scan_delay = float(case.when.removeprefix("scan+"))
        while time.monotonic() - started < _START_TIMEOUT_S:
            if process.poll() is not None:
                return None
            if _scan_worker_started(process.pid):
                time.sleep(scan_delay)
                return None if process.poll() is not None else f"{scan_delay:g} s into the scan"
            time.sleep(0.02)
        return None
    job, delay = case.when.removeprefix("fio-").split("+")
    seen: dict[int, str] = {}
    while time.monotonic() - started < _START_TIMEOUT_S:
        if process.poll() is not None:
            return None
        seen.update(_fio_jobs(process.pid))
        if len(seen) >= int(job):
            time.sleep(float(delay))
            name = list(seen.values())[int(job) - 1]
            return f"{delay} s into {name}" if process.poll() is None else None
        time.sleep(0.02)
    return None


def _scan_worker_started(pid: int) -> bool:
    """Whether flashmark `pid` has started its surface scan's I/O process."""
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "flashmark.surface.worker" in child.cmdline():
                    return True
    return False


def _fio_jobs(pid: int) -> dict[int, str]:
    """fio processes under flashmark `pid` that run a job file: pid -> the job's name (never
    `fio --version`, whose command line may not be readable yet when it is seen)."""
    jobs = {}
    for fio in harness.fio_mains(fio_jobs_of(pid)):
        with contextlib.suppress(psutil.Error):
            files = [arg for arg in fio.cmdline() if arg.endswith(".fio")]
            if files:
                jobs[fio.pid] = Path(files[0]).stem
    return jobs


def _hang_in(
    case: HungCase, card: EmulatedFlash, target: str, folder: harness.CaseFolder,
    outcome: harness.Outcome,
) -> None:  # fmt: skip
    process = subprocess.Popen(
        _argv(case, target),
        env=folder.env(),
        cwd=folder.root,
        stdin=subprocess.DEVNULL,
        stdout=(folder.logs / "stdout").open("wb"),
        stderr=(folder.logs / "stderr").open("wb"),
    )
    moment = _wait_for_moment(case, process)
    if moment is None:
        process.wait(timeout=60)
        outcome.problems.append(
            f"the command ended (exit {process.returncode}) before the card stopped answering"
        )
        return
    card.stop_answering()
    silent_at = time.monotonic()
    limit = STALL_TIMEOUT_S + GRACE_S
    try:
        code = process.wait(timeout=limit + 60)
    except subprocess.TimeoutExpired:
        outcome.problems.append(f"still running {limit + 60:.0f} s after the card went silent")
        return
    took = time.monotonic() - silent_at
    stderr = harness._read(folder.logs, "stderr")
    stdout = harness._read(folder.logs, "stdout")
    stuck = [int(pid) for pid in _STUCK_PID.findall(stderr)]
    outcome.note = f"silent {moment}; exit {code} {took:.1f} s later" + (
        f"; pid {', '.join(map(str, stuck))} left stuck in D" if stuck else ""
    )
    if code != 5:
        outcome.problems.append(f"exit {code}, not 5: {harness._tail(stderr)}")
    if took > limit:
        outcome.problems.append(
            f"took {took:.1f} s after the card went silent (bound + {GRACE_S:g} s: {limit:.0f} s)"
        )
    outcome.problems += harness.one_error_line(stderr, "the hang")
    errors = harness.error_lines(stderr)
    if errors and not ("stopped answering" in errors[0] and "the bound is" in errors[0]):
        outcome.problems.append(
            f"the line does not say the device stopped answering and the bound: {errors[0]!r}"
        )
    _judge_kept(case, stdout, errors, folder, outcome)
    card.answer_again()
    left = harness.wait_for_no_processes(folder.marker, 10.0)
    if left:
        outcome.problems.append(
            f"left running 10 s after the card answered again: {harness.describe(left)}"
        )
    if case.on == "folder":
        _judge_clean(target, folder, outcome)


def _judge_kept(
    case: HungCase, stdout: str, errors: list[str], folder: harness.CaseFolder,
    outcome: harness.Outcome,
) -> None:  # fmt: skip
    """What was measured before the hang: printed (--json) and saved, marked incomplete (a
    run: partial, the step the device went silent in named, with exit 5)."""
    line = errors[0] if errors else ""
    saved = re.search(r"saved as result (\d+)", line)
    if not case.kept:
        if saved:
            outcome.problems.append(f"nothing was measured, yet {saved.group(0)}")
        return
    if saved is None:
        outcome.problems.append(f"what was measured was not saved: {line!r}")
        return
    try:
        document = json.loads(stdout)
    except ValueError:
        outcome.problems.append(f"no result document on stdout: {harness._tail(stdout)}")
        return
    shown = subprocess.run(
        harness.flashmark("show", saved.group(1), "--json"),
        env=folder.env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if shown.returncode != 0:
        outcome.problems.append(f"`flashmark show {saved.group(1)}`: {harness._tail(shown.stderr)}")
        return
    kept = json.loads(shown.stdout)
    if case.command == "run":
        partial = kept.get("partial") or {}
        incomplete = bool(partial.get("failed_step")) and partial.get("exit_status") == 5
        if not kept.get("tests") or not incomplete:
            outcome.problems.append("the saved run has no tests or is not marked partial")
    elif kept.get("complete") is not False:
        outcome.problems.append("the saved scan is not marked incomplete")
    if document.get("id") != int(saved.group(1)):
        outcome.problems.append("the document printed is not the one saved")


def _judge_clean(target: str, folder: harness.CaseFolder, outcome: harness.Outcome) -> None:
    """What the run could not remove from the silent card, `flashmark clean` removes now."""
    done = subprocess.run(
        harness.flashmark("clean", target), env=folder.env(), capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    if done.returncode != 0:
        outcome.problems.append(
            f"`flashmark clean` after the hang: exit {done.returncode}: "
            f"{harness._tail(done.stderr)}"
        )
    left = sorted(p.name for p in Path(target).iterdir() if p.name != "lost+found")
    if left:
        outcome.problems.append(f"left in the folder after `flashmark clean`: {left}")
