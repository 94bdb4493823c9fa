"""A wheel of the running flashmark, for boards that lack it (the collection's install tasks copy
it to each board and pip installs it there). Made from the running package's own files and its
installed metadata (METADATA, entry_points.txt), so it is the same wherever this flashmark came
from: a wheel, the venv of install.sh, an editable install or a source tree on the PYTHONPATH.
The format is PEP 427's: a zip of the package and a .dist-info folder with WHEEL and RECORD.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import re
import zipfile
from pathlib import Path

import flashmark
from flashmark.errors import EnvironmentProblem

NAME = "flashmark"
# PEP 427: a pure-Python wheel for any Python 3 on any platform.
TAG = "py3-none-any"
SKIPPED = {"__pycache__"}


def wheel_name(version: str) -> str:
    return f"{NAME}-{version}-{TAG}.whl"


def build_running_wheel(folder: Path) -> Path:
    """Write the running flashmark as a wheel into `folder`; its path."""
    version = flashmark.__version__
    try:
        distribution = importlib.metadata.distribution(NAME)
        # An egg-info (setuptools' own, beside a source tree) calls its METADATA PKG-INFO.
        metadata = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO")
        entry_points = distribution.read_text("entry_points.txt")
    except importlib.metadata.PackageNotFoundError:
        metadata = entry_points = None
    if not metadata or not entry_points:
        raise EnvironmentProblem(
            "cannot make a wheel of this flashmark for the boards (it has no installed "
            "metadata): give one with --wheel FILE (python -m build in its source folder)"
        )
    # The files are the running ones: the metadata says their version, whatever it said.
    metadata = re.sub(r"(?m)^Version: .*$", f"Version: {version}", metadata, count=1)
    info = f"{NAME}-{version}.dist-info"
    package = Path(flashmark.__file__).resolve().parent
    members: list[tuple[str, bytes]] = [
        (path.relative_to(package.parent).as_posix(), path.read_bytes())
        for path in sorted(package.rglob("*"))
        if path.is_file()
        and not SKIPPED & set(path.relative_to(package).parts)
        and path.suffix != ".pyc"
    ]
    members += [
        (f"{info}/METADATA", metadata.encode()),
        (f"{info}/entry_points.txt", entry_points.encode()),
        (f"{info}/WHEEL", _wheel_file().encode()),
    ]
    record = "".join(f"{name},{_digest(data)},{len(data)}\n" for name, data in members)
    members.append((f"{info}/RECORD", (record + f"{info}/RECORD,,\n").encode()))
    target = folder / wheel_name(version)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name, data in members:
            wheel.writestr(name, data)
    return target


def _wheel_file() -> str:
    """The .dist-info's WHEEL file (PEP 427)."""
    return f"Wheel-Version: 1.0\nGenerator: flashmark\nRoot-Is-Purelib: true\nTag: {TAG}\n"


def _digest(data: bytes) -> str:
    """RECORD's hash (PEP 376, PEP 427): sha256, urlsafe base64 without padding."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"
