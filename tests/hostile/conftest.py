"""The hostile tier: one lab per engine (a real `flashmark serve` on SQLite, and on a throwaway
PostgreSQL); the cases pytest selected (after -k) run together on first use, then each test
reports its own case.

    python -m pytest -m hostile tests/hostile
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.server.throwaway_pg import missing_reason


@pytest.fixture(scope="session")
def hostile_outcomes(request: pytest.FixtureRequest) -> Iterator[Callable[[str], Any]]:
    """`hostile_outcomes(engine)`: the outcomes of every selected case on that engine."""
    pytest.importorskip("starlette", reason="the server extra is not installed")
    pytest.importorskip("psutil", reason="the hostile tier follows processes with psutil")
    from tests.hostile import cases, harness

    done: dict[str, dict[str, Any]] = {}

    def outcomes(engine: str) -> dict[str, Any]:
        if engine not in done:
            if engine == "postgres" and (reason := missing_reason()):
                if os.environ.get("CI") == "true":  # CI installs PostgreSQL: never skip there
                    pytest.fail(reason)
                pytest.skip(reason)
            selected = [
                item.callspec.params["case"]
                for item in request.session.items
                if item.get_closest_marker("hostile") is not None
                and hasattr(item, "callspec")
                and item.callspec.params.get("engine") == engine
            ]
            selected = [case for case in selected if engine in cases.engines_of(case)]
            with harness.Lab(engine) as lab:
                done[engine] = lab.run(selected)
        return done[engine]

    yield outcomes
