"""The hostile tier: one lab per engine (a real `flashmark serve` on SQLite, and on a throwaway
PostgreSQL); the cases pytest selected (after -k) run on first use, both engines at once (most
of a case is waiting: for a process, a restart, a timeout), then each test reports its own case.

    python -m pytest -m hostile tests/server/hostile
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from tests.server.throwaway_pg import missing_reason


@pytest.fixture(scope="session")
def hostile_outcomes(request: pytest.FixtureRequest) -> Iterator[Callable[[str], Any]]:
    """`hostile_outcomes(engine)`: the outcomes of every selected case on that engine."""
    pytest.importorskip("starlette", reason="the server extra is not installed")
    pytest.importorskip("psutil", reason="the hostile tier follows processes with psutil")
    from tests.server.hostile import harness

    selected: dict[str, list[Any]] = {}
    for item in request.session.items:
        if item.get_closest_marker("hostile") is None or not hasattr(item, "callspec"):
            continue
        params = item.callspec.params
        selected.setdefault(params["engine"], []).append(params["case"])

    def run(engine: str) -> dict[str, Any]:
        with harness.Lab(engine) as lab:
            return lab.run(selected[engine])

    running: dict[str, Future[dict[str, Any]]] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:

        def outcomes(engine: str) -> dict[str, Any]:
            if engine == "postgres" and (reason := missing_reason()):
                if os.environ.get("CI") == "true":  # CI installs PostgreSQL: never skip there
                    pytest.fail(reason)
                pytest.skip(reason)
            if not running:
                for name in selected:
                    if name == "sqlite" or not missing_reason():
                        running[name] = pool.submit(run, name)
            return running[engine].result()

        yield outcomes
