"""A board without internet gets flashmark from a folder of wheels (docs/fleet.md): no wheel
from the controller (flashmark_wheel empty), pip told `--no-index --find-links DIR`, where DIR
holds flashmark's wheel and its dependencies for the board's architecture (`pip download`),
made beforehand on a machine with internet. Two boards of this machine, one of them fresh, on
a service with SQLite."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flashmark.fleet.wheel import build_running_wheel
from tests.emulation.throttle import DeviceCaps
from tests.fleet.conftest import BENCHMARK, CARD
from tests.fleet.lab import Board, FleetLab
from tests.release.test_wheel import pypi_unreachable_reason

pytestmark = [pytest.mark.root, pytest.mark.fio, pytest.mark.ansible, pytest.mark.wheel]
BOARDS = (
    Board("board-01", DeviceCaps("card", **CARD), fresh=True),
    Board("board-02", DeviceCaps("card", **CARD)),
)


def test_a_board_without_internet_installs_flashmark_from_a_folder_of_wheels(tmp_path: Path):
    reason = pypi_unreachable_reason()
    if reason:
        pytest.skip(reason)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = build_running_wheel(wheels)
    downloaded = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
         "--dest", str(wheels), str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert downloaded.returncode == 0, downloaded.stderr
    pip_args = ["--no-index", "--find-links", str(wheels)]
    with FleetLab(BOARDS) as lab:
        run = lab.fleet(
            "offline", *BENCHMARK, "-e", "flashmark_wheel=",
            "-e", json.dumps({"flashmark_pip_args": pip_args}),
        )  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        lines = run.stdout.splitlines()
        assert sorted(line.split()[0] for line in lines[:-1]) == ["board-01", "board-02"]
        assert all(line.split()[1] == "uploaded" for line in lines[:-1]), run.stdout
        assert lab.installed is not None
        shown = subprocess.run(
            [str(lab.installed / "bin" / "python"), "-c",
             "import flashmark, importlib.metadata as m; print(flashmark.__version__); "
             "print(m.distribution('flashmark').read_text('direct_url.json'))"],
            capture_output=True, text=True, timeout=60, check=True,
            env={"PATH": "/usr/bin:/bin"},
        )  # fmt: skip
    version, origin = shown.stdout.splitlines()
    assert version == wheel.name.split("-")[1]
    assert origin == "None"  # from the folder as an index, not a file named on the command line
