"""Recorded scenarios: a SystemRoots over tests/data/probe/<scenario> and a fake tool runner.

The fake runner stands in for flashmark.probe.tools.SubprocessToolRunner: it answers with
the scenario's recorded outputs in tools/ and says "not installed" for anything else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from flashmark.probe.tools import DEFAULT_TIMEOUT_S, ToolNotAvailable, ToolResult
from flashmark.system.sysroot import SystemRoots

DATA = Path(__file__).resolve().parent.parent / "data" / "probe"


class RecordedToolRunner:
    """Returns tools/<argv joined by '_', '/' as '_'>.txt of the scenario; else 'not installed'."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S) -> ToolResult:
        self.calls.append(tuple(argv))
        name = "_".join(argv).replace("/", "_").replace("__", "_") + ".txt"
        path = self.folder / name
        if not path.exists():
            raise ToolNotAvailable(f"{argv[0]} is not installed (recorded scenario)")
        return ToolResult(tuple(argv), 0, path.read_text(encoding="utf-8"), "")


def roots_of(name: str) -> SystemRoots:
    base = DATA / name
    return SystemRoots(sysfs=base / "sys", procfs=base / "proc", debugfs=base / "debug")


Scenario = Callable[[str], tuple[SystemRoots, RecordedToolRunner]]


def load_scenario(name: str) -> tuple[SystemRoots, RecordedToolRunner]:
    assert (DATA / name).is_dir(), f"no recorded scenario {name}"
    return roots_of(name), RecordedToolRunner(DATA / name / "tools")
