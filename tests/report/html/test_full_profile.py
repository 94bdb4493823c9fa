"""The block-size sweep and the device's activity, from a real fio run of the full profile.

No recording holds a full profile, and replayed runs record no device activity (the device is
watched for no time), so this measures: `flashmark run --profile full` in a temporary folder
with real fio, no workloads, 2 s per test and no ramp (`--ramp 0`: 38 tests, about 90 s
instead of 2 min with the profile's 2 s ramp). The figures are whatever this machine's disk
does; only the report's shape is checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flashmark.bench.document import document_to_run
from flashmark.bench.profiles import SWEEP_BLOCK_SIZES, get_profile
from flashmark.bench.render import charts
from flashmark.bench.render.describe import legend_label
from flashmark.bench.sustained import SUSTAINED_WRITE_NAME
from flashmark.references.loader import find_reference
from flashmark.system.diskstats import device_for_path
from flashmark.system.sysroot import SystemRoots
from flashmark.units import block_size_label
from tests.cli_runner import flashmark
from tests.report.html.conftest import REFERENCE_OPTIONS, REFERENCE_SLUGS
from tests.report.html.page import Page

pytestmark = pytest.mark.fio


# Each test runs long enough for two samples of its device activity (one a second): a chart.
RUNTIME_S = 2


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path]:
    base = tmp_path_factory.mktemp("full-profile")
    folder = base / "card"
    folder.mkdir()
    db = base / "history.sqlite3"
    done = flashmark(
        "run", str(folder), "--profile", "full", "--runtime", str(RUNTIME_S), "--ramp", "0",
        "--size", "32M", "--workload-scale", "0", "--json", env={"FLASHMARK_DB": str(db)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads(done.stdout)
    assert document["settings"]["ramp_s"] == 0
    return db, document, folder


@pytest.fixture(scope="module")
def page(cli, full_run, tmp_path_factory: pytest.TempPathFactory) -> Page:
    db, document, _ = full_run
    path = tmp_path_factory.mktemp("full-report") / "report.html"
    arguments = [str(document["id"]), "-o", str(path), *REFERENCE_OPTIONS]
    result = CliRunner().invoke(cli, ["report", *arguments], env={"FLASHMARK_DB": str(db)})
    assert result.exit_code == 0, result.output
    return Page(path.read_text(encoding="utf-8"))


def test_the_sweep_has_a_curve_per_pattern_over_every_block_size(page, full_run):
    _, document, _ = full_run
    # Each run is named by what was measured (its folder and device), as in every chart.
    label = legend_label(document_to_run(document), 0)
    assert label.startswith(f"#{document['id']} ")
    sweeps = {chart.title: chart for chart in page.charts if chart.title.startswith("Sweep")}
    assert set(sweeps) == {"Sweep, read: MB/s by block size", "Sweep, write: MB/s by block size"}
    sandisk = find_reference(REFERENCE_SLUGS[0])
    for chart in sweeps.values():
        assert chart.legend[:2] == [f"{label} random", f"{label} sequential"]
        # seed 002 published 1k, 4k and 16k random figures: drawn as published points, the
        # card named in full
        assert f"published random: {sandisk.name}" in chart.legend, chart.legend
    names = {test["name"] for test in document["tests"]}
    for size in SWEEP_BLOCK_SIZES:
        assert f"rand-read-{block_size_label(size)}" in names


def test_sweep_points_are_the_depth_1_tests(full_run):
    _, document, _ = full_run
    from flashmark.bench.document import document_to_run
    from flashmark.bench.model import Pattern

    run = document_to_run(document)
    points = charts.sweep_points(run, Pattern.RAND_WRITE)
    assert [size for size, _, _ in points] == sorted(SWEEP_BLOCK_SIZES)
    sequential = charts.sweep_points(run, Pattern.SEQ_READ)
    assert [name for _, _, name in sequential if name == "seq-read"] == ["seq-read"]  # 1M q1
    assert "seq-read-q8" not in [name for _, _, name in sequential]


def test_device_activity_is_drawn_for_every_test(page, full_run):
    _, document, folder = full_run
    if device_for_path(folder, SystemRoots()) is None:
        pytest.skip(f"{folder} is on no block device (tmpfs?): no device activity to draw")
    run = document_to_run(document)
    titles = {chart.title for chart in page.charts}
    for test in get_profile("full").test_names():
        result = run.test(test)
        assert result is not None and result.monitor is not None, test
        if test == SUSTAINED_WRITE_NAME and len(result.monitor.samples) < 2:
            # It stops when the test area is written: on this 32 MiB area, within one interval
            # of the monitor, and a chart needs two samples (charts.monitor_chart).
            assert f"{test}: device I/O each 1 s" not in titles
            continue
        assert f"{test}: device I/O each 1 s" in titles
    # every chart of the page is accounted for
    assert page.all("body")[0].attributes["data-charts"] == str(len(page.charts))
