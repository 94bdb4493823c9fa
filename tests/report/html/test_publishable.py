"""A report a reviewer would publish: four defects it once had, each held by a test.

- each run keeps one colour in every chart (the device-activity charts lost it: pygal numbers
  right-axis series after the left-axis ones, whatever order they were added in);
- every axis contains its data (latency charts cut their top points);
- printed values never run into each other ("20002000" over narrow bars);
- each run is named by what was measured, target and device, not by the host's disk alone.

Inputs: the two recorded runs of tests/report and a real full-profile run on a VM's disk
(tests/data/report/full-vm-disk.json: a sweep and device activity), the latter twice under
another id and folder, so that two runs have activity charts; and two published references.
The checks read the geometry pygal wrote into each SVG (tests/report/html/svg.py); the charts
scale as a whole, so what holds in the viewBox holds at a phone's width and a laptop's.
"""

from __future__ import annotations

import dataclasses

import pytest
from markupsafe import escape

from flashmark.bench.document import document_to_run
from flashmark.bench.render import charts, describe
from flashmark.bench.run_result import Run
from flashmark.references.records import ReferenceDevice
from flashmark.report.html import render_html_report
from tests.report.html.page import Page
from tests.report.html.svg import ChartGeometry, chart_figures, geometry
from tests.report.recorded import DOCUMENT_NAMES, load_document

# half a unit: pygal writes coordinates rounded to six decimals, from float arithmetic
TOLERANCE = 0.5


def publishable_runs() -> list[Run]:
    """The two recorded runs and the full-profile run twice (see the module docstring)."""
    recorded = [document_to_run(load_document(name)) for name in DOCUMENT_NAMES]
    full = document_to_run(load_document("full-vm-disk"))
    elsewhere = dataclasses.replace(full.target, given="/srv/other", folder="/srv/other")
    return [*recorded, full, dataclasses.replace(full, id=4, target=elsewhere)]


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return publishable_runs()


@pytest.fixture(scope="module")
def page(runs: list[Run], references: tuple[ReferenceDevice, ...]) -> str:
    return render_html_report(runs, references)


@pytest.fixture(scope="module")
def geometries(page: str) -> list[ChartGeometry]:
    return [geometry(svg, legend) for svg, legend in chart_figures(page)]


def _run_of(label: str, runs: list[Run]) -> int | None:
    """Which run a legend entry names ("#3 card on vda read IOPS"), by its legend label."""
    found = [
        index
        for index, run in enumerate(runs)
        if label == charts.run_label(run, index)
        or label.startswith(charts.run_label(run, index) + " ")
    ]
    return found[0] if found else None


def test_each_run_keeps_its_colour_in_every_chart(runs, geometries):
    seen: dict[int, set[str]] = {}
    activity_with_two_runs = 0
    for chart in geometries:
        in_chart = set()
        assert chart.legend, chart.title
        for entry in chart.legend:
            # the key under the chart has the colour its series is drawn in
            assert entry.key_colour == entry.drawn_colour, (chart.title, entry)
            index = _run_of(entry.label, runs)
            if index is not None:
                seen.setdefault(index, set()).add(entry.drawn_colour)
                in_chart.add(index)
        if "device I/O" in chart.title and len(in_chart) >= 2:
            activity_with_two_runs += 1
    assert activity_with_two_runs > 0, "no activity chart compares two runs: nothing was checked"
    assert set(seen) == set(range(len(runs)))
    for index, colours in seen.items():
        assert colours == {charts.run_colour(index).lower()}, runs[index].id


def test_each_run_has_the_colour_of_its_verdict_card(runs, page):
    cards = [e for e in Page(page).elements if e.tag == "article"]
    for index, card in enumerate(cards):
        assert f"--run: {charts.run_colour(index)}" in card.attributes["style"]


def test_every_axis_contains_its_data(geometries):
    checked = 0
    for chart in geometries:
        plot = chart.plot
        for x, y in chart.points:
            checked += 1
            assert plot.left - TOLERANCE <= x <= plot.right + TOLERANCE, (chart.title, x)
            assert plot.top - TOLERANCE <= y <= plot.bottom + TOLERANCE, (chart.title, y)
    assert checked > 1000


def test_log_axes_end_on_a_step_beyond_the_data():
    # a p99.99 just under 100 ms: the axis goes on to 200 ms, so the dot is not on the edge
    assert charts._log_ends([40_000, 99_000_000]) == (20_000, 200_000_000)


def test_printed_values_never_overlap(geometries):
    printed = 0
    for chart in geometries:
        for labels in (chart.values, chart.x_labels, chart.y_labels):
            printed += len(labels)
            for i, first in enumerate(labels):
                for second in labels[i + 1 :]:
                    assert not first.box.overlaps(second.box), (chart.title, first, second)
    assert printed > 0


def test_the_overlap_check_sees_values_printed_side_by_side(monkeypatch, runs):
    """The control: the same chart with values forced onto bars too narrow for them."""
    monkeypatch.setattr(charts, "_values_fit", lambda texts, groups, bars: True)
    many = [dataclasses.replace(runs[1], id=n) for n in range(1, 7)]
    chart = charts.headline_chart(many, charts.HEADLINES[1])
    assert chart is not None
    values = geometry(chart.svg).values
    assert any(a.box.overlaps(b.box) for i, a in enumerate(values) for b in values[i + 1 :])


def test_runs_are_named_by_target_and_device(runs, page):
    parsed = Page(page)
    for index, run in enumerate(runs):
        label = describe.run_label(run, index)
        assert describe.target_text(run) in label
        device = describe.measured_device(run)
        assert device and device in label
        # the verdict card's heading, after the colour swatch
        assert f'<span class="swatch"></span>{escape(label)}</h3>' in page
    # two runs on one disk in two folders read as two things
    assert describe.run_label(runs[2], 2) != describe.run_label(runs[3], 3)
    legends = {entry for chart in parsed.charts for entry in chart.legend}
    for index, run in enumerate(runs):
        short = charts.run_label(run, index)
        assert any(entry.startswith(short) for entry in legends)
        assert " on " in short  # the target's folder on the device


def test_references_are_cited_by_title_author_and_year(page, references):
    assert ".txt" not in page
    for reference in references:
        assert str(escape(reference.source.citation)) in page
