"""Fixtures of the probe tests: recorded scenarios (see recorded.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.probe.recorded import DATA, Scenario, load_scenario


@pytest.fixture
def probe_data() -> Path:
    return DATA


@pytest.fixture
def scenario() -> Scenario:
    return load_scenario
