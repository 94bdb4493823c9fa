"""Runs the cases of durable_cases.py (power cuts, environment faults, hostile imports) against
the real CLI, as harness.py runs the others, and says what did not hold, one sentence each.

Every case has its own CaseFolder (TMPDIR, FLASHMARK_DB, XDG_DATA_HOME, XDG_STATE_HOME, the
marker its processes inherit); what it creates beyond it (an emulated card with a volatile
cache, a small ext4 on a loop device, a FIFO) is removed when it ends. Measuring cases run on
the lab's emulated card (4 MB/s writes) or on a small ext4 of their own.

What holds for every case: the exit status it must have, exactly one error line (the last
one) and no traceback when it fails, nothing measured lost (kept in the history or a recovery
file, which `flashmark import` takes), and no process of the case left.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.cli.faults import code_for_others
from tests.cli.faults import durable_cases as d
from tests.cli.faults.harness import (
    CaseFolder,
    Lab,
    Outcome,
    _tail,
    case_processes,
    describe,
    error_lines,
    flashmark,
    kill_case_processes,
    one_error_line,
)
from tests.emulation.flash.model import FlashModel
from tests.emulation.throttle import EmulatedDevice

MiB = 1 << 20
_TIMEOUT_S = 180.0
# The run a measuring case makes: the a1 profile's five tests on 4 MiB, 1 s each, no ramp.
A1 = ("--profile", "a1", "--size", "4M", "--runtime", "1", "--ramp", "0")
# The card of the power cut cases: genuine, 128 MiB; 15 ms per 256 KiB write and 8 ms per read
# make the write pass about 8 s (three or four 2 s flush steps) and the read pass about 4 s.
POWER_CUT_CARD = FlashModel(claimed_bytes=128 * MiB)
SCAN_BLOCK = "256K"
WRITE_DELAY_MS, READ_DELAY_MS = 15, 8

# fio wrapper: on the job named in FLASHMARK_FAULT_WHEN, first run FLASHMARK_FAULT_DO (another
# program filling a disk while flashmark measures), then fio itself. Every start is logged.
_FIO_WRAPPER = """#!/bin/sh
printf '%s\\n' "$*" >> "$FLASHMARK_FAULT_FIO_LOG"
case "$1" in
  */"$FLASHMARK_FAULT_WHEN".fio) sh -c "$FLASHMARK_FAULT_DO" ;;
esac
exec {fio} "$@"
"""
_FILL_INODES = 'i=0; while touch "$FILL_DIR/f$i" 2>/dev/null; do i=$((i + 1)); done'
# the bulk with dd, then one-block files until no file can be made (ext4 keeps some blocks
# back from a large write that a small file still gets)
_FILL_SPACE = (
    'dd if=/dev/zero of="$FILL_DIR/space" bs=1M 2>/dev/null; i=0; '
    'while printf x > "$FILL_DIR/s$i" 2>/dev/null; do i=$((i + 1)); done; true'
)


# -- shared --------------------------------------------------------------------------------------
def _run(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    *,
    stdout: Any = subprocess.PIPE,
    stdin: Any = subprocess.DEVNULL,
    timeout: float = _TIMEOUT_S,
) -> tuple[int, str, str, float]:
    """(exit status, stdout, stderr, seconds); the child's peak memory is not needed here."""
    started = time.monotonic()
    done = subprocess.run(
        argv, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, stdin=stdin,
        timeout=timeout,
    )  # fmt: skip
    out = done.stdout.decode("utf-8", "replace") if isinstance(done.stdout, bytes) else ""
    return done.returncode, out, done.stderr.decode("utf-8", "replace"), time.monotonic() - started


def _expect(
    outcome: Outcome, what: str, code: int, stderr: str, wanted: tuple[int, ...], *parts: str
) -> str:
    """The status is one of `wanted`; when it is not 0, one error line, last, holding every
    one of `parts`. Returns that line ("" for success)."""
    outcome.note = f"{what}: exit {code}"
    if code not in wanted:
        outcome.problems.append(f"{what}: exit {code}, not {wanted}: {_tail(stderr)}")
        return ""
    if "Traceback" in stderr:
        outcome.problems.append(f"{what}: printed a traceback: {_tail(stderr)}")
    if code == 0:
        return ""
    problems = one_error_line(stderr, what)
    outcome.problems += problems
    if problems:
        return ""
    line = error_lines(stderr)[0]
    missing = [part for part in parts if part not in line]
    if missing:
        outcome.problems.append(f"{what}: the line does not say {missing}: {line[:400]!r}")
    return line


def _no_processes_left(marker: str, outcome: Outcome) -> None:
    time.sleep(0.2)
    left = case_processes(marker)
    if left:
        outcome.problems.append(f"processes left behind: {describe(left)}")


def _history_rows(db: Path) -> list[dict[str, Any]]:
    if not db.exists():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        try:
            rows = connection.execute("SELECT id, label, document FROM results ORDER BY id")
            return [{"id": row[0], "label": row[1], "document": json.loads(row[2])} for row in rows]
        except sqlite3.OperationalError:
            return []


@contextlib.contextmanager
def small_ext4(scratch: Path, size_bytes: int, inodes: int) -> Iterator[Path]:
    """An ext4 of `size_bytes` with `inodes` inodes on a loop device, mounted; removed after."""
    image = Path(tempfile.mkstemp(prefix="flashmark-fault-ext4-", dir=scratch)[1])
    mount = image.with_suffix(".mnt")
    loop = ""
    try:
        with image.open("wb") as handle:
            handle.truncate(size_bytes)
        subprocess.run(
            ["mkfs.ext4", "-q", "-F", "-N", str(inodes), "-E",
             "lazy_itable_init=0,lazy_journal_init=0", str(image)],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        loop = subprocess.run(
            ["losetup", "--find", "--show", str(image)],
            check=True, capture_output=True, text=True, timeout=60,
        ).stdout.strip()  # fmt: skip
        mount.mkdir()
        subprocess.run(["mount", loop, str(mount)], check=True, capture_output=True, timeout=60)
        os.chmod(mount, 0o1777)
        try:
            yield mount
        finally:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=60)
    finally:
        if loop:
            subprocess.run(["losetup", "--detach", loop], capture_output=True, timeout=60)
        with contextlib.suppress(OSError):
            mount.rmdir()
        image.unlink(missing_ok=True)


def _leave_inodes(folder: Path, free: int) -> None:
    """Use up the filesystem's inodes but `free` of them (empty files in `folder`)."""
    folder.mkdir()
    made = 0
    with contextlib.suppress(OSError):
        while True:
            (folder / f"f{made}").touch()
            made += 1
    for index in range(made - 1, max(-1, made - 1 - free), -1):
        (folder / f"f{index}").unlink()


def _leave_bytes(folder: Path, free: int) -> None:
    """Fill the filesystem but about `free` bytes."""
    filler = folder / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as handle:
        while True:
            handle.write(bytes(MiB))
            handle.flush()
    size = filler.stat().st_size
    with filler.open("r+b") as handle:
        handle.truncate(max(0, size - free))


def _fio_wrapper(folder: CaseFolder, when: str = "", do: str = "", **extra: str) -> dict[str, str]:
    """The case's environment with the fio wrapper first on PATH (see _FIO_WRAPPER)."""
    bin_dir = folder.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    fio = shutil.which("fio")
    assert fio is not None
    wrapper = bin_dir / "fio"
    wrapper.write_text(_FIO_WRAPPER.format(fio=fio))
    wrapper.chmod(0o755)
    bin_dir.chmod(0o755)
    return folder.env(
        PATH=f"{bin_dir}:{os.environ.get('PATH', '')}",
        FLASHMARK_FAULT_FIO_LOG=str(folder.logs / "fio-starts"),
        FLASHMARK_FAULT_WHEN=when,
        FLASHMARK_FAULT_DO=do,
        XDG_STATE_HOME=str(folder.root / "state"),
        **extra,
    )


def _fio_jobs(folder: CaseFolder) -> list[str]:
    log = folder.logs / "fio-starts"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if "--version" not in line]


# -- power cut and resume ------------------------------------------------------------------------
def run_power_cut_case(lab: Lab, case: d.PowerCutCase, marker: str, outcome: Outcome) -> None:
    from tests.emulation.flash.writeback import VolatileFlash
    from tests.emulation.throttle import EmulationUnavailable

    folder = CaseFolder(lab.scratch, marker)
    try:
        with contextlib.ExitStack() as stack:
            try:
                card = stack.enter_context(
                    VolatileFlash(
                        POWER_CUT_CARD,
                        write_delay_ms=WRITE_DELAY_MS,
                        read_delay_ms=READ_DELAY_MS,
                        workdir=lab.scratch,
                    )
                )
            except EmulationUnavailable as error:
                outcome.problems.append(f"cannot run here: {error}")
                return
            stack.callback(kill_case_processes, marker)  # before the card goes
            _power_cut_scan(card, case, folder, outcome)
            _no_processes_left(marker, outcome)
    finally:
        kill_case_processes(marker)
        folder.remove()


def _power_cut_scan(card: Any, case: d.PowerCutCase, folder: CaseFolder, outcome: Outcome) -> None:
    env = folder.env(XDG_STATE_HOME=str(folder.root / "state"))
    notes = []
    for number, (kind, phase, fraction) in enumerate(case.stops):
        argv = flashmark("surface", card.path, "--destructive", "--yes", "--block-size", SCAN_BLOCK)
        if number:
            argv.append("--resume")
        before = _checkpoint(folder.db)
        process = subprocess.Popen(
            argv, env=env, cwd=folder.root, stdin=subprocess.DEVNULL,
            stdout=(folder.logs / f"stdout{number}").open("wb"),
            stderr=(folder.logs / f"stderr{number}").open("wb"),
        )  # fmt: skip
        try:
            landed = _wait_for_moment(card, folder.db, before, process, phase, fraction)
            if not landed:
                outcome.problems.append(
                    f"stop {number + 1}: the scan ended before {phase} {fraction:.0%} "
                    f"(exit {process.poll()}): "
                    f"{_tail((folder.logs / f'stderr{number}').read_text())}"
                )
                return
            if kind == "int":
                process.send_signal(signal.SIGINT)
            else:
                process.kill()  # SIGKILL: the host lost its power too, or flashmark alone
            process.wait(timeout=60)
            if kind == "cut":
                card.power_cut()
                card.power_on()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr = (folder.logs / f"stderr{number}").read_text(errors="replace")
        if kind == "int":
            _expect(outcome, f"stop {number + 1} (SIGINT)", process.returncode, stderr, (130,),
                    "stopped by SIGINT", "--resume")  # fmt: skip
        elif process.returncode != -signal.SIGKILL:
            outcome.problems.append(f"stop {number + 1}: exit {process.returncode}, not SIGKILL")
        saved = _checkpoint(folder.db)
        if saved is None or saved["complete"]:
            outcome.problems.append(f"stop {number + 1}: no incomplete scan in the history")
            return
        state = saved["state"]
        notes.append(f"{kind} in {state['phase']} at {state['next_offset']}")
        if state["phase"] == "write" and state["next_offset"] > 0:
            # The resume point is durable: the sector before it holds the pattern on the card.
            tail = card.durable(state["next_offset"] - 512, 512)
            if tail == bytes(512):
                outcome.problems.append(
                    f"stop {number + 1}: the resume point {state['next_offset']} is past what "
                    "the card has durably: the sector before it is empty"
                )
    code, out, stderr, seconds = _run(
        flashmark("surface", card.path, "--resume", "--destructive", "--yes",
                  "--block-size", SCAN_BLOCK, "--json"),
        env, folder.root,
    )  # fmt: skip
    outcome.note = f"{'; '.join(notes)}; resumed to the end in {seconds:.1f} s, exit {code}"
    if code != 0:
        outcome.problems.append(f"the last --resume: exit {code}: {_tail(stderr)}")
        return
    document = json.loads(out)
    integrity = document["integrity"]
    size = POWER_CUT_CARD.claimed_bytes
    if not document["complete"]:
        outcome.problems.append("the resumed scan is not complete")
    if integrity["ranges"] or integrity["mismatched_bytes"] or integrity["verified_bytes"] != size:
        outcome.problems.append(
            f"the resumed scan of an honest card is not clean: verified "
            f"{integrity['verified_bytes']} of {size}, mismatched "
            f"{integrity['mismatched_bytes']}, ranges {integrity['ranges'][:3]}"
        )
    rows = _history_rows(folder.db)
    if document.get("resumed_from") != (rows[-2]["id"] if len(rows) >= 2 else None):
        outcome.problems.append(
            f"resumed_from {document.get('resumed_from')} is not the scan before"
        )


def _checkpoint(db: Path) -> dict[str, Any] | None:
    rows = _history_rows(db)
    return rows[-1]["document"] if rows else None


def _wait_for_moment(
    card: Any,
    db: Path,
    before: dict[str, Any] | None,
    process: subprocess.Popen[bytes],
    phase: str,
    fraction: float,
) -> bool:
    """Until `fraction` of `phase`'s bytes went through the card in this session; False when
    the scan ended first."""
    deadline = time.monotonic() + 120
    start: tuple[int, int] | None = None  # the card's counters when the phase began
    total = POWER_CUT_CARD.claimed_bytes
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        saved = _checkpoint(db)
        fresh = saved is not None and (before is None or saved.get("id") != before.get("id")
                                       or saved["state"] != before["state"])  # fmt: skip
        if start is None and fresh and saved is not None and saved["state"]["phase"] == phase:
            start = _card_bytes(card.path)
            if phase == "write":
                total = POWER_CUT_CARD.claimed_bytes - saved["state"]["next_offset"]
        if start is not None:
            read, written = _card_bytes(card.path)
            moved = written - start[1] if phase == "write" else read - start[0]
            if moved >= fraction * total:
                return True
        time.sleep(0.01)
    return False


def _card_bytes(device: str) -> tuple[int, int]:
    """Bytes read and written through the loop device (block/stat: sectors read, written)."""
    fields = (Path("/sys/block") / Path(device).name / "stat").read_text().split()
    return int(fields[2]) * 512, int(fields[6]) * 512


# -- environment faults --------------------------------------------------------------------------
EnvironmentFault = Callable[[Lab, CaseFolder, EmulatedDevice, Outcome], None]


def run_environment_case(lab: Lab, case: d.EnvironmentCase, marker: str, outcome: Outcome) -> None:
    fault = ENVIRONMENT_FAULTS[case.name]
    with lab.device() as device:
        assert device.mount_point is not None
        folder = CaseFolder(device.mount_point / "cases", marker)
        try:
            fault(lab, folder, device, outcome)
            _no_processes_left(marker, outcome)
        finally:
            kill_case_processes(marker)
            folder.remove()


def _stdout_closed(lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome) -> None:
    env = _fio_wrapper(folder)
    argv = ["sh", "-c", 'exec "$@" >&-', "sh", *flashmark("run", str(folder.target), *A1)]
    code, _, stderr, _ = _run(device.command(argv), env, folder.root)
    _expect(outcome, "stdout closed", code, stderr, (3,), "stdout is closed")
    if _fio_jobs(folder) or any(folder.target.iterdir()) or folder.db.exists():
        outcome.problems.append("something was measured or saved with stdout closed")


def _stdout_full(saved: bool) -> EnvironmentFault:
    def fault(lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome) -> None:
        env = _fio_wrapper(folder)
        argv = flashmark("run", str(folder.target), *A1, *(() if saved else ("--no-save",)))
        with open("/dev/full", "wb") as full:
            code, _, stderr, _ = _run(device.command(argv), env, folder.root, stdout=full)
        where = "saved as 1" if saved else "kept in "
        line = _expect(outcome, "stdout on /dev/full", code, stderr, (3,),
                       "cannot write to stdout", where)  # fmt: skip
        if saved:
            rows = _history_rows(folder.db)
            if len(rows) != 1:
                outcome.problems.append(f"the history holds {len(rows)} results, not 1")
            return
        found = re.search(r"kept in (\S+?)[ ;(]", line + " ")
        if found is None:
            return
        kept = Path(found.group(1))
        code, out, stderr, _ = _run(flashmark("import", str(kept)), env, folder.root)
        if code != 0 or "added as 1" not in out:
            outcome.problems.append(f"`import {kept}`: exit {code}: {_tail(stderr or out)}")
        with contextlib.suppress(OSError):
            kept.unlink()

    return fault


def _no_usable_temporary_folder(
    lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome
) -> None:
    """A mount namespace where /tmp and /var/tmp are read-only and so is the current folder
    (/tmp itself): Python's tempfile finds no folder; the target and history stay writable."""
    env = _fio_wrapper(folder)
    env.pop("TMPDIR", None)
    inner = (
        "for d in /tmp /var/tmp; do mount --rbind $d $d && mount -o remount,bind,ro $d || "
        'exit 99; done; cd /tmp && exec "$@"'
    )
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", inner, "sh",
            *flashmark("run", str(folder.target), *A1)]  # fmt: skip
    code, _, stderr, _ = _run(device.command(argv), env, folder.root)
    _expect(outcome, "no usable temporary folder", code, stderr, (3,),
            "no usable temporary folder")  # fmt: skip
    if _fio_jobs(folder) or any(folder.target.iterdir()):
        outcome.problems.append("fio ran or a test file was made without a temporary folder")


def _tmpdir_short(what: str) -> EnvironmentFault:
    def fault(lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome) -> None:
        with small_ext4(lab.scratch, 64 * MiB, 256) as tmp:
            if what == "inodes":
                _leave_inodes(tmp / "used", 10)
            else:
                _leave_bytes(tmp, 2 * MiB)
            env = _fio_wrapper(folder, TMPDIR=str(tmp))
            argv = flashmark("run", str(folder.target), *A1)
            code, _, stderr, _ = _run(device.command(argv), env, folder.root)
        said = "inodes" if what == "inodes" else "free"
        line = _expect(outcome, f"TMPDIR short of {what}", code, stderr, (3,),
                       f"temporary folder {tmp}", said)  # fmt: skip
        if line and str(folder.target) in line:
            outcome.problems.append(f"the target is blamed: {line[:300]!r}")
        if _fio_jobs(folder) or any(folder.target.iterdir()):
            outcome.problems.append("fio ran although fio's output could not fit")

    return fault


def _tmpdir_fills_mid_run(
    lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome
) -> None:
    """Another program fills TMPDIR's filesystem as the third test starts: fio cannot write
    its results; the tests measured before are kept, and the temporary folder is named."""
    with small_ext4(lab.scratch, 64 * MiB, 4096) as tmp:
        env = _fio_wrapper(folder, "rand-write-4k", _FILL_SPACE, TMPDIR=str(tmp),
                           FILL_DIR=str(tmp))  # fmt: skip
        argv = flashmark("run", str(folder.target), *A1)
        code, out, stderr, _ = _run(device.command(argv), env, folder.root)
    _expect(outcome, "TMPDIR filled mid-run", code, stderr, (3,),
            "temporary folder", "marked partial")  # fmt: skip
    _partial_kept(folder, outcome, "rand-write-4k", out)


def _partial_kept(folder: CaseFolder, outcome: Outcome, step: str, stdout: str) -> None:
    rows = _history_rows(folder.db)
    if len(rows) != 1:
        outcome.problems.append(f"the history holds {len(rows)} results, not the partial run")
        return
    document = rows[0]["document"]
    partial = document.get("partial") or {}
    if partial.get("failed_step") != step or not document["tests"]:
        outcome.problems.append(f"the saved result is not the partial run stopped at {step}")
    if "Results" not in stdout:
        outcome.problems.append("the tests measured were not printed")
    if any(folder.target.iterdir()):
        outcome.problems.append(f"left in the target: {sorted(os.listdir(folder.target))}")


def _workloads_run_out_of_inodes(
    lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome
) -> None:
    """`--profile standard` on a small ext4 whose inodes another program uses up while the
    last test runs: the workloads fail, the ten tests measured are kept."""
    with small_ext4(lab.scratch, 256 * MiB, 4096) as card:
        target = card / "card"
        target.mkdir()
        env = _fio_wrapper(folder, "seq-write-q8", _FILL_INODES, FILL_DIR=str(card))
        argv = flashmark("run", str(target), "--profile", "standard", "--size", "4M",
                         "--runtime", "1", "--ramp", "0", "--workload-scale", "0.01")  # fmt: skip
        code, out, stderr, _ = _run(argv, env, folder.root)
        left = sorted(os.listdir(target))
    if "Results" not in out:
        outcome.problems.append("the tests measured were not printed")
    _expect(outcome, "workloads out of inodes", code, stderr, (4,), "inodes",
            "the 10 test(s) measured before it are saved as result 1, marked partial")  # fmt: skip
    rows = _history_rows(folder.db)
    if len(rows) != 1 or rows[0]["document"].get("partial", {}).get("failed_step") != "workloads":
        outcome.problems.append("the ten tests were not saved as a partial run")
    if left:
        outcome.problems.append(f"left in the target: {left}")


def _as_nobody(readable: code_for_others.CodeForOthers, *args: str) -> list[str]:
    """`flashmark ARGS` as the uid without a passwd entry, from the copy it can read."""
    uid = str(code_for_others.NO_PASSWD_UID)
    return ["setpriv", "--reuid", uid, "--regid", uid, "--clear-groups", *readable.flashmark(*args)]


@contextlib.contextmanager
def _homeless(
    lab: Lab, folder: CaseFolder
) -> Iterator[tuple[CaseFolder, dict[str, str], code_for_others.CodeForOthers]]:
    """A case folder that the uid without a passwd entry can use (on a small ext4 under /tmp:
    the lab's folders are private to root), an environment without HOME or XDG_* that imports
    the copy of flashmark it can read, and that copy (code_for_others.py)."""
    readable = lab.resource("code other users run", code_for_others.readable_copy)
    with small_ext4(Path(tempfile.gettempdir()), 128 * MiB, 4096) as mount:
        own = CaseFolder(mount, folder.marker)
        env = readable.env(_fio_wrapper(own))
        for name in ("HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "USER", "LOGNAME", "FLASHMARK_DB"):
            env.pop(name, None)
        for path in (own.target, own.tmpdir, own.logs):
            path.chmod(0o1777)
        yield own, env, readable


def _no_home_history(
    lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome
) -> None:
    with _homeless(lab, folder) as (own, env, readable):
        code, _, stderr, _ = _run(_as_nobody(readable, "history"), env, own.root)
    _expect(outcome, "history without a home", code, stderr, (3,), "no home folder",
            "FLASHMARK_DB")  # fmt: skip


def _no_home_run(no_save: bool) -> EnvironmentFault:
    def fault(lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome) -> None:
        with _homeless(lab, folder) as (own, env, readable):
            args = ("run", str(own.target), *A1, *(("--no-save",) if no_save else ()))
            code, out, stderr, _ = _run(_as_nobody(readable, *args), env, own.root)
            jobs = _fio_jobs(own)
            left = sorted(os.listdir(own.target))
        if no_save:
            _expect(outcome, "run --no-save without a home", code, stderr, (0,))
            if code == 0 and "Results" not in out:
                outcome.problems.append("the run printed no results")
        else:
            _expect(outcome, "run without a home", code, stderr, (3,), "no home folder")
            if jobs:
                outcome.problems.append("fio ran although the result could not have been saved")
        if left:
            outcome.problems.append(f"left in the target: {left}")

    return fault


def _capacity_state_unwritable(
    lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome
) -> None:
    """XDG_STATE_HOME is a file: the backup folder cannot be made; nothing may be written."""
    image = folder.root / "card.img"
    with image.open("wb") as handle:
        handle.truncate(64 * MiB)
    with image.open("r+b") as handle:
        handle.write(os.urandom(8 * MiB))
    before = hashlib.sha256(image.read_bytes()).hexdigest()
    loop = subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                          capture_output=True, text=True, timeout=60).stdout.strip()  # fmt: skip
    try:
        blocked = folder.root / "state-is-a-file"
        blocked.write_text("")
        env = folder.env(XDG_STATE_HOME=str(blocked))
        code, _, stderr, _ = _run(flashmark("capacity", loop, "--no-save"), env, folder.root)
    finally:
        subprocess.run(["losetup", "--detach", loop], capture_output=True, timeout=60)
    _expect(outcome, "capacity, state folder unwritable", code, stderr, (3,),
            "cannot write the backup", "--backup-dir")  # fmt: skip
    if hashlib.sha256(image.read_bytes()).hexdigest() != before:
        outcome.problems.append("the device was written although no backup could be kept")


def _locale(variables: dict[str, str], name: bytes) -> EnvironmentFault:
    def fault(lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome) -> None:
        target = Path(os.fsdecode(bytes(folder.parent) + b"/" + name))
        target.mkdir()
        env = _fio_wrapper(folder)
        env.pop("LC_ALL", None)
        env.update(variables)
        argv = flashmark("run", str(target), *A1)
        code, _, stderr, _ = _run(device.command(argv), env, folder.root)
        _expect(outcome, f"{variables} on {name!r}", code, stderr, (0,))
        rows = _history_rows(folder.db)
        if code == 0 and len(rows) != 1:
            outcome.problems.append("the result was not saved")
        if any(target.iterdir()):
            outcome.problems.append(f"left in the target: {sorted(os.listdir(target))}")

    return fault


def _path_beyond(kind: str) -> EnvironmentFault:
    def fault(lab: Lab, folder: CaseFolder, device: EmulatedDevice, outcome: Outcome) -> None:
        env = folder.env()
        cwd = folder.root
        if kind == "path":
            target = str(folder.parent / "/".join(["p" * 200] * 25))
        elif kind == "name":
            target = str(folder.parent / ("n" * 300))
        else:  # a current folder deeper than PATH_MAX, made one step at a time
            _deep_folders(folder.parent, "d" * 200, 25)
            cwd = folder.parent.joinpath(*["d" * 200] * 25)
            target = "."
        argv = flashmark("run", target, *A1)
        code, _, stderr, _ = _run_deep(argv, env, cwd)
        _expect(outcome, f"{kind} beyond the limit", code, stderr, (2, 4))

    return fault


def _deep_folders(parent: Path, name: str, depth: int) -> None:
    """`depth` nested folders `name` under `parent`, made through descriptors (the path of
    the deepest is longer than the kernel takes)."""
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


# Enters a folder whose path is longer than PATH_MAX one name at a time (a relative chdir(2)
# resolves from the current folder), then runs the command there.
_ENTER_DEEP = (
    "import os, sys; os.chdir('/'); [os.chdir(name) for name in sys.argv[1].split('/') if name]; "
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


def _run_deep(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str, float]:
    """_run from a folder whose path may be longer than PATH_MAX."""
    return _run([sys.executable, "-c", _ENTER_DEEP, str(cwd), *argv], env, Path("/"))


ENVIRONMENT_FAULTS: dict[str, EnvironmentFault] = {
    "stdout-closed": _stdout_closed,
    "stdout-full-no-save": _stdout_full(saved=False),
    "stdout-full-saved": _stdout_full(saved=True),
    "no-usable-temporary-folder": _no_usable_temporary_folder,
    "tmpdir-out-of-inodes": _tmpdir_short("inodes"),
    "tmpdir-full": _tmpdir_short("space"),
    "tmpdir-fills-mid-run": _tmpdir_fills_mid_run,
    "workloads-run-out-of-inodes": _workloads_run_out_of_inodes,
    "no-home-history": _no_home_history,
    "no-home-run-no-save": _no_home_run(no_save=True),
    "no-home-run": _no_home_run(no_save=False),
    "capacity-state-folder-unwritable": _capacity_state_unwritable,
    "locale-latin1-stdout": _locale({"PYTHONIOENCODING": "iso-8859-1"}, "日本-café".encode()),
    "locale-posix-non-utf8-name": _locale({"LC_ALL": "POSIX"}, b"card-\xff\xfe"),
    "locale-c-iso-8859-1": _locale({"LANG": "C.ISO-8859-1"}, "café".encode()),
    "path-beyond-path-max": _path_beyond("path"),
    "name-beyond-name-max": _path_beyond("name"),
    "cwd-beyond-path-max": _path_beyond("cwd"),
}


# -- hostile imports -----------------------------------------------------------------------------
_RESULT = Path(__file__).resolve().parents[2] / "data" / "report" / "quick-a1-card.json"
# What an import of a hostile file may take: it reads at most 32 MiB + 1 byte and parses that.
_IMPORT_SECONDS = 20.0
_IMPORT_MEMORY_BYTES = 512 * MiB


def _hostile_file(name: str, folder: Path) -> Path:
    path = folder / f"{name}.json"
    result = json.loads(_RESULT.read_text())
    if name == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif name == "dev-urandom":
        return Path("/dev/urandom")
    elif name == "fifo":
        os.mkfifo(path)
    elif name == "folder":
        path.mkdir()
    elif name == "proc-kcore":
        return Path("/proc/kcore")
    elif name == "stdin-pipe":
        return Path("/dev/stdin")
    elif name == "over-the-size-limit":
        with path.open("wb") as handle:
            handle.write(b"{" + b" " * (33 * MiB) + b"}")
    elif name == "nested-100000-deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif name == "nested-900-deep-in-a-result":
        result["tests"] = json.loads("[" * 900 + "]" * 900)
        path.write_text(json.dumps(result))
    elif name == "binary-not-utf8":
        path.write_bytes(os.urandom(4096))
    elif name == "empty":
        path.write_bytes(b"")
    elif name == "symlink-loop":
        path.symlink_to(folder / "loop-b")
        (folder / "loop-b").symlink_to(path)
    elif name == "a-list-with-a-malformed-document":
        # every document is checked before any is added: the good first one must not be
        path.write_text(json.dumps([result, {"schema": "flashmark.result/1"}]))
    elif name == "numbers-out-of-range":
        text = json.dumps(result).replace('"elapsed_s": ', '"elapsed_s": 1e999, "x": ', 1)
        path.write_text(text)
    elif name == "a-number-of-5000-digits":
        path.write_text(
            json.dumps(result).replace('"elapsed_s": ', '"x": ' + "9" * 5000 + ', "elapsed_s": ', 1)
        )
    elif name == "wrong-types-in-a-result":
        result["tests"] = "not a list"
        result["grades"] = [1, 2, 3]
        path.write_text(json.dumps(result))
    else:
        raise ValueError(name)
    return path


def _measured(
    argv: list[str], env: dict[str, str], cwd: Path, stdin: Any, logs: Path
) -> tuple[int | None, str, float, int]:
    """(exit status or None when it had to be killed, stderr, seconds, peak resident bytes).
    The peak is the child's own high-water mark (proc(5) VmHWM, which only grows), read until
    it exits: its memory after exec, not the harness's that fork copied."""
    started = time.monotonic()
    with (logs / "stderr").open("wb") as err:
        process = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=err
        )
    peak = 0
    killed = False
    while process.poll() is None:
        peak = max(peak, _high_water_mark(process.pid))
        if time.monotonic() - started > _IMPORT_SECONDS:
            process.kill()
            killed = True
        time.sleep(0.01)
    stderr = (logs / "stderr").read_text(errors="replace")
    return (None if killed else process.returncode), stderr, time.monotonic() - started, peak


def _high_water_mark(pid: int) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def run_import_case(lab: Lab, case: d.ImportCase, marker: str, outcome: Outcome) -> None:
    folder = CaseFolder(lab.scratch, marker)
    try:
        path = _hostile_file(case.name, folder.target)
        env = folder.env()
        feeder = None
        stdin: Any = subprocess.DEVNULL
        if case.name == "stdin-pipe":  # a pipe that is never closed: reading it would hang
            feeder = subprocess.Popen(["sleep", "300"], stdout=subprocess.PIPE, env=env)
            stdin = feeder.stdout
        try:
            code, stderr, seconds, peak = _measured(
                flashmark("import", str(path)), env, folder.root, stdin, folder.logs
            )
        finally:
            if feeder is not None:
                feeder.kill()
                feeder.wait()
        outcome.note = f"exit {code} after {seconds:.1f} s, peak {peak >> 20} MiB"
        if code is None:
            outcome.problems.append(f"still reading after {_IMPORT_SECONDS:.0f} s (killed)")
        else:
            _expect(outcome, f"import {case.name}", code, stderr, (2,))
        if peak > _IMPORT_MEMORY_BYTES:
            outcome.problems.append(f"the import took {peak >> 20} MiB of memory")
        if _history_rows(folder.db):
            outcome.problems.append("something was added to the history")
        _no_processes_left(marker, outcome)
    finally:
        kill_case_processes(marker)
        folder.remove()
