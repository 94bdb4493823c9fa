"""Fixtures of the HTML report's tests: real runs replayed from recorded fio outputs through the
CLI into a history, and the report the CLI writes from them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from flashmark.bench.document import document_to_run
from flashmark.bench.run_result import Run
from flashmark.references.loader import find_reference
from flashmark.references.records import ReferenceDevice
from tests.cli_runner import flashmark
from tests.conftest import DATA, FIO_RECORDINGS
from tests.probe.recorded import recorded_machine

# Two references with headline figures (`flashmark references` lists them): seed 002's A2
# card has 4K IOPS and 16M sequential, seed 001's microSD card 1M sequential.
REFERENCE_SLUGS = ("seed002-sandisk-extreme-pro-a2-64gb", "seed001-microsd")
REFERENCE_OPTIONS = tuple(part for slug in REFERENCE_SLUGS for part in ("--reference", slug))

# The quick run is probed under a recorded Raspberry Pi 5 with an A2 card (as tests/report's
# recorded documents are), so its result carries a card's claims and the findings.
RPI5_A2_ENV = recorded_machine("rpi5_a2")

# (recording, `flashmark run` options matching how it was recorded (see its scenario.txt),
# environment)
SCENARIOS: tuple[tuple[str, tuple[str, ...], dict[str, str]], ...] = (
    ("quick-a1-card", ("--size", "128M", "--runtime", "8"), RPI5_A2_ENV),
    (
        "standard-fast-card",
        ("--profile", "standard", "--size", "64M", "--runtime", "3", "--workload-scale", "0.01"),
        {},
    ),
    ("slow-card-deep-queue", ("--size", "32M", "--runtime", "8"), {}),
)


def replayed_run(
    folder: Path, scenario: tuple[str, tuple[str, ...], dict[str, str]], env: dict[str, str]
) -> dict[str, Any]:
    """The document of `flashmark run --json` of `folder` (made here), fio replayed from the
    scenario's recording."""
    recording, options, extra = scenario
    folder.mkdir()
    replay = {"FLASHMARK_FIO_REPLAY": str(FIO_RECORDINGS / recording), **extra}
    done = flashmark("run", str(folder), *options, "--json", env={**env, **replay})
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


@dataclass(frozen=True)
class SavedRuns:
    db: Path
    ids: tuple[int, ...]
    documents: tuple[dict[str, Any], ...]

    @property
    def runs(self) -> tuple[Run, ...]:
        return tuple(document_to_run(document) for document in self.documents)


@pytest.fixture(scope="session")
def saved_runs(tmp_path_factory: pytest.TempPathFactory) -> SavedRuns:
    """The three recordings run through `flashmark run` (fio replayed) into one history."""
    base = tmp_path_factory.mktemp("saved-runs")
    db = base / "history.sqlite3"
    env = {"FLASHMARK_DB": str(db)}
    documents = [replayed_run(base / scenario[0], scenario, env) for scenario in SCENARIOS]
    return SavedRuns(db, tuple(d["id"] for d in documents), tuple(documents))


@pytest.fixture(scope="session")
def references() -> tuple[ReferenceDevice, ...]:
    return tuple(find_reference(slug) for slug in REFERENCE_SLUGS)


@pytest.fixture(scope="session")
def report_path(
    cli: click.Group, saved_runs: SavedRuns, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """`flashmark report 1 2 3 --reference A --reference B -o DIR/report.html`."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    arguments = ["report", *map(str, saved_runs.ids), *REFERENCE_OPTIONS, "-o", str(path)]
    result = CliRunner().invoke(cli, arguments, env={"FLASHMARK_DB": str(saved_runs.db)})
    assert result.exit_code == 0, result.output
    return path


# Results of every other kind, recorded on emulated cards (tests/data/report/kinds/record.py).
KIND_DOCUMENTS = DATA / "report" / "kinds"
OTHER_KINDS = ("capacity", "monitor", "workload", "powercut")


@dataclass(frozen=True)
class MixedReport:
    """A report of every kind: a run and a surface scan of one card, and the recorded results
    of the other kinds; their ids in the history."""

    path: Path
    run_id: int
    scan_id: int
    scan: dict[str, Any]
    other_ids: dict[str, int]
    run_document: dict[str, Any]


@pytest.fixture(scope="session")
def mixed_report(cli: click.Group, tmp_path_factory: pytest.TempPathFactory) -> MixedReport:
    """`flashmark run` (fio replayed) and `flashmark surface` of a folder, both under the
    recorded Raspberry Pi 5 with its A2 card, so both name the card by its CID; then the
    other kinds' recorded results imported, and `flashmark report` of all of them."""
    base = tmp_path_factory.mktemp("mixed")
    db = base / "history.sqlite3"
    env = {"FLASHMARK_DB": str(db), **RPI5_A2_ENV}
    folder = base / "card"
    run_document = replayed_run(folder, SCENARIOS[0], env)
    scanned = flashmark("surface", str(folder), "--size", "16M", "--json", env=env)
    assert scanned.returncode == 0, scanned.stderr
    scan = json.loads(scanned.stdout)
    other_ids = {}
    for name in OTHER_KINDS:
        imported = flashmark("import", str(KIND_DOCUMENTS / f"{name}.json"), env=env)
        assert imported.returncode == 0, imported.stderr
        other_ids[name] = int(imported.stdout.split(" added as ")[1].split()[0])
    run_id = run_document["id"]
    path = base / "report.html"
    ids = [str(run_id), str(scan["id"]), *map(str, other_ids.values())]
    result = CliRunner().invoke(
        cli, ["report", *ids, "-o", str(path), "--reference", REFERENCE_SLUGS[0]], env=env
    )
    assert result.exit_code == 0, result.output
    return MixedReport(path, run_id, scan["id"], scan, other_ids, run_document)


@pytest.fixture(scope="session")
def wear_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`flashmark report` of health readings: an eMMC read three times (200 GB written, then
    a reboot: its estimate steps up) and an NVMe drive read twice, each simulated behind a copy
    of its recorded tree; its "Wear over time" part holds a chart of each."""
    import time

    from tests.health.test_health_check import SimulatedEmmc, SimulatedNvme
    from tests.probe.recorded import tree_env
    from tests.report.test_health_wear import record, report

    base = tmp_path_factory.mktemp("wear")
    db = base / "history.sqlite3"
    emmc = SimulatedEmmc(base / "emmc", bytes_per_life=3e12, worn=0.05, now=time.time())
    emmc_env = tree_env(emmc.folder, db)
    ids = []
    for step in range(3):
        if step == 2:
            emmc.reboot(time.time())
        emmc.publish(time.time())
        ids.append(record(emmc_env))
        emmc.write(100e9)
    drive = SimulatedNvme(base / "nvme", bytes_per_percent=300e9)
    for _ in range(2):
        drive.publish()
        ids.append(record(tree_env(base / "nvme", db)))
        drive.written += 500e9
    path = base / "report.html"
    charts = report(emmc_env, ids, path)[0].charts
    assert [chart.classes for chart in charts] == ["pygal-chart wear-chart"] * 2
    return path
