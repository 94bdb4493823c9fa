"""The Debian package as a Debian user gets it: flashmark_VERSION_all.deb built from this tree
with Debian's tooling (dpkg-buildpackage: debhelper, pybuild's pyproject plugin), lintian clean
at warning level, then installed with apt into a throwaway Debian 12 root (debootstrap's minbase
variant from the machine's apt mirror, never the host's own Python), used there (`flashmark
--help`, `flashmark run` on a folder, `flashmark health --install-timer`), removed (the timer
disabled) and purged: afterwards no file of it is left outside dpkg's state and the logs, the
timer's units included. Skipped, with the reason, without the tools or the mirror."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from flashmark import __version__
from flashmark.bench.disturbance import WAIT_BUDGET_ENV

pytestmark = [pytest.mark.debian, pytest.mark.root]
REPOSITORY = Path(__file__).resolve().parents[2]
TOOLS = ("dpkg-buildpackage", "dh", "lintian", "debootstrap", "chroot")
SUITE = "bookworm"
# A clean PATH: the build must use Debian's python3, not one a developer put first.
DEBIAN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# What dpkg and apt keep about packages, and their logs: the only places a purged package
# may leave a trace. The HOME the commands run with holds the user's history (user data,
# which a purge never touches).
STATE_AND_LOGS = (
    "var/lib/dpkg/", "var/log/", "var/cache/apt/", "var/lib/apt/", "var/cache/debconf/",
    "var/cache/ldconfig/", "home/",
)
MOUNTS = ("proc", "sys", "dev")


def missing_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (debootstrap, chroot)"
    missing = [tool for tool in TOOLS if shutil.which(tool, path=DEBIAN_PATH) is None]
    if missing:
        return ("needs " + ", ".join(missing) + " (apt-get install debhelper dh-python "
                "pybuild-plugin-pyproject python3-all lintian debootstrap)")
    return None


def mirror() -> str:
    """The machine's own Debian mirror (deb822 or one-line sources), the only one reachable."""
    for sources in sorted(Path("/etc/apt").glob("sources.list*")) + sorted(
        Path("/etc/apt/sources.list.d").glob("*")
    ):
        if sources.is_file():
            found = re.search(r"(?:URIs:|deb)\s+(https?://\S+/debian)/?\s", sources.read_text())
            if found:
                return found.group(1)
    return "http://deb.debian.org/debian"


def run(*command: str, cwd: Path | None = None) -> str:
    env = {**os.environ, "PATH": DEBIAN_PATH, "DEBIAN_FRONTEND": "noninteractive",
           "LC_ALL": "C.UTF-8"}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, (
        f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    build = tmp_path_factory.mktemp("deb")
    tree = build / "flashmark"
    shutil.copytree(REPOSITORY, tree, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", ".hypothesis",
        ".venv", "test-artifacts", "tests"))
    run("dpkg-buildpackage", "-us", "-uc", "-b", cwd=tree)
    architecture = run("dpkg", "--print-architecture").strip()  # the .changes file's name
    run("lintian", "--fail-on", "error,warning", f"flashmark_{__version__}_{architecture}.changes",
        cwd=build)
    return build / f"flashmark_{__version__}_all.deb"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, package: Path) -> Iterator[Path]:
    """A minimal Debian 12 root with the package's dependencies (read from the package
    itself), /proc, /sys and /dev mounted, all unmounted and removed afterwards."""
    root = tmp_path_factory.mktemp("root")
    depends = run("dpkg-deb", "-f", str(package), "Depends")
    names = [re.split(r"[\s:(]", alternative.strip())[0] for alternative in depends.split(",")]
    include = ",".join(name for name in names if name != "python3")
    run("debootstrap", "--variant=minbase", f"--include=python3,{include}", SUITE, str(root),
        mirror())
    mounted: list[Path] = []
    try:
        for name in MOUNTS:
            run("mount", "--bind", f"/{name}", str(root / name))
            mounted.append(root / name)
        yield root
    finally:
        for point in reversed(mounted):
            subprocess.run(["umount", "--lazy", str(point)], check=False)
        # Never remove through a mount that is still there: it would be the host's /dev.
        if not any(point.is_mount() for point in mounted):
            shutil.rmtree(root, ignore_errors=True)


def files(root: Path) -> set[str]:
    """Every path under root outside dpkg's and apt's state, the logs and the mount points."""
    found: set[str] = set()
    for folder, subfolders, names in os.walk(root):
        relative = os.path.relpath(folder, root)
        if relative in MOUNTS or relative.startswith(("tmp",)):
            subfolders.clear()
            continue
        for name in [*names, *subfolders]:
            path = os.path.normpath(os.path.join(relative, name))
            if not (path + "/").startswith(STATE_AND_LOGS):
                found.add(path)
    return found


def test_installs_runs_and_purges_without_a_trace(root: Path, package: Path) -> None:
    before = files(root)
    shutil.copy(package, root / "tmp" / package.name)
    # A clean environment: none of this test process's (its lock folder, its history).
    in_root = ("chroot", str(root), "env", "-i", f"PATH={DEBIAN_PATH}", "HOME=/home/user",
               "LC_ALL=C.UTF-8", "DEBIAN_FRONTEND=noninteractive")
    run(*in_root, "apt-get", "install", "-y", "--no-install-recommends", f"/tmp/{package.name}")
    assert "/usr/lib/python3/dist-packages/flashmark/__init__.py" in run(
        *in_root, "dpkg", "-L", "flashmark")

    assert "Usage: flashmark" in run(*in_root, "flashmark", "--help")
    (root / "home" / "user" / "card").mkdir(parents=True)
    # Without the wait for a quiet host, as every run that judges no figure (tests/conftest.py).
    output = run(*in_root, f"{WAIT_BUDGET_ENV}=0", "flashmark", "run", "--size", "8M",
                 "--runtime", "1", "/home/user/card")
    assert "/home/user/card" in output
    assert list((root / "home" / "user" / "card").iterdir()) == []  # its test file removed

    # A health timer, installed as on a machine with systemd (its unit folders there before
    # the package) and enabled as `systemctl enable` links it: a remove disables it (its
    # command is gone), the purge removes it.
    units = root / "etc" / "systemd" / "system"
    for folder in ("etc/systemd", "etc/systemd/system", "etc/systemd/system/timers.target.wants"):
        if not (root / folder).is_dir():
            (root / folder).mkdir()
            before.add(folder)
    output = run(*in_root, "flashmark", "health", "--install-timer", "/")
    assert "flashmark-health.timer" in output
    service = (units / "flashmark-health.service").read_text()
    assert "ExecStart=/usr/bin/python3 -m flashmark health --record --db " in service
    enabled = units / "timers.target.wants" / "flashmark-health.timer"
    enabled.symlink_to("/etc/systemd/system/flashmark-health.timer")
    foreign = units / "flashmark-health-other.timer"  # a unit of the same name, not flashmark's
    foreign.write_text("[Timer]\nOnCalendar=daily\n")
    foreign_enabled = units / "timers.target.wants" / foreign.name
    foreign_enabled.symlink_to(f"/etc/systemd/system/{foreign.name}")

    run(*in_root, "apt-get", "remove", "-y", "flashmark")
    assert not enabled.is_symlink()
    assert (units / "flashmark-health.timer").is_file()  # a remove keeps what a purge deletes
    assert foreign_enabled.is_symlink()
    foreign_enabled.unlink()
    run(*in_root, "apt-get", "purge", "-y", "flashmark")
    assert foreign.read_text() == "[Timer]\nOnCalendar=daily\n"
    foreign.unlink()
    assert files(root) == before
    statuses = run(*in_root, "dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n")
    assert not [line for line in statuses.splitlines()
                if line.split()[0] == "flashmark" and line.split()[1] != "not-installed"]
