"""The command that adds an optional part of flashmark (an extra of pyproject.toml: `server`,
`fleet`) for the way this flashmark was installed, said in one place for every "needs the
... extra" message. flashmark is on no package index, so the command installs the extra from
where this flashmark came from:

- install.sh's venv (/opt/flashmark; install.sh leaves MARKER in it, naming its source folder):
  install.sh again, from that folder, with --with EXTRA (it asks for sudo itself);
- pipx: `pipx install --force` with the extra, from the same place;
- any other venv or Python: its own pip, from the wheel or folder pip recorded in the
  installed metadata (PEP 610's direct_url.json), else from an index;
- Debian's python3 (dist-packages under /usr/lib/python3): the Debian package of the extra
  (debian/control: flashmark-server, flashmark-fleet), which is in no archive: apt installs the
  file dpkg-buildpackage made beside flashmark's own. Debian 12's packages are too old for
  either: there install.sh, from flashmark's source folder.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from enum import Enum
from importlib import metadata
from pathlib import Path

NAME = "flashmark"
# Written by install.sh into its venv: the source folder it installed from.
MARKER = "flashmark-install-source"
DEBIAN_PACKAGES = Path("/usr/lib/python3/dist-packages")
OS_RELEASE = Path("/etc/os-release")
# The first Debian release whose Starlette, uvicorn, psycopg-pool and ansible-core are as new as
# flashmark-server and flashmark-fleet need (debian/control); Raspberry Pi OS shares its numbers.
DEBIAN_EXTRAS_FROM = 13


class InstallKind(Enum):
    INSTALL_SH = "install.sh"
    PIPX = "pipx"
    VENV = "venv"
    DEBIAN = "debian"
    SYSTEM = "system"


@dataclass(frozen=True)
class Installation:
    """How this flashmark was installed: its kind, its Python's prefix and interpreter, where
    it was installed from (a file:// URL, or "" for an index) and whether it is editable."""

    kind: InstallKind
    prefix: Path
    python: Path
    origin: str = ""
    editable: bool = False
    source: Path | None = None  # install.sh's source folder
    debian_release: int | None = None  # the Debian (or Raspberry Pi OS) release it runs on

    def add_extra(self, extra: str) -> str:
        """A shell command that adds the extra to this installation."""
        if self.kind is InstallKind.DEBIAN:
            if self.debian_release is not None and self.debian_release < DEBIAN_EXTRAS_FROM:
                return (
                    f"./install.sh --with {extra} (in flashmark's source folder: Debian "
                    f"{self.debian_release}'s packages are too old for {NAME}-{extra})"
                )
            return (
                f"sudo apt install ./{NAME}-{extra}_*_all.deb (in the folder where "
                f"dpkg-buildpackage made {NAME}'s packages)"
            )
        if self.kind is InstallKind.INSTALL_SH and self.source is not None:
            dev = " --dev" if self.editable else ""
            script = self.source / "install.sh"
            if script.is_file():  # it asks for sudo itself when it needs to
                return f"{shlex.quote(str(script))}{dev} --with {extra}"
            return (
                f"./install.sh{dev} --with {extra} (in flashmark's source folder: "
                f"{self.source}, which installed it, is gone)"
            )
        requirement = self._requirement(extra)
        if self.kind is InstallKind.PIPX:
            return f"pipx install --force {requirement}"
        sudo = "" if os.access(self.prefix, os.W_OK) else "sudo "
        return f"{sudo}{shlex.quote(str(self.python))} -m pip install {requirement}"

    def _requirement(self, extra: str) -> str:
        if self.editable and self.origin.startswith("file://"):
            return "-e " + shlex.quote(f"{_path(self.origin)}[{extra}]")
        if self.origin.startswith("file://") and Path(_path(self.origin)).exists():
            return shlex.quote(f"{NAME}[{extra}] @ {self.origin}")
        return shlex.quote(f"{NAME}[{extra}]")


def installation(
    prefix: Path | None = None,
    base_prefix: Path | None = None,
    module: Path | None = None,
    direct_url: str | None = None,
    os_release: Path = OS_RELEASE,
) -> Installation:
    """This flashmark's installation. The arguments describe another one (tests): its
    Python's sys.prefix and sys.base_prefix, where its package is, its direct_url.json and
    the system's os-release file."""
    prefix = Path(sys.prefix) if prefix is None else prefix
    base_prefix = Path(sys.base_prefix) if base_prefix is None else base_prefix
    module = Path(__file__).resolve() if module is None else module
    python = prefix / "bin" / "python" if prefix != base_prefix else Path(sys.executable)
    origin, editable = _origin(_direct_url() if direct_url is None else direct_url)
    if module.is_relative_to(DEBIAN_PACKAGES):
        return Installation(
            InstallKind.DEBIAN, prefix, python, debian_release=_debian_release(os_release)
        )
    if prefix == base_prefix:
        return Installation(InstallKind.SYSTEM, prefix, python, origin, editable)
    if (prefix / MARKER).is_file():
        source = Path((prefix / MARKER).read_text(encoding="utf-8").strip())
        return Installation(InstallKind.INSTALL_SH, prefix, python, origin, editable, source)
    if "pipx" in prefix.parts and "venvs" in prefix.parts:
        return Installation(InstallKind.PIPX, prefix, python, origin, editable)
    return Installation(InstallKind.VENV, prefix, python, origin, editable)


def add_extra(extra: str) -> str:
    """The command that adds `extra` to the running flashmark."""
    return installation().add_extra(extra)


def _debian_release(os_release: Path) -> int | None:
    """The release number of Debian or Raspberry Pi OS (os-release(5): ID, VERSION_ID); None
    for another system, testing or unstable (no VERSION_ID), or no readable file."""
    try:
        text = os_release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = dict(
        (key, value.strip().strip("'\""))
        for key, _, value in (line.partition("=") for line in text.splitlines())
    )
    version = fields.get("VERSION_ID", "")
    if fields.get("ID") not in ("debian", "raspbian") or not version.isdigit():
        return None
    return int(version)


def _direct_url() -> str:
    try:
        return metadata.distribution(NAME).read_text("direct_url.json") or ""
    except metadata.PackageNotFoundError:
        return ""


def _origin(direct_url: str) -> tuple[str, bool]:
    """PEP 610's record of where the installed flashmark came from: its URL and whether it is
    an editable install; ("", False) when it came from an index (no record)."""
    try:
        record = json.loads(direct_url or "{}")
    except ValueError:
        return "", False
    if not isinstance(record, dict):
        return "", False
    url = str(record.get("url", ""))
    info = record.get("dir_info")
    return url, bool(isinstance(info, dict) and info.get("editable", False))


def _path(url: str) -> str:
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(url).path)
