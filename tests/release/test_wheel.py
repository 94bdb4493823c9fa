"""The release as a user gets it: the sdist and the wheel built from this tree (python -m
build: the wheel is built from the sdist), the wheel alone installed into a new venv of the
system Python (its dependencies from PyPI), and every feature there: `flashmark run`, the
command its "needs the server extra" message gives run as printed and `flashmark serve`
answering then, and `flashmark fleet run` finding the Ansible collection the wheel carries.
Skipped, with the reason, where PyPI cannot be reached (the build backend and the
dependencies come from it)."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from flashmark import __version__
from flashmark.bench.disturbance import WAIT_BUDGET_ENV
from flashmark.errors import ExitStatus

pytestmark = [pytest.mark.wheel, pytest.mark.fio]
REPOSITORY = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")
# What the copy of the tree to build from leaves out: caches, builds, the git folder.
LEFT_OUT = shutil.ignore_patterns(
    ".git", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", ".hypothesis", ".venv",
    "test-artifacts", "tests",
)
# The collection as the wheel must carry it (flashmark/fleet/collection).
COLLECTION_FILES = (
    "galaxy.yml",
    "playbooks/fleet.yml",
    "roles/benchmark/tasks/install.yml",
    "plugins/callback/progress.py",
    "plugins/filter/fleet.py",
)


def pypi_unreachable_reason() -> str | None:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError as error:
        return f"PyPI cannot be reached ({error}): the build and the dependencies need it"
    return None


@dataclass(frozen=True)
class Release:
    sdist: Path
    wheel: Path
    venv: Path
    home: Path

    def environment(self) -> dict[str, str]:
        """A user's: the venv's programs and the system's, no PYTHONPATH to this tree; without
        the wait for a quiet host, as every run that judges no figure (tests/conftest.py)."""
        return {
            "PATH": f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "TMPDIR": str(self.home),
            "LC_ALL": "C.UTF-8",
            WAIT_BUDGET_ENV: "0",
        }

    def run(self, *argv: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(part) for part in argv], capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL, env=self.environment(), cwd=self.home,
        )  # fmt: skip

    def flashmark(
        self, *args: str | Path, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return self.run(self.venv / "bin" / "flashmark", *args, timeout=timeout)


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Release]:
    reason = pypi_unreachable_reason()
    if reason:
        pytest.skip(reason)
    if not SYSTEM_PYTHON.is_file():
        pytest.skip(f"no {SYSTEM_PYTHON}: the venv is made with the system Python")
    folder = tmp_path_factory.mktemp("release")
    tree = folder / "tree"
    shutil.copytree(REPOSITORY, tree, ignore=LEFT_OUT)
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(folder / "dist"), str(tree)],
        capture_output=True, text=True, timeout=300, env=environment,
    )  # fmt: skip
    if built.returncode != 0 and "No module named build" in built.stderr:
        pytest.skip("python -m build is missing: install the dev extra (install.sh --dev)")
    assert built.returncode == 0, built.stdout + built.stderr
    sdist = folder / "dist" / f"flashmark-{__version__}.tar.gz"
    wheel = folder / "dist" / f"flashmark-{__version__}-py3-none-any.whl"
    venv = folder / "venv"
    home = folder / "home"
    home.mkdir()
    made = subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", str(venv)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"the system Python cannot make a venv: {made.stderr.strip()[-200:]}")
    release = Release(sdist, wheel, venv, home)
    installed = release.run(venv / "bin" / "pip", "install", "--quiet", wheel)
    assert installed.returncode == 0, installed.stderr
    yield release


def test_the_sdist_and_the_wheel_carry_the_ansible_collection(release: Release):
    with zipfile.ZipFile(release.wheel) as wheel:
        names = set(wheel.namelist())
    with tarfile.open(release.sdist) as sdist:
        members = set(sdist.getnames())
    for name in COLLECTION_FILES:
        assert f"flashmark/fleet/collection/{name}" in names
        assert f"flashmark-{__version__}/src/flashmark/fleet/collection/{name}" in members
    assert not [name for name in names if "__pycache__" in name]


def test_the_wheel_s_flashmark_runs_a_benchmark(release: Release):
    target = release.home / "card"
    target.mkdir()
    done = release.flashmark(
        "run", target, "--profile", "quick", "--size", "4M", "--runtime", "1", "--ramp", "1",
        "--db", release.home / "history.sqlite3", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("verdict: ") and "saved as #1" in done.stdout


def test_the_wheel_s_flashmark_writes_a_health_timer_from_the_units_it_carries(
    release: Release,
):
    with zipfile.ZipFile(release.wheel) as wheel:
        names = set(wheel.namelist())
    for suffix in ("service", "timer"):
        assert f"flashmark/health/units/flashmark-health.{suffix}" in names
    units = release.home / "units"  # never the machine's /etc/systemd/system
    done = release.run(
        "env", f"FLASHMARK_UNIT_DIR={units}", release.venv / "bin" / "flashmark", "health",
        "--install-timer", release.home, "--db", release.home / "history.sqlite3",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (service,) = units.glob("*.service")
    (start,) = [line for line in service.read_text().splitlines() if line.startswith("ExecStart=")]
    python, *arguments = shlex.split(start.removeprefix("ExecStart="))
    # The venv's own interpreter (its python or python3, whichever ran the entry point).
    assert Path(python).parent == release.venv / "bin"
    assert Path(python).samefile(release.venv / "bin" / "python")
    assert arguments == [
        "-m", "flashmark", "health", "--record", "--db",
        str(release.home / "history.sqlite3"), str(release.home),
    ]  # fmt: skip


def test_serve_s_hint_run_as_printed_makes_serve_start(release: Release):
    port = free_port()
    serve = ("serve", "--host", "127.0.0.1", "--port", str(port))
    refused = release.flashmark(*serve)
    assert refused.returncode == 3
    prefix = "flashmark: error: `flashmark serve` needs the server extra ("
    line = refused.stderr.strip()
    assert line.startswith(prefix), line
    hint = line.split("): ", 1)[1]
    assert hint == (
        f"{release.venv}/bin/python -m pip install 'flashmark[server] @ {release.wheel.as_uri()}'"
    )
    added = release.run("sh", "-c", hint)
    assert added.returncode == 0, added.stderr
    with _serving(release, serve) as url, urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.status == 200
        assert b"flashmark" in answer.read()


def test_fleet_run_finds_the_collection_the_wheel_carries(release: Release):
    shown = release.flashmark("fleet", "collection")
    assert shown.returncode == 0, shown.stderr
    collection = Path(shown.stdout.strip())
    assert collection.is_relative_to(release.venv / "lib")
    for name in COLLECTION_FILES:
        assert (collection / name).is_file(), name
    inventory = release.home / "boards.yml"
    inventory.write_text("all:\n  hosts:\n    board-01: {ansible_connection: local}\n")
    fleet = (
        "fleet", "run", inventory, "--campaign", "lab", "--server",
        f"http://127.0.0.1:{free_port()}", "--token", "fmk_x",
    )  # fmt: skip
    refused = release.flashmark(*fleet)
    assert refused.returncode == 3
    hint = refused.stderr.strip().split("(the fleet extra): ", 1)[1]
    assert hint.endswith(f"'flashmark[fleet] @ {release.wheel.as_uri()}'")
    added = release.run("sh", "-c", hint)
    assert added.returncode == 0, added.stderr
    # Ansible and the collection found, no --collection given: it stops at the service only.
    stopped = release.flashmark(*fleet)
    assert stopped.returncode == ExitStatus.SERVICE
    assert "flashmark: error: cannot reach http://127.0.0.1:" in stopped.stderr
    # The Galaxy tarball for people who run their own Ansible, from the same folder.
    built = release.run(
        release.venv / "bin" / "ansible-galaxy", "collection", "build", collection,
        "--output-path", release.home,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    with tarfile.open(release.home / f"flashmark-fleet-{__version__}.tar.gz") as tarball:
        names = set(tarball.getnames())
    assert {"MANIFEST.json", *COLLECTION_FILES} - {"galaxy.yml"} <= names  # galaxy.yml: MANIFEST
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def _serving(release: Release, serve: tuple[str, ...]) -> Iterator[str]:
    log = release.home / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(release.venv / "bin" / "flashmark"), *serve], stdout=output,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=release.environment(),
            cwd=release.home, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{serve[-1]}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
