"""Plans for raw block devices: what runs on a device, read-only or with --destructive."""

from __future__ import annotations

import pytest

from tests.bench.synthetic import DEVICE, plan_of


@pytest.mark.parametrize("destructive", [False, True])
@pytest.mark.parametrize("profile", ["standard", "full"])
def test_a_device_gets_no_workloads_and_is_told_why(profile, destructive):
    # A destructive full run on a device used to measure every test and then stop with an
    # internal error at the workloads, which need a folder: the whole result was lost.
    plan = plan_of(profile, DEVICE, destructive=destructive)
    assert plan.workloads == ()
    assert any("workloads skipped" in warning for warning in plan.warnings)
    assert any(spec.writes for spec in plan.tests) is destructive
