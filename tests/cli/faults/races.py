"""Runs the cases of race_cases.py: a real unprivileged user attacks a root run.

Per case, on the lab's emulated device (ext4 on a throttled loop device):

    case-XXXX/            root's, 0755
      parent/             root's; the user's for "swap the target folder"
        target/           the user's (0755), or root's sticky 1777 ("sticky")
      victim/             root's: victim-file and var/lib/dpkg/status, 0644
      tmp/                TMPDIR: root's, or the user's ("fio's work folder")

The user runs tests/cli/faults/attacker.py through `setpriv --reuid --regid --clear-groups`
(util-linux setpriv(1)), with descriptors of the folders it attacks, while root runs the
command inside the device's throttle group. The user is made once per lab with useradd and
removed with userdel when the lab closes; it runs a copy of attacker.py that every user can
read (code_for_others.py: the checkout may be in a folder private to root).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.cli.faults import code_for_others, harness
from tests.cli.faults.race_cases import PARENT, STICKY, TMPDIR, RaceCase
from tests.emulation.throttle import EmulatedDevice

_RUN_TIMEOUT_S = 120.0
_READY_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int


def unavailable_reason() -> str | None:
    for tool in ("useradd", "userdel", "setpriv"):
        if shutil.which(tool) is None:
            return f"the race cases need {tool} (passwd, util-linux)"
    return None


@contextlib.contextmanager
def unprivileged_user() -> Iterator[User]:
    """A system user of its own (no home, no shell), removed afterwards with its group."""
    name = f"fm-race-{secrets.token_hex(3)}"
    harness._sh(
        ["useradd", "--system", "--user-group", "--no-create-home",
         "--shell", "/usr/sbin/nologin", name]
    )  # fmt: skip
    try:
        entry = harness._sh(["getent", "passwd", name]).split(":")
        yield User(name, int(entry[2]), int(entry[3]))
    finally:
        harness._sh_quiet(["userdel", name])
        harness._sh_quiet(["groupdel", name])  # only if userdel left it (USERGROUPS_ENAB no)


def run_race_case(lab: harness.Lab, case: RaceCase, marker: str, outcome: harness.Outcome) -> None:
    reason = unavailable_reason()
    if reason is not None:
        outcome.problems.append(reason)
        return
    user = lab.resource("unprivileged user", unprivileged_user)
    readable = lab.resource("code other users run", code_for_others.readable_copy)
    with lab.device() as device:
        assert device.mount_point is not None
        folder = harness.CaseFolder(device.mount_point / "cases", marker)
        try:
            _race_in(case, user, readable, device, folder, outcome)
        finally:
            harness.kill_case_processes(marker)
            folder.remove()


def _argv(case: RaceCase, folder: harness.CaseFolder) -> list[str]:
    target = str(folder.target)
    if case.command == "run":
        return harness.flashmark(
            "run", target, "--profile", "a1", "--size", "4M", "--runtime", "1", "--ramp", "0",
            "--no-save",
        )  # fmt: skip
    if case.command == "workload":
        return harness.flashmark("workload", "pkg-install", target, "--scale", "0.01", "--no-save")
    return harness.flashmark("surface", target, "--size", "8M", "--no-save")


def _prepare(case: RaceCase, user: User, folder: harness.CaseFolder) -> tuple[Path, Path]:
    """The victims (root's, beside the target) and the ownership the case needs."""
    victims = folder.root / "victim"
    (victims / "var/lib/dpkg").mkdir(parents=True)
    victim = victims / "victim-file"
    victim.write_bytes(secrets.token_bytes(4096))
    (victims / "var/lib/dpkg/status").write_bytes(secrets.token_bytes(895))
    for path in (folder.root, folder.parent, victims, victims / "var", victims / "var/lib"):
        path.chmod(0o755)
    if case.place == STICKY:
        folder.target.chmod(0o1777)
    else:
        os.chown(folder.target, user.uid, user.gid)
        folder.target.chmod(0o755)
    if case.place == PARENT:
        os.chown(folder.parent, user.uid, user.gid)
    if case.place == TMPDIR:
        os.chown(folder.tmpdir, user.uid, user.gid)
    return victim, victims


def _start_attacker(
    case: RaceCase,
    user: User,
    readable: code_for_others.CodeForOthers,
    folder: harness.CaseFolder,
    victim: Path,
    victims: Path,
) -> tuple[subprocess.Popen[bytes], Path]:
    attacked = folder.tmpdir if case.place == TMPDIR else folder.target
    log = folder.logs / "attacker.jsonl"
    folder_fd = os.open(attacked, os.O_RDONLY | os.O_DIRECTORY)
    parent_fd = os.open(folder.parent, os.O_RDONLY | os.O_DIRECTORY)
    log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        argv = [
            "setpriv", f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--",
            readable.script_python, "-I", readable.script("attacker.py"), case.strategy,
            str(folder_fd), str(parent_fd), str(victim), str(victims), str(log_fd),
        ]  # fmt: skip
        process = subprocess.Popen(
            argv,
            pass_fds=(folder_fd, parent_fd, log_fd),
            env={"PATH": os.environ.get("PATH", ""), harness.MARKER_ENV: folder.marker},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=(folder.logs / "attacker.stderr").open("wb"),
            cwd="/",
        )
    finally:
        for descriptor in (folder_fd, parent_fd, log_fd):
            os.close(descriptor)
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while not _steps(log):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(
                f"the attacker did not start: {harness._read(folder.logs, 'attacker.stderr')}"
            )
        time.sleep(0.01)
    return process, log


def _refused_as_replaced(stderr: str, *, gone_allowed: bool) -> bool:
    """The documented refusal when the user swapped a folder between flashmark's checks: one
    line saying the folder changed or was replaced, and that nothing was written; or, when
    the user moves the target folder itself (`gone_allowed`), that it is not there."""
    errors = harness.error_lines(stderr)
    said = ["changed after it was checked", "was replaced", "owned by another user"]
    if gone_allowed:
        # "TARGET: no such folder, file or device" (each command names what it takes)
        said += [": no such ", "No such file or directory", "does not exist"]
    return len(errors) == 1 and any(words in errors[0] for words in said)


def _steps(log: Path) -> list[dict[str, str]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _owned_entries(root: Path) -> dict[str, tuple[int, str]]:
    """Every entry under `root` (not following links): relative name -> (owner, what)."""
    found: dict[str, tuple[int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            status = path.lstat()
            if stat.S_ISLNK(status.st_mode):
                what = "link"
            elif stat.S_ISDIR(status.st_mode):
                what = "empty folder" if not any(path.iterdir()) else "folder"
            elif stat.S_ISREG(status.st_mode):
                what = f"file of {status.st_size} bytes"
            else:
                what = "special file"
            found[str(path.relative_to(root))] = (status.st_uid, what)
    return found


def _victim_state(victim: Path, victims: Path) -> tuple[dict[str, str], tuple[int, int, int]]:
    status = victim.lstat()
    return harness.snapshot(victims), (status.st_ino, status.st_size, status.st_mtime_ns)


def _race_in(
    case: RaceCase,
    user: User,
    readable: code_for_others.CodeForOthers,
    device: EmulatedDevice,
    folder: harness.CaseFolder,
    outcome: harness.Outcome,
) -> None:
    victim, victims = _prepare(case, user, folder)
    photo = folder.target / "photo.jpg"  # the folder owner's own file: never touched
    photo.write_bytes(secrets.token_bytes(2048))
    photo_digest = hashlib.sha256(photo.read_bytes()).hexdigest()
    victims_before = _victim_state(victim, victims)
    attacked = folder.parent if case.place == PARENT else folder.target
    if case.place == TMPDIR:
        attacked = folder.tmpdir
    before = _owned_entries(attacked)
    attacker, log = _start_attacker(case, user, readable, folder, victim, victims)
    started = time.monotonic()
    try:
        flashmark = subprocess.run(
            device.command(_argv(case, folder)),
            env=folder.env(),
            cwd=folder.root,
            capture_output=True,
            text=True,
            timeout=_RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        outcome.problems.append(f"still running {_RUN_TIMEOUT_S:.0f} s into the attack")
        return
    finally:
        attacker.terminate()
        try:
            attacker.wait(timeout=10)
        except subprocess.TimeoutExpired:
            attacker.kill()
            attacker.wait()
    seconds = time.monotonic() - started
    steps = _steps(log)
    tried = sorted(
        {f"{s['step']} {s['result']}" for s in steps if s["step"] not in ("start", "stop")}
    )
    outcome.note = f"exit {flashmark.returncode} after {seconds:.1f} s; the user tried: " + (
        ", ".join(tried) or "nothing (no name of flashmark's appeared)"
    )
    code, stderr = flashmark.returncode, flashmark.stderr
    if case.strategy == "link-target" and not (code == 4 and "owned by another" in stderr):
        outcome.problems.append(f"exit {code}, not refused: {harness._tail(stderr)}")
    elif code == 4 and _refused_as_replaced(stderr, gone_allowed=case.place == PARENT):
        outcome.problems += harness.one_error_line(stderr, "refusal")
    elif code != 0:
        outcome.problems.append(f"exit {code} under the attack: {harness._tail(stderr)}")
    if "Traceback" in stderr:
        outcome.problems.append(f"traceback: {harness._tail(stderr)}")
    if case.place == TMPDIR:
        outcome.note += " (flashmark put its work folder elsewhere)" if not tried else ""
    elif not tried:
        outcome.problems.append("the attack never started: no name of flashmark's was seen")
    if _victim_state(victim, victims) != victims_before:
        outcome.problems.append(
            "root wrote outside its area: the victim folder changed: "
            f"{harness.snapshot_changes(victims_before[0], harness.snapshot(victims))}, "
            f"victim file (inode, size, mtime) {victims_before[1]} -> "
            f"{_victim_state(victim, victims)[1]}"
        )
    # Back in its place for the checks below, if the attack left the target flipped.
    real = folder.parent / "target-real-by-attacker"
    if real.is_dir():
        if folder.target.is_symlink():
            folder.target.unlink()
        real.rename(folder.target)
    if not photo.exists() or hashlib.sha256(photo.read_bytes()).hexdigest() != photo_digest:
        outcome.problems.append("the folder owner's own file was changed or removed")
    after = _owned_entries(attacked)
    for name, (owner, what) in sorted(after.items()):
        if name in before or owner != 0 or what in ("empty folder",):
            continue
        outcome.problems.append(f"root left {what} {name!r} in the user's folder")
    left = harness.wait_for_no_processes(folder.marker, 5.0)
    if left:
        outcome.problems.append(f"processes left running: {harness.describe(left)}")
