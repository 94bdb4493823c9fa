"""The fault-injection tier: one lab (emulated devices, scratch space) for the session; the
cases pytest selected (after -k) run together, a few at a time, then each test reports its own
case.

    FLASHMARK_FAULTS_SEED=8 FLASHMARK_FAULTS_COUNT=110 FLASHMARK_FAULTS_WORKERS=6 \
        python -m pytest -m faults tests/cli/faults
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.faults import cases as c


@pytest.fixture(scope="session")
def fault_lab() -> Iterator[Any]:
    pytest.importorskip("psutil", reason="the fault tier follows processes with psutil")
    from tests.cli.faults import harness

    reason = harness.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":  # CI is root with every tool: a skip would hide
            pytest.fail(f"the fault tier cannot run: {reason}")
        pytest.skip(reason)
    workers = int(os.environ.get("FLASHMARK_FAULTS_WORKERS", harness.DEFAULT_WORKERS))
    with harness.Lab(workers=workers, seed=c.configured_seed()) as lab:
        yield lab


@pytest.fixture(scope="session")
def outcomes(request: pytest.FixtureRequest, fault_lab: Any) -> dict[str, Any]:
    """Run every selected case of the tier at once (all categories share the workers, the
    long ones first), on first use; each test then reports its own case."""
    selected = [
        item.callspec.params["case"]
        for item in request.session.items
        if item.get_closest_marker("faults") is not None
        and hasattr(item, "callspec")
        and "case" in item.callspec.params
    ]
    result: dict[str, Any] = fault_lab.run(selected)
    return result
