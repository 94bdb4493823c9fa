"""The wheel `flashmark fleet run` makes of the running flashmark for the boards (wheel.py): a
PEP 427 wheel of this package's files, the collection among them, whose RECORD matches what
it holds, and which pip installs (tests/fleet/test_fleet.py installs it on a board)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import flashmark
from flashmark.fleet.wheel import build_running_wheel

PACKAGE = Path(flashmark.__file__).resolve().parent


def test_the_running_wheel_holds_this_package_and_a_record_of_it(tmp_path: Path):
    wheel = build_running_wheel(tmp_path)
    assert wheel.name == f"flashmark-{flashmark.__version__}-py3-none-any.whl"
    info = f"flashmark-{flashmark.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        record = archive.read(f"{info}/RECORD").decode().splitlines()
        contents = {name: archive.read(name) for name in names}
    expected = {
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    assert {name for name in names if not name.startswith(info)} == expected
    assert "flashmark/fleet/collection/playbooks/fleet.yml" in names
    metadata = contents[f"{info}/METADATA"].decode()
    assert f"\nVersion: {flashmark.__version__}\n" in metadata
    assert "flashmark = flashmark.entry:main" in contents[f"{info}/entry_points.txt"].decode()
    assert "Root-Is-Purelib: true" in contents[f"{info}/WHEEL"].decode()
    # Every file but RECORD itself is in RECORD with its sha256 and size (PEP 376).
    rows = dict(line.split(",", 1) for line in record)
    assert rows.pop(f"{info}/RECORD") == ","
    assert set(rows) == set(names) - {f"{info}/RECORD"}
    for name, row in rows.items():
        digest, size = row.split(",")
        data = contents[name]
        encoded = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (f"sha256={encoded}", len(data)), name
