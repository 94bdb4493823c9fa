"""Plans for raw block devices: what runs on a device, read-only or with --destructive."""

from __future__ import annotations

import pytest

from flashmark.bench.plan import default_settings, plan_tests
from flashmark.bench.profiles import PROFILES
from tests.bench.test_sustained import DEVICE


@pytest.mark.parametrize("destructive", [False, True])
@pytest.mark.parametrize("profile", ["standard", "full"])
def test_a_device_gets_no_workloads_and_is_told_why(profile, destructive):
    # A destructive full run on a device used to measure every test and then stop with an
    # internal error at the workloads, which need a folder: the whole result was lost.
    chosen = PROFILES[profile]
    settings = default_settings(
        chosen, size_bytes=None, runtime_s=None, buffered=False, destructive=destructive
    )
    plan = plan_tests(chosen, settings, DEVICE, log_folder="/tmp/flashmark-fio-abc123")
    assert plan.workloads == ()
    assert any("workloads skipped" in warning for warning in plan.warnings)
    assert any(spec.writes for spec in plan.tests) is destructive
