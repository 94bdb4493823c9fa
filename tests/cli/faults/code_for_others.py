"""What the fault tier runs as another user (races.py's attacker, durable_harness.py's uid
without a passwd entry): a copy of the flashmark package under test and of the scripts that
user runs, in a folder every user can read, and interpreters every user can run.

The checkout may sit where only root can enter (a clone under /root, or in a home folder:
Debian 12 makes both 0700); another user could then neither open attacker.py nor import
flashmark from it. So both are copied to a fresh folder under a temporary folder every user
can traverse: folders 0755, files 0644, root's (the user reads them and cannot change them).
The package copied is the one this process imports (PYTHONPATH, an editable or a regular
install), so the other user runs the code under test. Whether that user really can run it is
tried once, as a uid of no group and no passwd entry, i.e. with the permissions of "others".
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import flashmark

ATTACKER = Path(__file__).with_name("attacker.py")
# A uid (and gid) with no passwd entry: a user that has nothing but the permissions of others.
NO_PASSWD_UID = 54321
# The interpreter install.sh builds its venv from: the scripts' fallback when the test's own
# interpreter is out of others' reach (e.g. pyenv's under /root/.pyenv). They need only the
# standard library.
SYSTEM_PYTHON = "/usr/bin/python3"
_PROBE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class CodeForOthers:
    """Where another user finds the code it runs, and what runs it."""

    folder: Path  # holds flashmark/ and the scripts: the other user's PYTHONPATH
    script_python: str  # runs the copied scripts (standard library only, with -I)
    python: str | None  # runs the copied flashmark: the test's interpreter, with its packages
    why_not: str  # when `python` is None: why another user cannot run flashmark

    def script(self, name: str) -> str:
        return str(self.folder / name)

    def flashmark(self, *args: str) -> list[str]:
        """`python -m flashmark ARGS` as another user; the environment must come from env()."""
        if self.python is None:
            raise RuntimeError(self.why_not)
        return [self.python, "-m", "flashmark", *args]

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """`base` with the copy as the only PYTHONPATH entry, so it is the flashmark imported."""
        return {**base, "PYTHONPATH": str(self.folder)}


@contextlib.contextmanager
def readable_copy(scripts: tuple[Path, ...] = (ATTACKER,)) -> Iterator[CodeForOthers]:
    """The copy (removed afterwards) and the interpreters that others can run with it."""
    try:
        owner: str | None = pwd.getpwuid(NO_PASSWD_UID).pw_name
    except KeyError:
        owner = None
    if owner is not None:
        raise RuntimeError(f"uid {NO_PASSWD_UID} is {owner}'s: the probe needs one of nobody's")
    folder = Path(tempfile.mkdtemp(prefix="flashmark-code-for-others-", dir=_traversable_temp()))
    try:
        package = Path(flashmark.__file__).parent
        shutil.copytree(package, folder / "flashmark", ignore=shutil.ignore_patterns("__pycache__"))
        for script in scripts:
            shutil.copyfile(script, folder / script.name)
        _readable_by_all(folder)
        python, why_not = _flashmark_python(folder)
        yield CodeForOthers(folder, _script_python(), python, why_not)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _traversable_temp() -> str:
    """The temporary folder, or the first usual one, whose every component others can enter."""
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        path = Path(candidate).resolve()
        if path.is_dir() and all(
            os.stat(part).st_mode & stat.S_IXOTH for part in (path, *path.parents)
        ):
            return str(path)
    raise RuntimeError("no temporary folder that other users can enter: set TMPDIR to one")


def _readable_by_all(folder: Path) -> None:
    folder.chmod(0o755)
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)


def _as_others(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["setpriv", f"--reuid={NO_PASSWD_UID}", f"--regid={NO_PASSWD_UID}", "--clear-groups",
         "--", *argv],
        env=env, cwd="/", stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=_PROBE_TIMEOUT_S, check=False,
    )  # fmt: skip


def _flashmark_python(folder: Path) -> tuple[str | None, str]:
    """The test's interpreter if others can run flashmark's command line with it from the
    copy (and import the copy, not another flashmark), else None and why."""
    probe = "import flashmark.cli, flashmark.entry; print(flashmark.__file__)"
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(folder), "LC_ALL": "C.UTF-8"}
    done = _as_others([sys.executable, "-c", probe], env)
    imported = done.stdout.strip()
    if done.returncode == 0 and imported == str(folder / "flashmark" / "__init__.py"):
        return sys.executable, ""
    said = (done.stderr.strip().splitlines() or [f"it imported {imported!r}"])[-1]
    return None, (
        f"another user cannot run flashmark with {sys.executable} from {folder}: {said}; "
        "run the tests with an interpreter that every user can run, such as install.sh's "
        "/opt/flashmark/bin/python"
    )


def _script_python() -> str:
    """The first of the test's interpreter and the system's that others can start."""
    tried = []
    for python in dict.fromkeys((sys.executable, SYSTEM_PYTHON)):
        done = _as_others([python, "-I", "-c", "pass"], {"PATH": os.environ.get("PATH", "")})
        if done.returncode == 0:
            return python
        tried.append(f"{python}: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    raise RuntimeError(f"no Python that another user can run ({'; '.join(tried)})")
