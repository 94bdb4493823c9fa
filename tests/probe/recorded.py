"""Recorded scenarios: a SystemRoots over tests/data/probe/<scenario> and a fake tool runner.

Its tool runner (flashmark.probe.tools.RecordedToolRunner) answers with the scenario's
recorded outputs in tools/ and says "not installed" for anything else.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from flashmark.probe.tools import RecordedToolRunner
from flashmark.system.sysroot import SystemRoots

DATA = Path(__file__).resolve().parent.parent / "data" / "probe"


def roots_of(name: str) -> SystemRoots:
    base = DATA / name
    return SystemRoots(sysfs=base / "sys", procfs=base / "proc", debugfs=base / "debug")


def tree_roots(tree: Path) -> SystemRoots:
    """A SystemRoots over a recorded tree (or a copy of one), its recorded tool outputs too."""
    return SystemRoots(tree / "sys", tree / "proc", tree / "debug", tools=tree / "tools")


def copied_tree(name: str, folder: Path) -> Path:
    """A copy of the recorded tree `name` at `folder`, to change one condition in."""
    shutil.copytree(DATA / name, folder, symlinks=True)
    return folder


Scenario = Callable[[str], tuple[SystemRoots, RecordedToolRunner]]


def load_scenario(name: str) -> tuple[SystemRoots, RecordedToolRunner]:
    assert (DATA / name).is_dir(), f"no recorded scenario {name}"
    return roots_of(name), RecordedToolRunner(DATA / name / "tools")


def recorded_machine(name: str) -> dict[str, str]:
    """The environment that points `flashmark` at the recorded machine tests/data/probe/NAME:
    its sysfs, procfs and debugfs (its tools are this machine's)."""
    base = DATA / name
    return {
        "FLASHMARK_SYSFS_ROOT": str(base / "sys"),
        "FLASHMARK_PROCFS_ROOT": str(base / "proc"),
        "FLASHMARK_DEBUGFS_ROOT": str(base / "debug"),
    }


def tree_env(tree: Path, db: Path) -> dict[str, str]:
    """The environment that points a `flashmark` command at a recorded tree (or a copy of
    one): its sysfs, procfs, debugfs and tool outputs, and the history `db`."""
    return {
        "FLASHMARK_SYSFS_ROOT": str(tree / "sys"),
        "FLASHMARK_PROCFS_ROOT": str(tree / "proc"),
        "FLASHMARK_DEBUGFS_ROOT": str(tree / "debug"),
        "FLASHMARK_TOOLS_ROOT": str(tree / "tools"),
        "FLASHMARK_DB": str(db),
    }
