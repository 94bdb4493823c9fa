"""The one way the probe runs external tools (nvme, smartctl, vcgencmd, dmesg).

Everything else receives a `ToolRunner`; tests pass a fake that returns recorded outputs.
The subprocess implementation follows the project's hygiene rules: argv lists (no shell),
LC_ALL=C so outputs parse the same everywhere, a timeout, and kill-and-reap on any exception.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from flashmark.errors import EnvironmentProblem
from flashmark.system.sysroot import SystemRoots

DEFAULT_TIMEOUT_S = 10.0


class ToolNotAvailable(EnvironmentProblem):
    """The tool is not installed (or not allowed here); the probe notes it and goes on."""


class ToolFailed(EnvironmentProblem):
    """The tool ran but failed or timed out; the message quotes its stderr."""


@dataclass(frozen=True)
class ToolResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


class ToolRunner(Protocol):
    def run(
        self, argv: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S, *, check: bool = True
    ) -> ToolResult:
        """Run argv; raise ToolNotAvailable or ToolFailed (a timeout, or a non-zero exit when
        `check`: a tool whose exit status is a bit field, as smartctl's, is read with
        check=False)."""
        ...


class SubprocessToolRunner:
    """Runs tools found on PATH with LC_ALL=C, a timeout, and cleanup on every exit path."""

    def run(
        self, argv: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S, *, check: bool = True
    ) -> ToolResult:
        if not argv:
            raise ValueError("empty argv")
        executable = shutil.which(argv[0])
        if executable is None:
            raise ToolNotAvailable(f"{argv[0]} is not installed (not found on PATH)")
        environment = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        command = (executable, *argv[1:])
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            text=True,
            errors="replace",
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired as error:
            process.kill()
            process.communicate()
            raise ToolFailed(f"{' '.join(argv)} did not finish within {timeout_s:g} s") from error
        except BaseException:
            process.kill()
            process.communicate()
            raise
        result = ToolResult(tuple(argv), process.returncode, stdout, stderr)
        if check and process.returncode != 0:
            detail = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
            raise ToolFailed(f"{' '.join(argv)} exited with {process.returncode}: {detail}")
        return result


class RecordedToolRunner:
    """Answers with a recorded tree's outputs: `folder`/<argv joined by "_", "/" as "_">.txt
    (`nvme smart-log /dev/nvme0` is nvme_smart-log_dev_nvme0.txt); a tool without one is
    "not installed"."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: list[tuple[str, ...]] = []

    def run(
        self, argv: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S, *, check: bool = True
    ) -> ToolResult:
        self.calls.append(tuple(argv))
        name = "_".join(argv).replace("/", "_").replace("__", "_") + ".txt"
        path = self.folder / name
        if not path.is_file():
            raise ToolNotAvailable(f"{argv[0]} is not among the recorded tree's tool outputs")
        return ToolResult(tuple(argv), 0, path.read_text(encoding="utf-8"), "")


class NoToolRunner:
    """Used when the roots are a recorded tree: live tools would describe another machine."""

    def __init__(self, reason: str = "the system roots are a recorded tree") -> None:
        self.reason = reason

    def run(
        self, argv: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S, *, check: bool = True
    ) -> ToolResult:
        raise ToolNotAvailable(f"{argv[0]} not run: {self.reason}")


def tool_runner_for(roots: SystemRoots) -> ToolRunner:
    """The tools that describe the machine `roots` read: this one's, a recorded tree's
    (FLASHMARK_TOOLS_ROOT), or none for a recorded tree without them."""
    if roots.tools is not None:
        return RecordedToolRunner(roots.tools)
    return SubprocessToolRunner() if roots.is_live else NoToolRunner()
