"""The fault-injection tier: one lab (emulated devices, scratch space) for the session; the
cases pytest selected (after -k) run together, a few at a time, then each test reports its own
case.

    FLASHMARK_FAULTS_SEED=8 FLASHMARK_FAULTS_COUNT=110 FLASHMARK_FAULTS_WORKERS=6 \
        python -m pytest -m faults tests/cli/faults
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict
from typing import Any

import pytest

from tests.cli.faults import cases as c


def _run_lab(selected: list[Any]) -> dict[str, Any]:
    from tests.cli.faults import harness

    reason = harness.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":  # CI is root with every tool: a skip would hide
            pytest.fail(f"the fault tier cannot run: {reason}")
        pytest.skip(reason)
    workers = int(os.environ.get("FLASHMARK_FAULTS_WORKERS", harness.DEFAULT_WORKERS))
    with harness.Lab(workers=workers, seed=c.configured_seed()) as lab:
        result: dict[str, Any] = lab.run(selected)
        return result


@pytest.fixture(scope="session")
def outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> dict[str, Any]:
    """Run every selected case of the tier at once (all categories share the workers, the
    long ones first), on first use; each test then reports its own case. Under pytest-xdist
    every worker sees the whole selection and may be handed some of its tests: the first
    worker runs the lab and leaves the outcomes beside the workers' temporary folders, the
    others wait for them and read them, so the tier runs once."""
    pytest.importorskip("psutil", reason="the fault tier follows processes with psutil")
    from tests.cli.faults.harness import Outcome

    selected = [
        item.callspec.params["case"]
        for item in request.session.items
        if item.get_closest_marker("faults") is not None
        and hasattr(item, "callspec")
        and "case" in item.callspec.params
    ]
    if worker_id == "master":
        return _run_lab(selected)
    shared = tmp_path_factory.getbasetemp().parent / "fault-outcomes.json"
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if shared.exists():
            saved = json.loads(shared.read_text())
            if "skip" in saved:
                pytest.skip(saved["skip"])
            return {key: Outcome(**value) for key, value in saved["outcomes"].items()}
        try:
            result = _run_lab(selected)
        except pytest.skip.Exception as skipped:
            shared.write_text(json.dumps({"skip": str(skipped)}))
            raise
        shared.write_text(
            json.dumps({"outcomes": {key: asdict(value) for key, value in result.items()}})
        )
        return result
