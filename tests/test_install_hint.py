"""The command each kind of installation is told to run to add an extra (install_hint.py), on
fake layouts of each: install.sh's venv, pipx, a plain venv (from a wheel, an index, an
editable source), Debian's python3 and a Python of its own. tests/release runs one for real."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from flashmark.install_hint import MARKER, InstallKind, installation

REPOSITORY = Path(__file__).resolve().parents[1]
BASE = Path("/usr")


def wheel_url(path: Path) -> str:
    return json.dumps({"url": path.as_uri(), "archive_info": {}})


def folder_url(path: Path, editable: bool) -> str:
    return json.dumps({"url": path.as_uri(), "dir_info": {"editable": editable}})


def venv(tmp_path: Path) -> Path:
    prefix = tmp_path / "venv"
    prefix.mkdir()  # one this user may write to: no sudo
    return prefix


def install_sh_venv(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "flashmark source"
    source.mkdir()
    (source / "install.sh").write_text("#!/bin/sh\n")
    prefix = tmp_path / "opt" / "flashmark"
    prefix.mkdir(parents=True)
    (prefix / MARKER).write_text(f"{source}\n")
    return prefix, source


def test_install_sh_says_where_its_marker_is_kept():
    # install.sh writes the marker this module reads: the one name, said in both.
    assert f'"$PREFIX/{MARKER}"' in (REPOSITORY / "install.sh").read_text()


def test_install_sh_s_venv_runs_install_sh_again_from_its_source_with_the_extra(tmp_path):
    prefix, source = install_sh_venv(tmp_path)
    found = installation(prefix, BASE, prefix / "lib", folder_url(source, editable=False))
    assert found.kind is InstallKind.INSTALL_SH
    assert found.add_extra("server") == f"'{source}/install.sh' --with server"
    editable = installation(prefix, BASE, prefix / "lib", folder_url(source, editable=True))
    assert editable.add_extra("fleet") == f"'{source}/install.sh' --dev --with fleet"


def test_install_sh_s_venv_whose_source_is_gone_says_so(tmp_path):
    prefix, source = install_sh_venv(tmp_path)
    (source / "install.sh").unlink()
    source.rmdir()
    hint = installation(prefix, BASE, prefix / "lib", "").add_extra("server")
    assert hint == (
        f"./install.sh --with server (in flashmark's source folder: {source}, which "
        "installed it, is gone)"
    )


def test_a_venv_installs_the_extra_from_the_wheel_it_was_installed_from(tmp_path):
    wheel = tmp_path / "flashmark-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    prefix = venv(tmp_path)
    found = installation(prefix, BASE, prefix / "lib", wheel_url(wheel))
    assert found.kind is InstallKind.VENV
    assert found.add_extra("server") == (
        f"{prefix}/bin/python -m pip install 'flashmark[server] @ {wheel.as_uri()}'"
    )


def test_a_venv_from_an_index_or_from_a_wheel_that_is_gone_asks_the_index(tmp_path):
    prefix = venv(tmp_path)
    expected = f"{prefix}/bin/python -m pip install 'flashmark[fleet]'"
    assert installation(prefix, BASE, prefix / "lib", "").add_extra("fleet") == expected
    gone = wheel_url(tmp_path / "flashmark-0.1.0-py3-none-any.whl")
    assert installation(prefix, BASE, prefix / "lib", gone).add_extra("fleet") == expected


def test_an_editable_install_adds_the_extra_to_its_source_folder(tmp_path):
    prefix = venv(tmp_path)
    source = tmp_path / "src dir"
    found = installation(prefix, BASE, prefix / "lib", folder_url(source, editable=True))
    assert found.add_extra("server") == (
        f"{prefix}/bin/python -m pip install -e '{source}[server]'"
    )


def test_pipx_installs_again_with_the_extra(tmp_path):
    wheel = tmp_path / "flashmark-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    prefix = tmp_path / ".local" / "share" / "pipx" / "venvs" / "flashmark"
    found = installation(prefix, BASE, prefix / "lib", wheel_url(wheel))
    assert found.kind is InstallKind.PIPX
    assert found.add_extra("server") == (
        f"pipx install --force 'flashmark[server] @ {wheel.as_uri()}'"
    )


DEBIAN_MODULE = Path("/usr/lib/python3/dist-packages/flashmark/install_hint.py")


def os_release(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "os-release"
    path.write_text(text)
    return path


def test_debian_s_package_installs_the_extra_s_package_made_beside_it(tmp_path):
    """flashmark's packages are in no archive: apt installs the file dpkg-buildpackage made."""
    trixie = os_release(tmp_path, 'PRETTY_NAME="Debian GNU/Linux 13"\nVERSION_ID="13"\nID=debian\n')
    found = installation(BASE, BASE, DEBIAN_MODULE, "", trixie)
    assert found.kind is InstallKind.DEBIAN and found.debian_release == 13
    assert found.add_extra("server") == (
        "sudo apt install ./flashmark-server_*_all.deb "
        "(in the folder where dpkg-buildpackage made flashmark's packages)"
    )
    assert found.add_extra("fleet").startswith("sudo apt install ./flashmark-fleet_*_all.deb ")
    for unknown in ("ID=debian\n", 'ID=ubuntu\nVERSION_ID="24.04"\n', None):
        path = tmp_path / "absent" if unknown is None else os_release(tmp_path, unknown)
        other = installation(BASE, BASE, DEBIAN_MODULE, "", path)
        assert other.debian_release is None  # testing, another system, no file: apt's way
        assert other.add_extra("server") == found.add_extra("server")


def test_on_debian_12_the_debian_package_is_told_to_use_install_sh(tmp_path):
    """Debian 12's Starlette, uvicorn, psycopg-pool and ansible-core are too old for the
    extras' packages (debian/control); Raspberry Pi OS shares Debian's numbers."""
    for text in ('ID=debian\nVERSION_ID="12"\n', "ID=raspbian\nVERSION_ID=12\n"):
        found = installation(BASE, BASE, DEBIAN_MODULE, "", os_release(tmp_path, text))
        assert found.debian_release == 12
        assert found.add_extra("server") == (
            "./install.sh --with server (in flashmark's source folder: Debian 12's packages "
            "are too old for flashmark-server)"
        )


def test_a_python_of_its_own_uses_its_own_pip(tmp_path):
    found = installation(tmp_path, tmp_path, tmp_path / "lib", "")
    assert found.kind is InstallKind.SYSTEM
    assert found.add_extra("fleet").endswith(f"{sys.executable} -m pip install 'flashmark[fleet]'")
