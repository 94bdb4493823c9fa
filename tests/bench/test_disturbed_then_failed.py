"""A test measured while another process disturbed it is kept, flagged, when the device fails
while it is measured again: a measured result is never lost to a later failure (measure.py)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from flashmark.bench import measure
from flashmark.bench.model import DisturbanceStatus
from flashmark.errors import DeviceFailed
from tests.cli_runner import flashmark

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None, reason="needs the fio binary"),
]


def test_a_disturbed_test_is_kept_when_its_second_measurement_fails(tmp_path, monkeypatch):
    judged = measure._DeviceWatch.judged
    runs: list[str] = []

    def disturbed_first(self: Any, check: Any, retries: int, settings: Any) -> Any:
        """The first run of seq-write as another process writing beside it would leave it."""
        verdict = judged(self, check, retries, settings)
        if verdict is None or retries > 0:
            return verdict
        return dataclasses.replace(
            verdict,
            status=DisturbanceStatus.DISTURBED,
            reason="another process wrote 3.10 MB/s to vda during seq-write",
            device=verdict.device or "vda",
        )

    measure_test = measure._measure_test

    def failing_again(test_runs: Any, *args: Any) -> Any:
        runs.append(test_runs.spec.name)
        if len(runs) == 2:  # the disturbed seq-write, measured again: the device fails
            raise DeviceFailed("seq-write: I/O error: the device may be failing (see dmesg)")
        return measure_test(test_runs, *args)

    monkeypatch.setattr(measure._DeviceWatch, "judged", disturbed_first)
    monkeypatch.setattr(measure._DeviceWatch, "again", lambda self, d, p: True)
    monkeypatch.setattr(measure, "_measure_test", failing_again)
    folder = tmp_path / "card"
    folder.mkdir()
    done = flashmark("run", folder, "--profile", "a1", "--size", "8M", "--runtime", "1",
                     "--ramp", "0", "--quiet")  # fmt: skip
    assert runs == ["seq-write", "seq-write"]
    assert done.returncode != 0 and "device may be failing" in done.stderr
    shown = flashmark("show", "1", "--json")
    assert shown.returncode == 0, shown.stderr
    document: dict[str, Any] = json.loads(shown.stdout)
    (kept,) = document["tests"]
    assert kept["name"] == "seq-write" and kept["disturbance"]["status"] == "disturbed"
    assert document["partial"] is not None
    assert list(Path(folder).iterdir()) == []  # its test file removed
