"""One fleet for the whole module: six boards on this machine, each a local Ansible host with
its own emulated card (tests/fleet/lab.py), and a results service on a throwaway PostgreSQL.
`flashmark fleet run` runs once; the tests read what it printed and what the service holds."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from flashmark.bench.disturbance import WAIT_BUDGET_ENV
from tests.emulation.throttle import DeviceCaps
from tests.fleet.lab import Board, FleetLab
from tests.server.throwaway_pg import ThrowawayPostgres, missing_reason

CAMPAIGN = "lab-2026.11"
# Short tests on a small area (a second of ramp, two measured): each figure within 1-2% of its
# card's cap even with six boards on two loaded CPUs, where the outlier is 50% off.
BENCHMARK = ("--profile", "quick", "--size", "4M", "--runtime", "2", "--ramp", "1")
CARD = {"read_iops": 800, "write_iops": 400, "read_bps": 20_000_000, "write_bps": 10_000_000}
SLOW = {**CARD, "write_iops": 200}  # random writes at half the speed: a worn or fake card
BOARDS = (
    Board("board-01", DeviceCaps("card", **CARD), fresh=True),
    Board("board-02", DeviceCaps("card", **CARD)),
    Board("board-03", DeviceCaps("card", **CARD)),
    Board("board-04", DeviceCaps("slow card", **SLOW)),
    Board("board-05", DeviceCaps("failing card", **CARD), fails_at="rand-read-4k"),
    Board("board-06", DeviceCaps("card", **CARD), fio_version="fio-3.99"),
)


@dataclass
class Fleet:
    lab: FleetLab
    run: subprocess.CompletedProcess[str]  # the first `flashmark fleet run`


@pytest.fixture(scope="module")
def fleet() -> Iterator[Fleet]:
    reason = missing_reason()
    if reason:
        if os.environ.get("CI") == "true":  # CI installs PostgreSQL: never skip there
            pytest.fail(reason)
        pytest.skip(reason)
    with (
        # The campaign judges each board's figures against its card's caps: the boards' runs
        # wait for a quiet host as flashmark does (tests/conftest.py).
        pytest.MonkeyPatch.context() as patch,
        ThrowawayPostgres(["fsync=off", "synchronous_commit=off"]) as postgres,
        FleetLab(BOARDS, postgres) as lab,
    ):
        patch.delenv(WAIT_BUDGET_ENV, raising=False)
        run = lab.fleet(CAMPAIGN, *BENCHMARK)
        yield Fleet(lab, run)
