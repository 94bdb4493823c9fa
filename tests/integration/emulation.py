"""Running the real flashmark CLI inside an emulated device's throttle (tests and benchmarks)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from flashmark.emulated import EmulatedDevice


def flashmark_json(device: EmulatedDevice, *args: str, timeout: float = 600) -> dict[str, Any]:
    """`flashmark run ARGS --json --no-save` inside the device's cgroup; the parsed document."""
    argv = [sys.executable, "-m", "flashmark", "run", *args, "--json", "--no-save"]
    done = subprocess.run(device.command(argv), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"flashmark failed ({done.returncode}): {done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def headline(document: dict[str, Any], test: str, direction: str, metric: str) -> float:
    entry = next(t for t in document["tests"] if t["name"] == test)
    return float(entry[direction][metric])
